/**
 * A worker gives a run back before its agent started: preflight failed (the
 * clone, the disk, the agent binary). The task is queued again at once with
 * no attempt used and no class, through the machine (`run-released`); the
 * release is counted against the worker, never the task or the repository,
 * and a worker that keeps releasing is paused (workers/pauses.ts).
 */
import { leaseRefused } from "../refusal.js";
import type { Tasks } from "../apply/tasks.js";
import type { Worker } from "../workers/workers.js";
import type { PauseView, WorkerPauses } from "../workers/pauses.js";
import type { Leases } from "./leases.js";

export interface ReleaseAnswer {
  outcome: "released";
  task: { id: string; state: "queued" };
  run: { id: string; attempt: number; state: "released" };
  /** The worker's pause, when this release (or earlier ones) paused it: its next claim is refused until then. */
  paused: PauseView | null;
}

export class Releases {
  constructor(readonly deps: { leases: Pick<Leases, "runOf">; tasks: Tasks; pauses: WorkerPauses }) {}

  async release(worker: Worker, runId: string, leaseEpoch: string, reason: string): Promise<ReleaseAnswer> {
    const { run, task } = await this.deps.leases.runOf(worker, runId);
    const r = await this.deps.tasks.raise({ task, run }, { kind: "run-released", runId, leaseEpoch, reason });
    if (r.outcome === "refused") throw leaseRefused(r.message, r.reason);
    if (r.outcome !== "applied") throw leaseRefused("lease no longer held", "superseded");
    return {
      outcome: "released",
      task: { id: task.id, state: "queued" },
      run: { id: run.id, attempt: run.attempt, state: "released" },
      paused: await this.deps.pauses.note(worker.id),
    };
  }
}
