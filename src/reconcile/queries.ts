/**
 * The reconcile room's queries: its checkpoints (the delivery log's, the
 * failure streaks'), the redeliveries asked for, the sweep reports, and what
 * drift repair and the stale-branch listing read of repositories, tasks,
 * runs and label effects.
 */
import type { Db } from "../store/db.js";
import type { Checkpoint, Task } from "../store/generated/sqlite/client.js";

export interface SweepReportRow {
  kind: string;
  at: Date;
  counts: string;
  detail?: string | null;
}

export interface ReconcileQueries {
  checkpoint(name: string): Promise<Checkpoint | null>;
  /**
   * Writes the checkpoint only if no other replica wrote it since `readAt`
   * (null: it did not exist, and a row another replica created first stands).
   */
  replaceCheckpoint(name: string, readAt: Date | null, value: string, now: Date): Promise<void>;
  upsertCheckpoint(name: string, value: string, now: Date): Promise<void>;
  report(row: SweepReportRow): Promise<void>;
  /** When each of these guids was last asked for again. */
  redeliveriesAsked(guids: string[]): Promise<Array<{ guid: string; requestedAt: Date }>>;
  /** Claims the right to ask for a guid: no request for it since `askedBefore`, by any replica. */
  claimRedelivery(guid: string, event: string, now: Date, askedBefore: Date): Promise<boolean>;
  redeliveryFailed(guid: string, data: { lastError: string; requestedAt?: Date }): Promise<void>;
  /** The guids among these that are in the inbox. */
  inInbox(guids: string[]): Promise<string[]>;
  /** Installations deleted or suspended. */
  goneInstallations(): Promise<Array<{ id: number }>>;
  knownRepos(): Promise<Array<{ id: string; installationId: number }>>;
  /** Repositories with a task not done or cancelled. */
  unfinishedRepos(): Promise<Array<{ repo: string; installationId: number }>>;
  repoTasks(repo: string): Promise<Task[]>;
  /** The newest label effect of each task in the repository. */
  latestLabelSeqs(repo: string): Promise<Array<number | null>>;
  /** The tasks of these effects that are in one of these states, or were settled at or after `since`. */
  effectTasks(seqs: number[], states: string[], since: Date): Promise<Array<{ taskId: string | null }>>;
  repoInstallation(repo: string): Promise<{ installationId: number } | null>;
  /** The installation of any task in the repository. */
  taskInstallation(repo: string): Promise<{ installationId: number } | null>;
  runsOnBranches(branches: string[]): Promise<Array<{ branch: string; taskId: string }>>;
  /** The ids among these of tasks in the repository. */
  tasksIn(repo: string, taskIds: string[]): Promise<Array<{ id: string }>>;
}

export function reconcileQueries(db: Db): ReconcileQueries {
  return {
    checkpoint: (name) => db.checkpoint.findUnique({ where: { name } }),
    async replaceCheckpoint(name, readAt, value, now) {
      if (readAt) {
        await db.checkpoint.updateMany({
          where: { name, updatedAt: readAt },
          data: { value, updatedAt: now },
        });
        return;
      }
      await db.checkpoint.create({ data: { name, value, updatedAt: now } }).catch((err: unknown) => {
        if ((err as { code?: string }).code !== "P2002") throw err;
      });
    },
    async upsertCheckpoint(name, value, now) {
      await db.checkpoint.upsert({
        where: { name },
        create: { name, value, updatedAt: now },
        update: { value, updatedAt: now },
      });
    },
    async report(row) {
      await db.sweepReport.create({ data: row });
    },
    redeliveriesAsked: (guids) =>
      db.redelivery.findMany({
        where: { guid: { in: guids } },
        select: { guid: true, requestedAt: true },
      }),
    async claimRedelivery(guid, event, now, askedBefore) {
      const taken = await db.redelivery.updateMany({
        where: { guid, requestedAt: { lte: askedBefore } },
        data: { requestedAt: now, attempts: { increment: 1 }, lastError: null },
      });
      if (taken.count === 1) return true;
      try {
        await db.redelivery.create({ data: { guid, event, requestedAt: now } });
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === "P2002") return false;
        throw err;
      }
    },
    async redeliveryFailed(guid, data) {
      await db.redelivery.update({ where: { guid }, data });
    },
    async inInbox(guids) {
      const rows = await db.delivery.findMany({
        where: { deliveryId: { in: guids } },
        select: { deliveryId: true },
      });
      return rows.map((r) => r.deliveryId);
    },
    goneInstallations: () =>
      db.installation.findMany({
        where: { OR: [{ deletedAt: { not: null } }, { suspendedAt: { not: null } }] },
        select: { id: true },
      }),
    knownRepos: () => db.repo.findMany({ select: { id: true, installationId: true } }),
    async unfinishedRepos() {
      const rows = await db.task.groupBy({
        by: ["repo", "installationId"],
        where: { state: { notIn: ["done", "cancelled"] } },
      });
      return rows;
    },
    repoTasks: (repo) => db.task.findMany({ where: { repo } }),
    async latestLabelSeqs(repo) {
      const latest = await db.effect.groupBy({
        by: ["taskId"],
        where: { repo, kind: "label", taskId: { not: null } },
        _max: { seq: true },
      });
      return latest.map((l) => l._max.seq);
    },
    effectTasks: (seqs, states, since) =>
      db.effect.findMany({
        where: { seq: { in: seqs }, OR: [{ state: { in: states } }, { doneAt: { gte: since } }] },
        select: { taskId: true },
      }),
    repoInstallation: (repo) => db.repo.findUnique({ where: { id: repo }, select: { installationId: true } }),
    taskInstallation: (repo) => db.task.findFirst({ where: { repo }, select: { installationId: true } }),
    runsOnBranches: (branches) =>
      db.run.findMany({
        where: { branch: { in: branches } },
        select: { branch: true, taskId: true },
      }),
    tasksIn: (repo, taskIds) => db.task.findMany({ where: { id: { in: taskIds }, repo }, select: { id: true } }),
  };
}
