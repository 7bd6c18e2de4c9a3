/**
 * `orchestra worker`: claims tasks through the worker API and runs the agent
 * command on each, `--concurrency` at a time. A 204 means nothing is
 * claimable: it polls again, backing off to eight times --poll-seconds while
 * the queue stays empty. On SIGINT or SIGTERM it claims nothing more, stops
 * its agents, hands their work off and exits; a second signal exits at once.
 * One workdir belongs to one worker at a time (a lock file says whose).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorOf, ServiceUnavailable, TokenRefused, WorkerClient } from "./client.js";
import type { WorkerSettings } from "./config.js";
import type { RunEnd } from "./finish.js";
import type { ClaimAnswer } from "./protocol.js";
import { reattach } from "./reattach.js";
import { reporter, type Reporter } from "./report.js";
import { runClaim } from "./run.js";
import type { WorkerContext } from "./session.js";

/** The worker's exit codes (docs/worker.md). */
export const WORKER_EXIT = {
  /** --once: the run was reported and Orchestra answered (review, or classified), or it asked a question. */
  ok: 0,
  /** The service, git or the machine failed in a way the worker cannot go on from: stderr says what and what to do. */
  failed: 1,
  /** A wrong option or setting. */
  usage: 2,
  /** --once: nothing was claimable. */
  nothingClaimed: 3,
  /** --once: the run was released before the agent started (preflight, clone, worktree). */
  released: 4,
  /** --once: the lease was lost (superseded, stalled, revoked): the exit was not accepted. */
  leaseLost: 5,
  interrupted: 130,
  terminated: 143,
} as const;

export interface WorkerIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

function lock(workdir: string, report: Reporter): (() => void) | string {
  mkdirSync(workdir, { recursive: true });
  const file = join(workdir, "worker.pid");
  let holder: number | null;
  try {
    holder = Number(readFileSync(file, "utf8").trim()) || null;
  } catch {
    holder = null;
  }
  if (holder && holder !== process.pid) {
    try {
      process.kill(holder, 0);
      return `another worker (pid ${holder}) uses ${workdir}; give this one its own --workdir`;
    } catch {
      report.step(null, "workdir", `taking over ${workdir} from pid ${holder}, which is gone`);
    }
  }
  writeFileSync(file, `${process.pid}\n`);
  return () => rmSync(file, { force: true });
}

const codeOf = (end: RunEnd): number =>
  end.kind === "exited" || end.kind === "question"
    ? WORKER_EXIT.ok
    : end.kind === "released"
      ? WORKER_EXIT.released
      : end.kind === "lost"
        ? WORKER_EXIT.leaseLost
        : WORKER_EXIT.failed;

export async function runWorker(settings: WorkerSettings, io: WorkerIo): Promise<number> {
  const report = reporter({ json: settings.json, verbose: settings.verbose, out: io.out, err: io.err });
  const unlock = lock(settings.workdir, report);
  if (typeof unlock === "string") {
    report.step(null, "workdir", unlock, {}, "error");
    return WORKER_EXIT.usage;
  }
  let stopping: NodeJS.Signals | null = null;
  const wake = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(signal === "SIGINT" ? WORKER_EXIT.interrupted : WORKER_EXIT.terminated);
    stopping = signal;
    report.step(null, "stopping", `${signal}: the running agents are stopped and their work handed off`);
    wake.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const client = new WorkerClient({
    url: settings.url,
    token: settings.token,
    onRetry: (what, attempt, why) => report.step(null, "retry", `${what} (attempt ${attempt}): ${why}`, {}, "debug"),
  });
  const ctx: WorkerContext = {
    settings,
    client,
    report,
    stopping: () => (stopping ? "worker-stopped" : null),
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  let fatal: string | null = null;

  /** One claim: the run's end, null when nothing was claimable, or "retry" after a failure said on the terminal. */
  const claimOne = async (): Promise<RunEnd | null | "retry"> => {
    const r = await client.post<ClaimAnswer>("/api/v1/claims", {});
    if (r.status === 204) return null;
    if (r.status !== 200) {
      report.step(null, "claim", `refused (${r.status}): ${errorOf(r.body) ?? "no reason given"}`, {}, "error");
      return "retry";
    }
    return runClaim(r.body, ctx);
  };

  const slot = async (): Promise<void> => {
    const base = settings.pollSeconds * 1000;
    let wait = base;
    while (!stopping && !fatal) {
      let end: RunEnd | null | "retry";
      try {
        end = await claimOne();
      } catch (err) {
        if (err instanceof TokenRefused) {
          fatal = err.message;
          wake.abort();
          return;
        }
        report.step(null, "claim", (err as Error).message, {}, "error");
        end = "retry";
      }
      if (end !== null && end !== "retry") {
        wait = base;
        continue;
      }
      await pause(wait);
      wait = Math.min(wait * 2, base * 8);
    }
  };

  const signalled = () => (stopping === "SIGINT" ? WORKER_EXIT.interrupted : WORKER_EXIT.terminated);
  try {
    await reattach(ctx);
    if (settings.once) {
      const end = await claimOne();
      if (end === null) report.step(null, "idle", "nothing to claim");
      if (stopping) return signalled();
      return end === null ? WORKER_EXIT.nothingClaimed : end === "retry" ? WORKER_EXIT.failed : codeOf(end);
    }
    report.step(null, "started", `polling ${settings.url} with ${settings.concurrency} slot(s)`, {
      concurrency: settings.concurrency,
    });
    await Promise.all(Array.from({ length: settings.concurrency }, slot));
    if (fatal) {
      report.step(null, "stopped", fatal, {}, "error");
      return WORKER_EXIT.failed;
    }
    return stopping ? signalled() : WORKER_EXIT.ok;
  } catch (err) {
    const what = err instanceof TokenRefused || err instanceof ServiceUnavailable ? "" : "unexpected: ";
    report.step(null, "failed", `${what}${(err as Error).message}`, {}, "error");
    return WORKER_EXIT.failed;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    unlock();
  }
}
