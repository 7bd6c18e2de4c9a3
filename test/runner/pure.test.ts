/**
 * The worker's pure parts, as tables: settings from options, environment and
 * file, git's answers read into facts, and the agent's environment (what the
 * agent reads: prompt.test.ts).
 */
import { workerSettings, type WorkerFlags } from "../../src/runner/config.js";
import {
  agentEnv,
  authHeader,
  commandProgram,
  exitCodeOf,
  parseCount,
  parseStatus,
  parseUsage,
  worktreeDigest,
} from "../../src/runner/facts.js";

describe("workerSettings", () => {
  const env = { ORCHESTRA_WORKER_TOKEN: "wt" };
  const secrets: Record<string, string> = { "/t": " from-file \n", "/g": "gho_x\n", "/empty": "\n" };
  const read = (p: string) => {
    if (p in secrets) return secrets[p]!;
    throw new Error("ENOENT");
  };
  const parse = (flags: WorkerFlags, e: Record<string, string> = env, file: string | null = null) =>
    workerSettings(flags, e, file === null ? null : { path: "orchestra-worker.yml", text: file }, read);

  test("defaults with only a token and an agent", () => {
    expect(parse({ agent: "claude -p x" })).toEqual({
      ok: true,
      settings: {
        url: "http://localhost:3000",
        token: "wt",
        workdir: "./orchestra-work",
        concurrency: 1,
        agent: "claude -p x",
        test: null,
        maxRunMinutes: 60,
        idleMinutes: 15,
        graceSeconds: 10,
        pollSeconds: 15,
        once: false,
        json: false,
        verbose: false,
        githubUrl: "https://github.com",
        githubApiUrl: "https://api.github.com",
        gitToken: null,
        dispatched: false,
      },
    });
  });

  test.each<[string, WorkerFlags, Record<string, string>, string | null, Record<string, unknown>]>([
    [
      "flags win over the file",
      { concurrency: "3", agent: "a" },
      env,
      "concurrency: 2\nagent: b\n",
      { concurrency: 3, agent: "a" },
    ],
    [
      "the file fills what flags leave",
      {},
      env,
      "agent: aider\nidleMinutes: 0.5\ntest: npm test\n",
      { agent: "aider", idleMinutes: 0.5, test: "npm test" },
    ],
    [
      "the environment wins over the file",
      {},
      { ...env, ORCHESTRA_URL: "http://e:1" },
      "agent: a\nurl: http://f:2\n",
      { url: "http://e:1" },
    ],
    [
      "a flag wins over the environment",
      { url: "http://x:3/", agent: "a" },
      { ...env, ORCHESTRA_URL: "http://e:1" },
      null,
      { url: "http://x:3" },
    ],
    ["the token file wins over the environment", { tokenFile: "/t", agent: "a" }, env, null, { token: "from-file" }],
    [
      "the git token from ORCHESTRA_GIT_TOKEN",
      { agent: "a" },
      { ...env, ORCHESTRA_GIT_TOKEN: "gho_e" },
      null,
      { gitToken: "gho_e" },
    ],
    ["the git token from a file", { agent: "a", gitTokenFile: "/g" }, env, null, { gitToken: "gho_x" }],
    [
      "fractions of minutes",
      { agent: "a", maxRunMinutes: "0.5", graceSeconds: "0" },
      env,
      null,
      { maxRunMinutes: 0.5, graceSeconds: 0 },
    ],
    ["switches", { agent: "a", once: true, json: true }, env, null, { once: true, json: true }],
  ])("%s", (_what, flags, e, file, expected) => {
    const r = parse(flags, e, file);
    expect(r.ok && r.settings).toMatchObject(expected);
  });

  test.each<[string, WorkerFlags, Record<string, string>, string | null, RegExp]>([
    [
      "no token",
      { agent: "a" },
      {},
      null,
      /^no worker token: set ORCHESTRA_WORKER_TOKEN or --token-file \(register a worker with: orchestra workers add <name>\)$/,
    ],
    ["no agent", {}, env, null, /no agent command: pass --agent/],
    [
      "concurrency 0",
      { agent: "a", concurrency: "0" },
      env,
      null,
      /--concurrency must be a whole number more than 0 and at most 64, not "0"/,
    ],
    ["concurrency 1.5", { agent: "a", concurrency: "1.5" }, env, null, /--concurrency must be a whole number/],
    [
      "idle minutes not a number",
      { agent: "a", idleMinutes: "soon" },
      env,
      null,
      /--idle-minutes must be a number more than 0, not "soon"/,
    ],
    ["a URL that is not http", { agent: "a", url: "ftp://x" }, env, null, /--url must be http\(s\)/],
    ["a token in the file", {}, env, "agent: a\ntoken: oops\n", /no token in the file; set ORCHESTRA_WORKER_TOKEN/],
    ["an unknown key in the file", {}, env, "agent: a\nagnet: b\n", /orchestra-worker.yml: .*agnet/],
    ["a wrong type in the file", {}, env, "agent: a\nconcurrency: many\n", /orchestra-worker.yml: concurrency: /],
    ["a missing token file", { agent: "a", tokenFile: "/nope" }, env, null, /cannot read token file \/nope: ENOENT/],
    ["an empty token file", { agent: "a", tokenFile: "/empty" }, env, null, /token file \/empty is empty/],
  ])("refused: %s", (_what, flags, e, file, error) => {
    const r = parse(flags, e, file);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(error);
  });
});

describe("git facts", () => {
  const oid = "805ee6b74455021d12fc1c84cbca8164ed977a9e";
  const blob = "78981922613b2afb6025042ff6bd878ac1994e85";
  const branch = `# branch.oid ${oid}\0# branch.head agent/issue-12\0`;
  test.each([
    ["", null, []],
    [branch, oid, []],
    ["# branch.oid (initial)\0# branch.head main\0? a.ts\0", null, [{ code: "??", path: "a.ts" }]],
    [`${branch}1 .M N... 100644 100644 100644 ${blob} ${blob} src/a.ts\0`, oid, [{ code: " M", path: "src/a.ts" }]],
    [
      `${branch}1 A. N... 000000 100644 100644 ${"0".repeat(40)} ${blob} with space.ts\0`,
      oid,
      [{ code: "A ", path: "with space.ts" }],
    ],
    [
      `${branch}? new file.txt\0? .orchestra/task.md\0? .orchestra/decisions/d1.md\0`,
      oid,
      [{ code: "??", path: "new file.txt" }],
    ],
    [
      `${branch}2 R. N... 100644 100644 100644 ${blob} ${blob} R100 b.ts\0a.ts\0` +
        `1 .D N... 100644 100644 000000 ${blob} ${blob} c.ts\0`,
      oid,
      [
        { code: "R ", path: "b.ts" },
        { code: " D", path: "c.ts" },
      ],
    ],
    [
      `${branch}u UU N... 100644 100644 100644 100644 ${blob} ${blob} ${blob} both.ts\0`,
      oid,
      [{ code: "UU", path: "both.ts" }],
    ],
    [`${branch}? .orchestra/\0? .orchestrated.txt\0`, oid, [{ code: "??", path: ".orchestrated.txt" }]],
  ])("status %j", (z, head, entries) => expect(parseStatus(z)).toEqual({ head, entries }));

  test("the digest moves with the head, the status and the diff's stat, and counts the paths", () => {
    const e = [{ code: " M", path: "a" }];
    const d = worktreeDigest("h1", e, "1 file changed");
    expect(d).toMatch(/^1 changed [0-9a-f]{16}$/);
    expect(worktreeDigest("h1", e, "1 file changed")).toBe(d);
    expect(worktreeDigest("h2", e, "1 file changed")).not.toBe(d);
    expect(worktreeDigest("h1", [], "1 file changed")).not.toBe(d);
    expect(worktreeDigest("h1", e, "2 files changed")).not.toBe(d);
  });

  test.each([
    ["3\n", 3],
    ["0", 0],
    ["", null],
    ["fatal: bad revision", null],
  ])("count %j → %j", (text, n) => expect(parseCount(text)).toBe(n));

  test.each([
    ['claude -p "$(cat .orchestra/task.md)"', "claude"],
    ["  aider --yes --message-file .orchestra/task.md", "aider"],
    ["OPENAI_API_KEY=x FOO=1 codex exec --full-auto", "codex"],
    ["'/opt/my agent/run' --go", "/opt/my agent/run"],
    ["./scripts/agent.sh", "./scripts/agent.sh"],
    ["cd sub && make", null],
    ["exec claude", null],
    ["$AGENT run", null],
    ["(claude)", null],
    ["", null],
  ])("program of %j is %j", (command, program) => expect(commandProgram(command)).toBe(program));

  test.each([
    ['{"inputTokens": 10, "outputTokens": 5, "costUsd": 0.25}', { inputTokens: 10, outputTokens: 5, costUsd: 0.25 }],
    ['{"inputTokens": 10}', { inputTokens: 10, outputTokens: 0, costUsd: 0 }],
    ['{"costUsd": 1.5}', { inputTokens: 0, outputTokens: 0, costUsd: 1.5 }],
    ['{"inputTokens": -1, "outputTokens": 2.5}', null],
    ["not json", null],
    ["[]", null],
    [null, null],
  ])("usage %j → %j", (text, usage) => expect(parseUsage(text)).toEqual(usage));

  test.each([
    [0, null, 0],
    [3, null, 3],
    [null, "SIGTERM", 143],
    [null, "SIGKILL", 137],
  ])("exit code %j, signal %j → %j", (code, signal, expected) =>
    expect(exitCodeOf(code, signal, { SIGTERM: 15, SIGKILL: 9 })).toBe(expected),
  );

  test("the header git sends: Basic x-access-token:<token>", () => {
    expect(authHeader("ghs_abc")).toBe(
      `Authorization: Basic ${Buffer.from("x-access-token:ghs_abc").toString("base64")}`,
    );
  });
});

describe("agentEnv", () => {
  const run = {
    ORCHESTRA_TASK_FILE: "/w/.orchestra/task.md",
    ORCHESTRA_RUN_ID: "r1",
    ORCHESTRA_REPO: "acme/app",
    ORCHESTRA_ISSUE: "12",
    ORCHESTRA_BRANCH: "agent/12",
    ORCHESTRA_CONTINUATION: "fresh",
    ORCHESTRA_DECISIONS_DIR: "/w/.orchestra/decisions",
    ORCHESTRA_QUESTION_FILE: "/w/.orchestra/question.md",
    ORCHESTRA_USAGE_FILE: "/w/.orchestra/usage.json",
  };
  test.each([
    ["GITHUB_TOKEN", false],
    ["GH_TOKEN", false],
    ["GH_ENTERPRISE_TOKEN", false],
    ["GITHUB_PAT", false],
    ["ORCHESTRA_WORKER_TOKEN", false],
    ["ORCHESTRA_ADMIN_TOKEN", false],
    ["ORCHESTRA_GIT_TOKEN", false],
    ["ORCHESTRA_URL", false],
    ["NPM_TOKEN", false],
    ["GIT_ASKPASS", false],
    ["GIT_CONFIG_PARAMETERS", false],
    ["GIT_CONFIG_VALUE_0", false],
    ["PATH", true],
    ["HOME", true],
    ["ANTHROPIC_API_KEY", true],
    ["OPENAI_API_KEY", true],
  ])("%s kept: %j", (name, kept) => {
    const env = agentEnv({ PATH: "/bin", [name]: "v" }, run);
    expect(name in env && env[name] === "v").toBe(kept);
  });

  test("the run's variables are set and prompts are off", () => {
    expect(agentEnv({ ORCHESTRA_RUN_ID: "stale" }, run)).toEqual({ ...run, GIT_TERMINAL_PROMPT: "0" });
  });
});
