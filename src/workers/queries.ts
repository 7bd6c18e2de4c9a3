/** What the workers room reads and writes: the worker rows, and the live runs they hold. */
import type { Db } from "../store/db.js";
import type { Worker } from "../store/generated/sqlite/client.js";

export interface NewWorker {
  id: string;
  name: string;
  tokenHash: string;
  tokenHint: string;
  /** The repositories it may claim from (stored as JSON); null: all. */
  repos: string[] | null;
  createdAt: Date;
}

export interface WorkersQueries {
  createWorker(w: NewWorker): Promise<void>;
  /** Sets a new token on a worker that is not revoked; the number of rows changed. */
  rotateToken(id: string, token: { tokenHash: string; tokenHint: string; rotatedAt: Date }): Promise<number>;
  /** Marks the worker revoked unless it is already. */
  markRevoked(id: string, at: Date): Promise<void>;
  workerById(id: string): Promise<Worker | null>;
  workerByTokenHash(tokenHash: string): Promise<Worker | null>;
  markSeen(id: string, at: Date): Promise<void>;
  /** Every worker, oldest first. */
  allWorkers(): Promise<Worker[]>;
  /** The live runs of these workers (one row per run). */
  liveRunsOf(workerIds: string[]): Promise<Array<{ workerId: string | null }>>;
  /** The live runs of one worker. */
  liveRunsOfWorker(workerId: string): Promise<Array<{ id: string; taskId: string }>>;
  /**
   * The worker's runs that ended since `since` without their agent's work:
   * released before it started, or leases lost without an exit (not stalls,
   * whose worker is alive). Newest first.
   */
  lostRuns(
    workerId: string,
    since: Date,
  ): Promise<Array<{ state: string; endedAt: Date | null; endReason: string | null }>>;
  /** Pauses the worker until `until`, saying why. */
  setPause(id: string, until: Date, reason: string): Promise<void>;
  /** Lifts its pause; releases before `at` no longer count. The number of rows changed (0: no such worker). */
  resume(id: string, at: Date): Promise<number>;
}

export function workersQueries(db: Db): WorkersQueries {
  return {
    createWorker: async (w) => {
      await db.worker.create({
        data: {
          id: w.id,
          name: w.name,
          tokenHash: w.tokenHash,
          tokenHint: w.tokenHint,
          repos: w.repos ? JSON.stringify(w.repos) : null,
          createdAt: w.createdAt,
        },
      });
    },
    rotateToken: async (id, token) => {
      const { count } = await db.worker.updateMany({
        where: { id, revokedAt: null },
        data: { tokenHash: token.tokenHash, tokenHint: token.tokenHint, rotatedAt: token.rotatedAt },
      });
      return count;
    },
    markRevoked: async (id, at) => {
      await db.worker.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
    },
    workerById: (id) => db.worker.findUnique({ where: { id } }),
    workerByTokenHash: (tokenHash) => db.worker.findUnique({ where: { tokenHash } }),
    markSeen: async (id, at) => {
      await db.worker.update({ where: { id }, data: { lastSeenAt: at } });
    },
    allWorkers: () => db.worker.findMany({ orderBy: { createdAt: "asc" } }),
    liveRunsOf: (workerIds) =>
      db.run.findMany({ where: { state: "live", workerId: { in: workerIds } }, select: { workerId: true } }),
    liveRunsOfWorker: (workerId) =>
      db.run.findMany({ where: { workerId, state: "live" }, select: { id: true, taskId: true } }),
    lostRuns: (workerId, since) =>
      db.run.findMany({
        where: {
          workerId,
          endedAt: { gte: since },
          OR: [{ state: "released" }, { state: "expired", report: null, stalled: false }],
        },
        orderBy: { endedAt: "desc" },
        select: { state: true, endedAt: true, endReason: true },
        take: 100,
      }),
    setPause: async (id, until, reason) => {
      await db.worker.updateMany({ where: { id }, data: { pausedUntil: until, pauseReason: reason } });
    },
    resume: async (id, at) => {
      const r = await db.worker.updateMany({
        where: { id },
        data: { pausedUntil: null, pauseReason: null, resumedAt: at },
      });
      return r.count;
    },
  };
}
