/**
 * The operator's side of worker tokens: list them (never the secret) and
 * revoke a worker (rotation is Workers.rotate). Revoking releases the worker's live leases
 * through the state machine (`worker-revoked`): the run ends as `revoked` and
 * the next sweep classifies it like any run that ended without a PR, so its
 * task goes back to the queue (or wherever its class sends it).
 */
import type { RaiseResult, TaskRef } from "../apply/tasks.js";
import type { TaskEvent } from "../machine/events.js";
import type { Worker, Workers } from "./workers.js";
import type { WorkersQueries } from "./queries.js";
import type { PauseView, WorkerPauses } from "./pauses.js";

export interface WorkerListing {
  id: string;
  name: string;
  repos: string[] | null;
  tokenHint: string;
  createdAt: string;
  lastSeenAt: string | null;
  rotatedAt: string | null;
  revokedAt: string | null;
  liveLeases: number;
  /** While it is paused (too many releases or lost leases): until when and why; null otherwise. */
  paused: PauseView | null;
}

export interface WorkerTokensDeps {
  queries: Pick<WorkersQueries, "allWorkers" | "liveRunsOf" | "liveRunsOfWorker">;
  workers: Workers;
  pauses: Pick<WorkerPauses, "pauseOf">;
  tasks: { raise(ref: TaskRef, event: TaskEvent): Promise<RaiseResult> };
}

/**
 * A claim that authenticated just before the revocation may land just after
 * the first look at the worker's runs: look again, a few times at most.
 */
const RELEASE_ROUNDS = 3;

export class WorkerTokens {
  constructor(readonly deps: WorkerTokensDeps) {}

  async list(): Promise<WorkerListing[]> {
    const { queries } = this.deps;
    const workers = await queries.allWorkers();
    const live = await queries.liveRunsOf(workers.map((w) => w.id));
    const leases = new Map<string, number>();
    for (const r of live) leases.set(r.workerId!, (leases.get(r.workerId!) ?? 0) + 1);
    return workers.map((w) => listing(w, leases.get(w.id) ?? 0, this.deps.workers, this.deps.pauses.pauseOf(w)));
  }

  /**
   * Revokes the worker and releases its live leases. Safe to repeat: a
   * second call finds the worker revoked already and releases whatever is
   * still live. Null: no such worker.
   */
  async revoke(id: string): Promise<{ worker: Worker; released: number } | null> {
    const worker = await this.deps.workers.revoke(id);
    if (!worker) return null;
    let released = 0;
    for (let round = 0; round < RELEASE_ROUNDS; round++) {
      const runs = await this.deps.queries.liveRunsOfWorker(id);
      if (runs.length === 0) break;
      for (const run of runs) {
        const r = await this.deps.tasks.raise(
          { taskId: run.taskId },
          { kind: "worker-revoked", runId: run.id, workerName: worker.name },
        );
        if (r.outcome === "applied") released++;
      }
    }
    return { worker, released };
  }
}

function listing(w: Worker, liveLeases: number, workers: Workers, paused: PauseView | null): WorkerListing {
  return {
    id: w.id,
    name: w.name,
    repos: workers.reposOf(w),
    tokenHint: w.tokenHint,
    createdAt: w.createdAt.toISOString(),
    lastSeenAt: w.lastSeenAt?.toISOString() ?? null,
    rotatedAt: w.rotatedAt?.toISOString() ?? null,
    revokedAt: w.revokedAt?.toISOString() ?? null,
    liveLeases,
    paused,
  };
}
