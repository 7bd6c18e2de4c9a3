/**
 * The gates room's queries: the repository rows (their configuration gates
 * and breaker), the operator's pauses, and the facts a queued task's gate is
 * computed from. The room's classes take this interface, not the client.
 */
import type { Db } from "../store/db.js";
import type { Pause, Repo } from "../store/generated/sqlite/client.js";

/** The columns of a repository's row the gates record from its configuration. */
export type GateColumns = Pick<Repo, "configProblems" | "paused" | "dispatch" | "maxPerRepo" | "maxPerOrg">;

/** What a list of queued tasks' gates are read from. */
export interface WaitingFacts {
  repos: Repo[];
  pauses: Pause[];
  /** Claimed tasks by repository. */
  live: Array<{ repo: string; _count: { _all: number } }>;
  workers: Array<{ repos: string | null }>;
}

export interface GateQueries {
  repo(repo: string): Promise<Repo | null>;
  /** Creates the repository's row or writes its gates. */
  recordGates(installationId: number, repo: string, cols: GateColumns, now: Date): Promise<void>;
  forgetRepo(repo: string): Promise<void>;
  /**
   * Marks repositories the App cannot reach ("suspended", "removed"), or reachable again (null): an
   * installation's rows, or one repository's (created when it has none, so the mark holds its tasks).
   */
  setAccess(
    where: { installationId: number; repo?: string },
    access: "suspended" | "removed" | null,
    now: Date,
  ): Promise<void>;
  /** Repositories whose breaker waits on a probe run (at most 100). */
  probing(): Promise<Repo[]>;
  probeRun(runId: string): Promise<{ state: string; class: string | null } | null>;
  /** The probe never ran: the next claim probes. True when the row still had that probe. */
  probeAgain(repo: string, probeRunId: string | null, now: Date): Promise<boolean>;
  closeBreaker(repo: string, probeRunId: string | null, now: Date): Promise<boolean>;
  reopenBreaker(repo: string, probeRunId: string | null, trips: number, until: Date, now: Date): Promise<boolean>;
  pause(scope: string, reason: string, by: string, at: Date): Promise<Pause>;
  /** The number of pauses lifted. */
  resume(scope: string): Promise<number>;
  pauses(): Promise<Pause[]>;
  waitingFacts(repoIds: string[]): Promise<WaitingFacts>;
}

export function gateQueries(db: Db): GateQueries {
  return {
    repo: (repo) => db.repo.findUnique({ where: { id: repo } }),
    async recordGates(installationId, repo, cols, now) {
      await db.repo.upsert({
        where: { id: repo },
        create: { id: repo, installationId, owner: repo.split("/")[0]!, ...cols, configAt: now, updatedAt: now },
        update: { installationId, ...cols, configAt: now, updatedAt: now },
      });
    },
    async forgetRepo(repo) {
      await db.repo.deleteMany({ where: { id: repo } });
    },
    async setAccess(where, access, now) {
      if (where.repo === undefined) {
        // The installation's: a removed repository stays removed through a suspension and its end.
        const from = access === null ? "suspended" : null;
        await db.repo.updateMany({
          where: { installationId: where.installationId, access: from },
          data: { access, updatedAt: now },
        });
        return;
      }
      const repo = where.repo;
      if (access === null) {
        await db.repo.updateMany({ where: { id: repo }, data: { access, updatedAt: now } });
        return;
      }
      await db.repo.upsert({
        where: { id: repo },
        // Gates not read yet: the next configuration read writes them.
        create: {
          id: repo,
          installationId: where.installationId,
          owner: repo.split("/")[0]!,
          maxPerRepo: 0,
          maxPerOrg: 0,
          configAt: new Date(0),
          access,
          updatedAt: now,
        },
        update: { access, updatedAt: now },
      });
    },
    probing: () => db.repo.findMany({ where: { probeRunId: { not: null } }, take: 100 }),
    probeRun: (runId) => db.run.findUnique({ where: { id: runId }, select: { state: true, class: true } }),
    async probeAgain(repo, probeRunId, now) {
      const where = { id: repo, probeRunId };
      return (await db.repo.updateMany({ where, data: { probeRunId: null, updatedAt: now } })).count === 1;
    },
    async closeBreaker(repo, probeRunId, now) {
      const r = await db.repo.updateMany({
        where: { id: repo, probeRunId },
        data: {
          breakerClass: null,
          breakerWhy: null,
          breakerRuns: null,
          breakerOpenedAt: null,
          breakerUntil: null,
          breakerTrips: 0,
          probeRunId: null,
          breakerClosedAt: now,
          updatedAt: now,
        },
      });
      return r.count === 1;
    },
    async reopenBreaker(repo, probeRunId, trips, until, now) {
      const r = await db.repo.updateMany({
        where: { id: repo, probeRunId },
        data: { breakerUntil: until, breakerOpenedAt: now, breakerTrips: trips, probeRunId: null, updatedAt: now },
      });
      return r.count === 1;
    },
    pause: (scope, reason, by, at) =>
      db.pause.upsert({
        where: { scope },
        create: { scope, reason, by, at },
        update: { reason, by, at },
      }),
    async resume(scope) {
      return (await db.pause.deleteMany({ where: { scope } })).count;
    },
    pauses: () => db.pause.findMany({ orderBy: { scope: "asc" } }),
    async waitingFacts(repoIds) {
      const [repos, pauses, live, workers] = await Promise.all([
        db.repo.findMany({ where: { id: { in: repoIds } } }),
        db.pause.findMany(),
        db.task.groupBy({ by: ["repo"], where: { state: "claimed" }, _count: { _all: true } }),
        db.worker.findMany({ select: { repos: true } }),
      ]);
      return { repos, pauses, live, workers };
    },
  };
}
