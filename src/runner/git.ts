/**
 * Git, as the worker runs it. A credential reaches git only for the one
 * command that needs it, as an `http.extraHeader` passed through git's
 * GIT_CONFIG_COUNT environment (the same as `-c`, but out of `ps`): never
 * written to a config file, never in the agent's environment.
 */
import { spawn } from "node:child_process";
import { authHeader, ORCHESTRA_DIR, parseCount, parseStatus, worktreeDigest, type StatusEntry } from "./facts.js";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class GitFailed extends Error {
  constructor(
    readonly args: string[],
    readonly result: GitResult,
  ) {
    const said = (result.stderr || result.stdout).trim().split("\n").slice(-3).join(" / ");
    super(`git ${args.filter((a) => !a.startsWith("--")).join(" ")} failed (exit ${result.code}): ${said}`);
  }
}

/** The worker's environment for git: no prompts, no tokens or git settings inherited from the shell. */
function gitEnv(token: string | null): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^GIT_CONFIG_|^GIT_ASKPASS$|^(GITHUB|GH)_TOKEN$|^ORCHESTRA_/.test(k)) env[k] = v;
  env["GIT_TERMINAL_PROMPT"] = "0";
  if (token) {
    env["GIT_CONFIG_COUNT"] = "2";
    env["GIT_CONFIG_KEY_0"] = "http.extraHeader";
    env["GIT_CONFIG_VALUE_0"] = authHeader(token);
    // No hook runs with the token in its environment: the agent can write the mirror's hooks.
    env["GIT_CONFIG_KEY_1"] = "core.hooksPath";
    env["GIT_CONFIG_VALUE_1"] = "/dev/null";
  }
  return env;
}

export interface GitOptions {
  cwd: string;
  token?: string | null;
  timeoutMs?: number;
  /** Written to git's stdin. */
  input?: string;
}

/** Runs git; answers whatever it did (callers decide what a non-zero exit means). */
export function git(args: string[], opts: GitOptions): Promise<GitResult> {
  return new Promise((resolve) => {
    const child = spawn("git", args, { cwd: opts.cwd, env: gitEnv(opts.token ?? null), stdio: "pipe" });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 15 * 60_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout: "", stderr: `cannot run git: ${e.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString("utf8") + (signal ? `(git was stopped by ${signal})` : "");
      resolve({ code: code ?? 128, stdout: Buffer.concat(out).toString("utf8"), stderr });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
  });
}

/** Runs git and throws GitFailed unless it exits 0; answers stdout. */
export async function gitOk(args: string[], opts: GitOptions): Promise<string> {
  const r = await git(args, opts);
  if (r.code !== 0) throw new GitFailed(args, r);
  return r.stdout;
}

/** The commit each of `refs` (full names) points at, peeled, or null when it does not exist; one command. */
export async function commitsOf(cwd: string, refs: string[]): Promise<Array<string | null>> {
  const format = "%(refname) %(objecttype) %(objectname) %(*objecttype) %(*objectname)";
  const out = await gitOk(["for-each-ref", `--format=${format}`, ...refs], { cwd });
  const found = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [name, type, sha, peeledType, peeled] = line.split(" ");
    if (type === "commit") found.set(name!, sha!);
    else if (peeledType === "commit") found.set(name!, peeled!);
  }
  return refs.map((ref) => found.get(ref) ?? null);
}

export interface WorktreeState {
  headSha: string;
  entries: StatusEntry[];
  dirty: boolean;
  ahead: number;
}

export interface WorktreeFacts extends WorktreeState {
  digest: string;
}

/**
 * Looks without writing: a plain `git status` (or `git diff`) refreshes the
 * index and takes its lock to do it, and a heartbeat's look at the worktree
 * then makes the agent's own `git add` or `git commit` (or the worker's
 * handoff commit) fail with "index.lock: File exists". Status is told not
 * to; the diff is the plumbing one, which never writes the index.
 */
const LOOK = "--no-optional-locks";

/**
 * What git says of a worktree: its head and what differs from it (without
 * .orchestra/), from one `git status`, and its commits ahead of `base`.
 * Takes no lock in the worktree (see LOOK).
 */
export async function worktreeState(cwd: string, base: string): Promise<WorktreeState> {
  const status = parseStatus(
    await gitOk([LOOK, "status", "--porcelain=v2", "--branch", "--no-ahead-behind", "-z", "--untracked-files=all"], {
      cwd,
    }),
  );
  if (!status.head) throw new Error(`git status in ${cwd} names no head commit`);
  const ahead = parseCount(await gitOk(["rev-list", "--count", `${base}..${status.head}`], { cwd })) ?? 0;
  return { headSha: status.head, entries: status.entries, dirty: status.entries.length > 0, ahead };
}

/** The state, and a digest that also moves when a file already changed changes again (the diff's stat). */
export async function worktreeFacts(cwd: string, base: string): Promise<WorktreeFacts> {
  const state = await worktreeState(cwd, base);
  const stat = await git([LOOK, "diff-index", "--stat", "HEAD"], { cwd });
  return { ...state, digest: worktreeDigest(state.headSha, state.entries, stat.stdout) };
}

export const HANDOFF_TRAILER = "Orchestra-Handoff";

/**
 * Commits whatever the agent left uncommitted (never `.orchestra/`), marked
 * with the handoff trailer so the next run and the classifier can tell
 * unfinished work from finished. Hooks are skipped: half-done work is not
 * expected to pass them. Answers whether there was anything to commit.
 */
export async function commitHandoff(cwd: string, reason: string): Promise<boolean> {
  await gitOk(["add", "-A"], { cwd });
  // .orchestra/ is excluded already; this keeps it out should an exclude file have been edited meanwhile.
  await gitOk(["rm", "-r", "--cached", "--quiet", "--ignore-unmatch", "--", ORCHESTRA_DIR], { cwd });
  const staged = await git(["diff", "--cached", "--quiet"], { cwd });
  if (staged.code === 0) return false;
  await gitOk(
    [
      "commit",
      "--quiet",
      "--no-verify",
      "-m",
      `Unfinished work, handed off by the worker (${reason})`,
      "-m",
      `${HANDOFF_TRAILER}: ${reason}`,
    ],
    { cwd },
  );
  return true;
}
