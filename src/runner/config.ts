/**
 * The worker's settings: command-line options, else the environment, else
 * `orchestra-worker.yml`, else the defaults. Parsed once, here; a wrong
 * setting stops the worker before it claims anything, with the setting named.
 * Tokens are never options (an option's value shows in `ps`): the worker
 * token comes from ORCHESTRA_WORKER_TOKEN or a token file.
 */
import { parse as parseYaml } from "yaml";
import { z } from "zod";

export interface WorkerSettings {
  url: string;
  token: string;
  workdir: string;
  concurrency: number;
  agent: string;
  test: string | null;
  maxRunMinutes: number;
  idleMinutes: number;
  graceSeconds: number;
  pollSeconds: number;
  once: boolean;
  json: boolean;
  verbose: boolean;
  githubUrl: string;
  githubApiUrl: string;
  /** For repositories with `credentials: none`: the worker's own token for git and the PR, when the claim has none. */
  gitToken: string | null;
  /** One run from a workflow_dispatch's inputs inside a GitHub Actions job (dispatch mode); implies once. */
  dispatched: boolean;
}

/** What the command line gives (commander's values: strings and switches). */
export interface WorkerFlags {
  config?: string;
  url?: string;
  tokenFile?: string;
  workdir?: string;
  concurrency?: string;
  agent?: string;
  test?: string;
  maxRunMinutes?: string;
  idleMinutes?: string;
  graceSeconds?: string;
  pollSeconds?: string;
  once?: boolean;
  json?: boolean;
  verbose?: boolean;
  githubUrl?: string;
  githubApiUrl?: string;
  gitTokenFile?: string;
  dispatched?: boolean;
}

export const CONFIG_FILE = "orchestra-worker.yml";

const positive = z.number().positive("must be more than 0");
/** The file's keys: the options' names in camelCase. */
const fileSchema = z
  .object({
    url: z.string().min(1),
    tokenFile: z.string().min(1),
    workdir: z.string().min(1),
    concurrency: z.number().int().min(1).max(64),
    agent: z.string().min(1),
    test: z.string().min(1),
    maxRunMinutes: positive,
    idleMinutes: positive,
    graceSeconds: z.number().min(0),
    pollSeconds: positive,
    json: z.boolean(),
    verbose: z.boolean(),
    githubUrl: z.string().min(1),
    githubApiUrl: z.string().min(1),
    gitTokenFile: z.string().min(1),
  })
  .partial()
  .strict();

export const DEFAULTS = {
  url: "http://localhost:3000",
  workdir: "./orchestra-work",
  concurrency: 1,
  maxRunMinutes: 60,
  idleMinutes: 15,
  graceSeconds: 10,
  pollSeconds: 15,
  githubUrl: "https://github.com",
  githubApiUrl: "https://api.github.com",
} as const;

type Result = { ok: true; settings: WorkerSettings } | { ok: false; error: string };

/** A number option: `name` is how the error names it. */
function numberOf(text: string | undefined, name: string, opts: { int?: boolean; zero?: boolean; max?: number } = {}) {
  if (text === undefined) return undefined;
  const n = /^\s*[0-9]+(\.[0-9]+)?\s*$/.test(text) ? Number(text) : NaN;
  const ok =
    !Number.isNaN(n) &&
    (opts.zero ? n >= 0 : n > 0) &&
    (!opts.int || Number.isInteger(n)) &&
    (opts.max === undefined || n <= opts.max);
  if (!ok)
    throw new Error(
      `${name} must be ${opts.int ? "a whole number" : "a number"} ${opts.zero ? "of 0 or more" : "more than 0"}` +
        `${opts.max ? ` and at most ${opts.max}` : ""}, not "${text}"`,
    );
  return n;
}

function httpUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is not a URL: "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name} must be http(s): "${value}"`);
  return value.replace(/\/+$/, "");
}

/**
 * The settings, from the options, the environment, the file's text (null
 * when there is none) and a reader for token files.
 */
export function workerSettings(
  flags: WorkerFlags,
  env: Record<string, string | undefined>,
  file: { path: string; text: string } | null,
  readSecret: (path: string) => string,
): Result {
  try {
    let f: z.infer<typeof fileSchema> = {};
    if (file) {
      const raw: unknown = parseYaml(file.text);
      if (raw && typeof raw === "object" && "token" in raw)
        throw new Error(
          `${file.path}: no token in the file; set ORCHESTRA_WORKER_TOKEN, or name a file holding it with tokenFile`,
        );
      const parsed = fileSchema.safeParse(raw ?? {});
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const where = issue.path.join(".") || (issue.code === "unrecognized_keys" ? issue.keys.join(", ") : "");
        throw new Error(`${file.path}: ${where ? `${where}: ` : ""}${issue.message}`);
      }
      f = parsed.data;
    }
    const pick = <T>(flag: T | undefined, fromEnv: T | undefined, fromFile: T | undefined, fallback: T): T =>
      flag ?? fromEnv ?? fromFile ?? fallback;
    const secret = (path: string, what: string) => {
      let text: string;
      try {
        text = readSecret(path);
      } catch (err) {
        throw new Error(`cannot read ${what} ${path}: ${(err as Error).message}`, { cause: err });
      }
      const token = text.trim();
      if (!token) throw new Error(`${what} ${path} is empty`);
      return token;
    };

    const dispatched = flags.dispatched === true;
    const tokenFile = flags.tokenFile ?? f.tokenFile;
    const token = tokenFile ? secret(tokenFile, "token file") : (env["ORCHESTRA_WORKER_TOKEN"]?.trim() ?? "");
    // A dispatched run talks to GitHub only: Orchestra follows it through the workflow run's events.
    if (!token && !dispatched)
      throw new Error(
        "no worker token: set ORCHESTRA_WORKER_TOKEN or --token-file " +
          "(register a worker with: orchestra workers add <name>)",
      );
    const agent = flags.agent ?? env["ORCHESTRA_AGENT"] ?? f.agent;
    if (!agent?.trim())
      throw new Error('no agent command: pass --agent "<shell command>" or set agent: in ' + CONFIG_FILE);
    const gitTokenFile = flags.gitTokenFile ?? f.gitTokenFile;
    const gitToken =
      (gitTokenFile ? secret(gitTokenFile, "git token file") : env["ORCHESTRA_GIT_TOKEN"]?.trim()) ||
      (dispatched ? env["GITHUB_TOKEN"]?.trim() : undefined) ||
      null;
    if (dispatched && !gitToken)
      throw new Error(
        "--dispatched needs the job's token: give the step `env: GITHUB_TOKEN: ${{ github.token }}` " +
          "(or ORCHESTRA_GIT_TOKEN / --git-token-file for a token of your own)",
      );
    // In an Actions job the runner says where GitHub is and where scratch space is.
    const actions = (name: string) => (dispatched ? env[name]?.trim() || undefined : undefined);
    const runnerTemp = actions("RUNNER_TEMP");

    const settings: WorkerSettings = {
      url: httpUrl(pick(flags.url, env["ORCHESTRA_URL"], f.url, DEFAULTS.url), "--url"),
      token,
      workdir: pick(
        flags.workdir,
        env["ORCHESTRA_WORKDIR"],
        f.workdir,
        runnerTemp ? `${runnerTemp}/orchestra-work` : DEFAULTS.workdir,
      ),
      concurrency: pick(
        numberOf(flags.concurrency, "--concurrency", { int: true, max: 64 }),
        undefined,
        f.concurrency,
        DEFAULTS.concurrency,
      ),
      agent: agent.trim(),
      test: (flags.test ?? f.test)?.trim() || null,
      maxRunMinutes: numberOf(flags.maxRunMinutes, "--max-run-minutes") ?? f.maxRunMinutes ?? DEFAULTS.maxRunMinutes,
      idleMinutes: numberOf(flags.idleMinutes, "--idle-minutes") ?? f.idleMinutes ?? DEFAULTS.idleMinutes,
      graceSeconds:
        numberOf(flags.graceSeconds, "--grace-seconds", { zero: true }) ?? f.graceSeconds ?? DEFAULTS.graceSeconds,
      pollSeconds: numberOf(flags.pollSeconds, "--poll-seconds") ?? f.pollSeconds ?? DEFAULTS.pollSeconds,
      once: flags.once === true || dispatched,
      json: flags.json ?? f.json ?? false,
      verbose: flags.verbose ?? f.verbose ?? false,
      githubUrl: httpUrl(
        flags.githubUrl ?? actions("GITHUB_SERVER_URL") ?? f.githubUrl ?? DEFAULTS.githubUrl,
        "--github-url",
      ),
      githubApiUrl: httpUrl(
        flags.githubApiUrl ?? actions("GITHUB_API_URL") ?? f.githubApiUrl ?? DEFAULTS.githubApiUrl,
        "--github-api-url",
      ),
      gitToken,
      dispatched,
    };
    return { ok: true, settings };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}
