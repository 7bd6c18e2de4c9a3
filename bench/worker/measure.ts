// One measured run of each kind.
//
// Baseline: what a script without a worker does for one change, all over the
// same smart HTTP with an installation token: a fresh full `git clone`, the
// one-file change committed, `git push` of a new branch.
//
// Worker: one `orchestra worker --once --json` child process (the package's
// CLI, as an operator runs it) whose stand-in agent makes the same change and
// commits it. The worker's own steps come from the timestamps of its JSON
// events; the whole run is the child's wall time, from spawn to exit.
import { spawn } from "node:child_process";
import { appendFile, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

/** The git identity both sides commit as, and no user or system configuration. */
export const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Stand-in Agent",
  GIT_AUTHOR_EMAIL: "agent@example.invalid",
  GIT_COMMITTER_NAME: "Stand-in Agent",
  GIT_COMMITTER_EMAIL: "agent@example.invalid",
  GIT_TERMINAL_PROMPT: "0",
};

/** The line both sides append to the run's file. */
export const changeLine = (run: number): string => `export const benchRun${run} = ${run};`;

interface Exec {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function exec(cmd: string, args: string[], o: { cwd: string; env: Record<string, string> }): Promise<Exec> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.on("error", (e) => resolve({ code: 127, stdout, stderr: e.message, ms: performance.now() - t0 }));
    child.on("close", (code) => resolve({ code: code ?? 128, stdout, stderr, ms: performance.now() - t0 }));
  });
}

export interface BaselineTimes {
  cloneMs: number;
  commitMs: number;
  pushMs: number;
  totalMs: number;
  /** of the push, the fake GitHub's own work after receive-pack (see run.ts); set by the caller */
  fakePushMs?: number;
  /** this process's CPU (the App and the fake GitHub) meanwhile; set by the caller */
  rigCpuMs?: number;
}

/**
 * Clone, change, push, as the worker passes its token: an `http.extraHeader`
 * through git's GIT_CONFIG_COUNT environment.
 */
export async function baselineRun(o: {
  home: string;
  url: string;
  token: string;
  run: number;
  path: string;
}): Promise<BaselineTimes> {
  const dir = join(o.home, `clone-${o.run}`);
  const plain: Record<string, string> = { PATH: process.env["PATH"] ?? "", HOME: o.home, ...GIT_ENV };
  const auth = {
    ...plain,
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`x-access-token:${o.token}`).toString("base64")}`,
  };
  const ok = async (what: string, r: Exec) => {
    if (r.code !== 0) throw new Error(`baseline ${what} failed (exit ${r.code}): ${r.stderr.trim()}`);
    return r.ms;
  };
  await mkdir(o.home, { recursive: true });
  const cloneMs = await ok("clone", await exec("git", ["clone", "--quiet", o.url, dir], { cwd: o.home, env: auth }));
  const t0 = performance.now();
  await appendFile(join(dir, o.path), `${changeLine(o.run)}\n`);
  await ok("add", await exec("git", ["add", o.path], { cwd: dir, env: plain }));
  await ok("commit", await exec("git", ["commit", "--quiet", "-m", `Bench run ${o.run}`], { cwd: dir, env: plain }));
  const commitMs = performance.now() - t0;
  const push = ["push", "--quiet", "origin", `HEAD:refs/heads/bench/baseline-${o.run}`];
  const pushMs = await ok("push", await exec("git", push, { cwd: dir, env: auth }));
  await rm(dir, { recursive: true, force: true });
  return { cloneMs, commitMs, pushMs, totalMs: cloneMs + commitMs + pushMs };
}

/** The worker's JSON events this benchmark times, in the order a finished run prints them. */
export const STEPS = [
  "claimed",
  "mirror",
  "worktree",
  "agent started",
  "agent exited",
  "pushed",
  "pr",
  "exit",
] as const;

export interface WorkerTimes {
  /** from spawning the process to its `claimed` event: node start-up, the restart check, the claim */
  startMs: number;
  /** claimed → mirror: the mirror's clone (first run) or fetch */
  mirrorMs: number;
  /** mirror → worktree: the spare switched to the run's branch (or `git worktree add`), the task file, the record */
  worktreeMs: number;
  /** worktree → agent started */
  agentStartMs: number;
  /** agent started → agent exited: the stand-in agent's own change and commit */
  agentMs: number;
  /** agent exited → pushed: the facts from git and the push */
  pushMs: number;
  /** pushed → pr: the pull request through the REST API */
  prMs: number;
  /** pr → exit: the exit call and parking (or removing) the worktree */
  exitMs: number;
  /** from exit to the process's end */
  shutdownMs: number;
  /** mirror + worktree + facts and push: the worker's git overhead */
  gitMs: number;
  /** spawn to process exit */
  wallMs: number;
  outcome: string | null;
  /** of the push, the fake GitHub's own work after receive-pack (see run.ts); set by the caller */
  fakePushMs?: number;
  /** this process's CPU (the App and the fake GitHub) meanwhile; set by the caller */
  rigCpuMs?: number;
}

export class WorkerRunFailed extends Error {}

/**
 * Runs `node bin/orchestra.js worker --once --json …` and reads its step
 * timestamps (the `at` of each JSON line, milliseconds on this machine's
 * clock, as is the spawn time they are set against).
 */
export async function workerRun(o: {
  bin: string;
  url: string;
  workdir: string;
  cwd: string;
  token: string;
  agent: string;
}): Promise<WorkerTimes> {
  const args = [o.bin, "worker", "--once", "--json", "--url", o.url, "--workdir", o.workdir, "--agent", o.agent];
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: o.cwd,
    NODE_ENV: "production",
    ORCHESTRA_WORKER_TOKEN: o.token,
    // BENCH_GIT_TRACE=<file>: git's own timing of every command the worker runs (GIT_TRACE2_PERF)
    ...(process.env["BENCH_GIT_TRACE"] ? { GIT_TRACE2_PERF: process.env["BENCH_GIT_TRACE"] } : {}),
    ...GIT_ENV,
  };
  const spawnedAt = Date.now();
  const r = await exec(process.execPath, args, { cwd: o.cwd, env });
  const endedAt = spawnedAt + r.ms;
  const events = new Map<string, { at: number; fields: Record<string, unknown> }>();
  for (const text of r.stdout.split("\n")) {
    if (!text.trim()) continue;
    try {
      const e = JSON.parse(text) as { at: string; event: string } & Record<string, unknown>;
      if (!events.has(e.event)) events.set(e.event, { at: Date.parse(e.at), fields: e });
    } catch {
      throw new WorkerRunFailed(`the worker printed a line that is not JSON: ${text}`);
    }
  }
  const missing = STEPS.filter((s) => !events.has(s));
  if (r.code !== 0 || missing.length) {
    const tail = (r.stderr.trim() || r.stdout.trim()).split("\n").slice(-5).join(" / ");
    throw new WorkerRunFailed(
      `the worker exited ${r.code}${missing.length ? ` without ${missing.join(", ")}` : ""}: ${tail}`,
    );
  }
  const at = (s: (typeof STEPS)[number]) => events.get(s)!.at;
  const between = (a: (typeof STEPS)[number], b: (typeof STEPS)[number]) => at(b) - at(a);
  const times = {
    startMs: at("claimed") - spawnedAt,
    mirrorMs: between("claimed", "mirror"),
    worktreeMs: between("mirror", "worktree"),
    agentStartMs: between("worktree", "agent started"),
    agentMs: between("agent started", "agent exited"),
    pushMs: between("agent exited", "pushed"),
    prMs: between("pushed", "pr"),
    exitMs: between("pr", "exit"),
    shutdownMs: endedAt - at("exit"),
    wallMs: r.ms,
    outcome: (events.get("exit")!.fields["outcome"] as string | undefined) ?? null,
  };
  return { ...times, gitMs: times.mirrorMs + times.worktreeMs + times.pushMs };
}
