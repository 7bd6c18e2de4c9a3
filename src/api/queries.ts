/**
 * The operator API's queries: the task and run lists (api/tasks.ts,
 * api/runs.ts), the sweep reports (api/sweeps.ts), the Idempotency-Key rows
 * (api/idempotency.ts), and the facts a queued task's gate is computed from
 * (as the gates room reads them).
 */
import type { Db } from "../store/db.js";
import type { IdempotentResponse, Run, SweepReport, Task, Worker } from "../store/generated/sqlite/client.js";
import { gateQueries, type GateQueries } from "../gates/queries.js";

export interface ApiQueries extends Pick<GateQueries, "waitingFacts"> {
  /** The first 500 tasks (in a state, of a repository, or all), in claim order. */
  taskList(state: string | undefined, repo: string | undefined): Promise<Task[]>;
  taskExists(id: string): Promise<{ id: string } | null>;
  runsByIds(ids: string[]): Promise<Run[]>;
  taskNames(taskIds: string[]): Promise<Array<{ id: string; repo: string; issue: number }>>;
  workerNames(workerIds: string[]): Promise<Array<{ id: string; name: string }>>;
  /** The newest `limit` sweep reports (of one kind, or all). */
  sweepReports(kind: string | undefined, limit: number): Promise<SweepReport[]>;
  /** Inserts the key's row, state `running` (throws on a key already there). */
  createKey(key: string, bodyHash: string, createdAt: Date): Promise<void>;
  keyRow(key: string): Promise<IdempotentResponse | null>;
  /** Stores the answer on the key's running row created at `createdAt`. */
  finishKey(key: string, createdAt: Date, status: number, body: string): Promise<void>;
  /** Deletes the key's row as it was read (created at `createdAt`). */
  dropKey(key: string, createdAt: Date): Promise<void>;
  /** Takes over the key's running row created at `createdAt`; true when it was still that row. */
  takeOverKey(key: string, createdAt: Date, now: Date, bodyHash: string): Promise<boolean>;
  /** Deletes the key's running row created at `createdAt`. */
  releaseKey(key: string, createdAt: Date): Promise<void>;
  /** A worker's live runs, oldest first, and their tasks. */
  liveRunsOf(workerId: string): Promise<{ runs: Run[]; tasks: Task[] }>;
  workerRow(id: string): Promise<Worker | null>;
  effectState(id: string): Promise<{ state: string } | null>;
}

export function apiQueries(db: Db): ApiQueries {
  const gates = gateQueries(db);
  return {
    waitingFacts: (repoIds) => gates.waitingFacts(repoIds),
    taskList: (state, repo) =>
      db.task.findMany({
        where: { ...(state ? { state } : {}), ...(repo ? { repo } : {}) },
        orderBy: [{ priority: "asc" }, { queuedAt: "asc" }],
        take: 500,
      }),
    taskExists: (id) => db.task.findUnique({ where: { id }, select: { id: true } }),
    async liveRunsOf(workerId) {
      const runs = await db.run.findMany({ where: { workerId, state: "live" }, orderBy: { startedAt: "asc" } });
      const tasks = await db.task.findMany({ where: { id: { in: runs.map((r) => r.taskId) } } });
      return { runs, tasks };
    },
    workerRow: (id) => db.worker.findUnique({ where: { id } }),
    effectState: (id) => db.effect.findUnique({ where: { id }, select: { state: true } }),
    runsByIds: (ids) => db.run.findMany({ where: { id: { in: ids } } }),
    taskNames: (taskIds) =>
      db.task.findMany({ where: { id: { in: taskIds } }, select: { id: true, repo: true, issue: true } }),
    workerNames: (workerIds) =>
      db.worker.findMany({ where: { id: { in: workerIds } }, select: { id: true, name: true } }),
    sweepReports: (kind, limit) =>
      db.sweepReport.findMany({ where: kind ? { kind } : {}, orderBy: { seq: "desc" }, take: limit }),
    async createKey(key, bodyHash, createdAt) {
      await db.idempotentResponse.create({ data: { key, bodyHash, state: "running", status: 0, body: "", createdAt } });
    },
    keyRow: (key) => db.idempotentResponse.findUnique({ where: { key } }),
    async finishKey(key, createdAt, status, body) {
      await db.idempotentResponse.updateMany({
        where: { key, state: "running", createdAt },
        data: { state: "done", status, body },
      });
    },
    async dropKey(key, createdAt) {
      await db.idempotentResponse.deleteMany({ where: { key, createdAt } });
    },
    async takeOverKey(key, createdAt, now, bodyHash) {
      const taken = await db.idempotentResponse.updateMany({
        where: { key, state: "running", createdAt },
        data: { createdAt: now, bodyHash },
      });
      return taken.count === 1;
    },
    async releaseKey(key, createdAt) {
      await db.idempotentResponse.deleteMany({ where: { key, state: "running", createdAt } });
    },
  };
}
