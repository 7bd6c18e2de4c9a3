/**
 * Git-backed fake repositories: real `git clone/fetch/push` over smart HTTP
 * with installation tokens, and a REST API that reports what git has.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ProbotOctokit } from "probot";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const run = promisify(execFile);
const INSTALLATION = 4242;
const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));

let fake: FakeGitHub;
let home: string;

/** Runs git as a worker would: no prompts, a HOME of its own, the token as an extra header (or none). */
async function git(cwd: string, args: string[], token?: string): Promise<string> {
  const auth = token
    ? ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`]
    : [];
  const { stdout } = await run("git", [...auth, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Worker",
      GIT_AUTHOR_EMAIL: "worker@example.com",
      GIT_COMMITTER_NAME: "Worker",
      GIT_COMMITTER_EMAIL: "worker@example.com",
    },
  });
  return stdout.trim();
}

/** git's failure: its exit and what it printed. */
async function gitFails(cwd: string, args: string[], token?: string): Promise<string> {
  try {
    await git(cwd, args, token);
  } catch (e) {
    return String((e as { stderr?: string }).stderr);
  }
  throw new Error(`git ${args.join(" ")} succeeded`);
}

async function rest(
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${fake.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `token ${token}`,
      accept: "application/vnd.github+json",
      "user-agent": "git-test",
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

function cloneUrl(name: string): string {
  return `${fake.url}/${name}.git`;
}

async function clone(name: string, token?: string): Promise<string> {
  const dir = join(home, `${name.replace("/", "-")}-${Math.random().toString(36).slice(2)}`);
  await git(home, ["clone", "--quiet", cloneUrl(name), dir], token);
  return dir;
}

async function commitFile(dir: string, path: string, content: string, message: string): Promise<string> {
  await writeFile(join(dir, path), content);
  await git(dir, ["add", path]);
  await git(dir, ["commit", "--quiet", "-m", message]);
  return git(dir, ["rev-parse", "HEAD"]);
}

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "git-test-"));
  fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo("acme/widgets", { installationId: INSTALLATION, git: { files: { "README.md": "widgets\n" } } });
});

afterEach(async () => {
  await fake.close();
  await rm(home, { recursive: true, force: true });
});

describe("a git-backed repository", () => {
  it("is cloned with a token, and a pushed branch shows in branches and compare", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const repoJson = await rest(token, "GET", "/repos/acme/widgets");
    expect(repoJson.json.clone_url).toBe(cloneUrl("acme/widgets"));
    const dir = await clone("acme/widgets", token);
    expect(await readFile(join(dir, "README.md"), "utf8")).toBe("widgets\n");
    const main = fake.state.repo("acme/widgets").branches.get("main");
    expect(await git(dir, ["rev-parse", "HEAD"])).toBe(main);

    await git(dir, ["checkout", "--quiet", "-b", "agent/task-1"]);
    const head = await commitFile(dir, "feature.txt", "new\n", "Add the feature");
    await git(dir, ["push", "--quiet", "origin", "agent/task-1"], token);

    const branch = await rest(token, "GET", "/repos/acme/widgets/branches/agent/task-1");
    expect(branch.status).toBe(200);
    expect(branch.json.commit.sha).toBe(head);
    expect(branch.json.commit.commit.message).toBe("Add the feature");
    const cmp = await rest(token, "GET", "/repos/acme/widgets/compare/main...agent/task-1");
    expect(cmp.json).toMatchObject({ status: "ahead", ahead_by: 1, behind_by: 0 });
    expect(cmp.json.commits.map((c: { sha: string }) => c.sha)).toEqual([head]);
    const file = await rest(token, "GET", "/repos/acme/widgets/contents/feature.txt?ref=agent/task-1");
    expect(Buffer.from(file.json.content, "base64").toString("utf8")).toBe("new\n");

    expect(fake.state.git.pushes).toEqual([
      expect.objectContaining({
        repo: "acme/widgets",
        ref: "refs/heads/agent/task-1",
        before: "0".repeat(40),
        after: head,
        created: true,
        deleted: false,
        forced: false,
        pusher: fake.state.botLogin,
        installationId: INSTALLATION,
        commits: [expect.objectContaining({ sha: head, added: ["feature.txt"], modified: [], removed: [] })],
      }),
    ]);
    expect(fake.requestsFor("git:git-receive-pack").map((r) => r.status)).toContain(200);
    fake.assertNoViolations();
  });

  it("merges a pull request with a real merge commit that can be fetched, and the head follows pushes", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await clone("acme/widgets", token);
    await git(dir, ["checkout", "--quiet", "-b", "topic"]);
    await commitFile(dir, "a.txt", "a\n", "First");
    await git(dir, ["push", "--quiet", "origin", "topic"], token);
    const opened = await rest(token, "POST", "/repos/acme/widgets/pulls", { title: "T", head: "topic", base: "main" });
    expect(opened.status).toBe(201);
    const second = await commitFile(dir, "b.txt", "b\n", "Second");
    await git(dir, ["push", "--quiet", "origin", "topic"], token);
    const pr = await rest(token, "GET", `/repos/acme/widgets/pulls/${opened.json.number}`);
    expect(pr.json.head.sha).toBe(second);
    expect(pr.json.mergeable).toBe(true);

    const base = fake.state.repo("acme/widgets").branches.get("main")!;
    const merged = await rest(token, "PUT", `/repos/acme/widgets/pulls/${opened.json.number}/merge`, {});
    expect(merged.status).toBe(200);
    await git(dir, ["fetch", "--quiet", "origin"], token);
    expect(await git(dir, ["rev-parse", "origin/main"])).toBe(merged.json.sha);
    expect(await git(dir, ["log", "-1", "--format=%P", merged.json.sha])).toBe(`${base} ${second}`);
    expect(await git(dir, ["show", `${merged.json.sha}:b.txt`])).toBe("b");
    const commit = await rest(token, "GET", `/repos/acme/widgets/commits/${merged.json.sha}`);
    expect(commit.json.parents.map((p: { sha: string }) => p.sha)).toEqual([base, second]);
    fake.assertNoViolations();
  });

  it("refuses to merge a pull request that conflicts with its base", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await clone("acme/widgets", token);
    await git(dir, ["checkout", "--quiet", "-b", "one"]);
    await commitFile(dir, "README.md", "one\n", "One");
    await git(dir, ["checkout", "--quiet", "-b", "two", "main"]);
    await commitFile(dir, "README.md", "two\n", "Two");
    await git(dir, ["push", "--quiet", "origin", "one", "two"], token);
    const one = await rest(token, "POST", "/repos/acme/widgets/pulls", { title: "1", head: "one", base: "main" });
    const two = await rest(token, "POST", "/repos/acme/widgets/pulls", { title: "2", head: "two", base: "main" });
    expect((await rest(token, "GET", `/repos/acme/widgets/pulls/${two.json.number}`)).json.mergeable).toBe(true);
    expect((await rest(token, "PUT", `/repos/acme/widgets/pulls/${one.json.number}/merge`, {})).status).toBe(200);

    const after = await rest(token, "GET", `/repos/acme/widgets/pulls/${two.json.number}`);
    expect(after.json).toMatchObject({ mergeable: false, mergeable_state: "dirty" });
    const refused = await rest(token, "PUT", `/repos/acme/widgets/pulls/${two.json.number}/merge`, {});
    expect(refused).toMatchObject({ status: 405, json: { message: "Pull Request is not mergeable" } });
    const update = await rest(token, "PUT", `/repos/acme/widgets/pulls/${two.json.number}/update-branch`, {});
    expect(update.status).toBe(422);
    fake.assertNoViolations();
  });

  it("updates a pull request's branch with a real merge of its base", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await clone("acme/widgets", token);
    await git(dir, ["checkout", "--quiet", "-b", "topic"]);
    const head = await commitFile(dir, "t.txt", "t\n", "Topic");
    await git(dir, ["checkout", "--quiet", "main"]);
    const base = await commitFile(dir, "m.txt", "m\n", "Main moves");
    await git(dir, ["push", "--quiet", "origin", "topic", "main"], token);
    const pr = await rest(token, "POST", "/repos/acme/widgets/pulls", { title: "T", head: "topic", base: "main" });
    expect(pr.json.mergeable_state).toBe("behind");
    const update = await rest(token, "PUT", `/repos/acme/widgets/pulls/${pr.json.number}/update-branch`, {});
    expect(update.status).toBe(202);
    await git(dir, ["fetch", "--quiet", "origin"], token);
    const merged = await git(dir, ["rev-parse", "origin/topic"]);
    expect(await git(dir, ["log", "-1", "--format=%P", merged])).toBe(`${head} ${base}`);
    expect(await git(dir, ["ls-tree", "--name-only", merged])).toBe("README.md\nm.txt\nt.txt");
    expect(fake.state.pull("acme/widgets", pr.json.number).headSha).toBe(merged);
    fake.assertNoViolations();
  });

  it("records force pushes and deletions as GitHub's push webhook describes them", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await clone("acme/widgets", token);
    await git(dir, ["checkout", "--quiet", "-b", "topic"]);
    const first = await commitFile(dir, "a.txt", "a\n", "A");
    await git(dir, ["push", "--quiet", "origin", "topic"], token);
    await git(dir, ["commit", "--quiet", "--amend", "-m", "A, amended"]);
    const amended = await git(dir, ["rev-parse", "HEAD"]);
    await git(dir, ["push", "--quiet", "--force", "origin", "topic"], token);
    await git(dir, ["push", "--quiet", "origin", "--delete", "topic"], token);
    expect(fake.state.git.pushes.map((p) => [p.before, p.after, p.forced, p.deleted])).toEqual([
      ["0".repeat(40), first, false, false],
      [first, amended, true, false],
      [amended, "0".repeat(40), false, true],
    ]);
    expect((await rest(token, "GET", "/repos/acme/widgets/branches/topic")).status).toBe(404);
    fake.assertNoViolations();
  });
});

describe("git authorisation", () => {
  async function pushRefusal(token?: string): Promise<string> {
    const good = fake.state.issueToken(INSTALLATION).token;
    const dir = await clone("acme/widgets", good);
    await git(dir, ["checkout", "--quiet", "-b", "refused"]);
    await commitFile(dir, "x.txt", "x\n", "X");
    // the credential as URL userinfo this time: git then says what GitHub answered a bad one
    const remote = token ? cloneUrl("acme/widgets").replace("://", `://x-access-token:${token}@`) : "origin";
    const stderr = await gitFails(dir, ["push", remote, "refused"]);
    expect(fake.state.repo("acme/widgets").branches.has("refused")).toBe(false);
    expect(fake.state.git.pushes).toEqual([]);
    return stderr;
  }

  it("refuses a push without a token, with a bad one, or with a revoked one (401)", async () => {
    expect(await pushRefusal()).toMatch(/could not read Username|Authentication failed/);
    expect(await pushRefusal("ghs_not-a-token")).toMatch(/remote: Invalid username or token[^]*Authentication failed/);
    const revoked = fake.state.issueToken(INSTALLATION);
    revoked.revokedAt = new Date();
    expect(await pushRefusal(revoked.token)).toMatch(/Invalid username or token/);
    const statuses = fake.requestsFor("git:git-receive-pack").map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(3);
  });

  it("refuses a push with a read-only token (403)", async () => {
    const readOnly = fake.state.issueToken(INSTALLATION);
    readOnly.permissions = { contents: "read", metadata: "read" };
    const stderr = await pushRefusal(readOnly.token);
    expect(stderr).toContain(`remote: Permission to acme/widgets.git denied to ${fake.state.botLogin}.`);
    expect(stderr).toContain("403");
  });

  it("refuses a token minted for another repository, as a private repository it cannot see (404)", async () => {
    fake.state.addRepo("acme/other", { installationId: INSTALLATION });
    const app = new TestOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: fake.apiUrl });
    const minted = await app.request("POST /app/installations/{installation_id}/access_tokens", {
      installation_id: INSTALLATION,
      repositories: ["other"],
    });
    const narrowed = (minted.data as { token: string }).token;
    expect(fake.state.tokens.get(narrowed)!.repositories).toEqual(["acme/other"]);
    expect(await pushRefusal(narrowed)).toContain("remote: Repository not found.");
    expect(await gitFails(home, ["clone", cloneUrl("acme/widgets"), join(home, "nope")], narrowed)).toContain(
      "Repository not found.",
    );
  });

  it("refuses to fetch a private repository without a token, and serves a public one to anyone", async () => {
    const stderr = await gitFails(home, ["clone", cloneUrl("acme/widgets"), join(home, "anon")]);
    expect(stderr).toMatch(/could not read Username/);
    expect(fake.requestsFor("git:git-upload-pack")[0]).toMatchObject({
      status: 401,
      response: expect.stringContaining("Invalid username or token"),
    });
    fake.state.addRepo("acme/open", { installationId: INSTALLATION, private: false, git: true });
    await git(home, ["clone", "--quiet", cloneUrl("acme/open"), join(home, "open")]);
    expect(await git(join(home, "open"), ["log", "--format=%s"])).toBe("Initial commit");
    // anyone may read it, but only a token with contents: write may push
    await writeFile(join(home, "open", "y.txt"), "y\n");
    await git(join(home, "open"), ["add", "y.txt"]);
    await git(join(home, "open"), ["commit", "--quiet", "-m", "Y"]);
    expect(await gitFails(join(home, "open"), ["push", "origin", "HEAD:main"])).toMatch(/could not read Username/);
  });

  it("removes its bare repositories when the fake closes", async () => {
    const root = fake.state.git.projectRoot;
    await fake.close();
    await expect(readFile(join(root, `${fake.state.repo("acme/widgets").id}.git`, "HEAD"))).rejects.toThrow();
    fake = await startFakeGitHub();
  });
});
