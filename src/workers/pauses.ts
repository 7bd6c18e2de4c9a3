/**
 * Pausing a worker that keeps giving runs back. A worker whose machine is
 * broken (no disk, no agent binary, a clone that always fails) releases each
 * run before its agent starts, or dies and lets its leases expire; the task
 * goes back to the head of the queue and the same worker takes it again.
 * After `releases` such runs within `windowMinutes` it is paused: its claims
 * are refused with why and what to do, until `pauseMinutes` pass or an
 * operator resumes it. Releases never count against a task or a repository:
 * this is about the worker.
 */
import { Refusal } from "../refusal.js";
import { DEFAULT_WORKER_PAUSE, type WorkerPausePolicy } from "../config/defaults.js";
import type { Worker } from "./workers.js";
import type { WorkersQueries } from "./queries.js";

export interface PauseView {
  until: string;
  reason: string;
}

export class WorkerPauses {
  readonly policy: WorkerPausePolicy;

  constructor(
    readonly deps: {
      queries: Pick<WorkersQueries, "lostRuns" | "setPause" | "resume" | "workerById">;
      clock: { now(): Date };
      policy?: Partial<WorkerPausePolicy>;
    },
  ) {
    this.policy = { ...DEFAULT_WORKER_PAUSE, ...deps.policy };
  }

  /** The worker's pause while it holds; null when it is not paused (or the pause ran out). */
  pauseOf(worker: Pick<Worker, "pausedUntil" | "pauseReason">): PauseView | null {
    if (!worker.pausedUntil || worker.pausedUntil <= this.deps.clock.now()) return null;
    return { until: worker.pausedUntil.toISOString(), reason: worker.pauseReason ?? "paused" };
  }

  /**
   * After one of the worker's runs was released or lost its lease: pauses
   * the worker when that makes `releases` within the window. Returns the
   * pause it is under now, if any.
   */
  async note(workerId: string): Promise<PauseView | null> {
    const { queries, clock } = this.deps;
    const worker = await queries.workerById(workerId);
    if (!worker) return null;
    const now = clock.now();
    const windowStart = new Date(now.getTime() - this.policy.windowMinutes * 60_000);
    const since = worker.resumedAt && worker.resumedAt > windowStart ? worker.resumedAt : windowStart;
    const lost = await queries.lostRuns(workerId, since);
    if (lost.length < this.policy.releases) return this.pauseOf(worker);
    const released = lost.filter((r) => r.state === "released").length;
    const expired = lost.length - released;
    const what = [
      released ? `${released} run${released === 1 ? "" : "s"} released before the agent started` : null,
      expired ? `${expired} lease${expired === 1 ? "" : "s"} lost without an exit` : null,
    ]
      .filter(Boolean)
      .join(" and ");
    const last = lost[0]!.endReason ?? lost[0]!.state;
    const reason = `${what} within ${this.policy.windowMinutes} minutes; the last: ${last}`;
    const until = new Date(now.getTime() + this.policy.pauseMinutes * 60_000);
    await queries.setPause(workerId, until, reason);
    return { until: until.toISOString(), reason };
  }

  /** Refuses a claim of a paused worker, saying why and what to do. */
  assertClaimable(worker: Worker): void {
    const pause = this.pauseOf(worker);
    if (!pause) return;
    throw new Refusal(
      "conflict",
      `worker ${worker.name} (${worker.id}) is paused until ${pause.until}: ${pause.reason}. ` +
        `Fix what fails on its machine before the agent starts (clone, disk, agent binary), then resume it ` +
        `with \`orchestra workers resume ${worker.id}\` (POST /api/v1/workers/${worker.id}/resume), ` +
        `or wait until ${pause.until}`,
      { reason: "paused", retryable: false, pausedUntil: pause.until, pauseReason: pause.reason },
    );
  }

  /** Lifts the worker's pause; false when there is no such worker. */
  async resume(id: string): Promise<boolean> {
    return (await this.deps.queries.resume(id, this.deps.clock.now())) === 1;
  }
}
