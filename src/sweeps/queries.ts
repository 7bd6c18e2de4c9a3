/**
 * The sweeper's queries: leases that ran out, runs still owed a class, and
 * the repositories with queued work. `notHeld` narrows each to the
 * installations not held back (a `where` fragment on the task).
 */
import type { Db } from "../store/db.js";
import type { Run, Task } from "../store/generated/sqlite/client.js";

export interface SweepQueries {
  /** Claimed tasks whose lease expired before `now`, oldest expiry first. */
  expiredLeases(notHeld: object, now: Date, take: number): Promise<Task[]>;
  /** Claimed tasks with a run and no lease: their run ended and may be owed a class (at most 500). */
  settling(notHeld: object): Promise<Array<{ runId: string | null; installationId: number }>>;
  /** Of these runs, the ended ones without a class that may be classified by `now`, oldest end first. */
  owedRuns(runIds: string[], now: Date, take: number): Promise<Run[]>;
  /** Repositories with queued tasks. */
  queuedRepos(notHeld: object): Promise<Array<{ repo: string; installationId: number }>>;
}

export function sweepQueries(db: Db): SweepQueries {
  return {
    expiredLeases: (notHeld, now, take) =>
      db.task.findMany({
        where: { state: "claimed", leaseExpiresAt: { lt: now }, ...notHeld },
        orderBy: { leaseExpiresAt: "asc" },
        take,
      }),
    settling: (notHeld) =>
      db.task.findMany({
        where: { state: "claimed", leaseExpiresAt: null, runId: { not: null }, ...notHeld },
        select: { runId: true, installationId: true },
        take: 500,
      }),
    owedRuns: (runIds, now, take) =>
      db.run.findMany({
        where: {
          id: { in: runIds },
          class: null,
          state: { in: ["exited", "expired", "revoked"] },
          OR: [{ classifyAfter: null }, { classifyAfter: { lte: now } }],
        },
        orderBy: { endedAt: "asc" },
        take,
      }),
    async queuedRepos(notHeld) {
      const rows = await db.task.groupBy({ by: ["repo", "installationId"], where: { state: "queued", ...notHeld } });
      return rows;
    },
  };
}
