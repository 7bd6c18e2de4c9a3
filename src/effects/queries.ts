/**
 * What the effects room reads and writes: the outbox's effect rows
 * (effects/outbox.ts), each installation's pace and holds
 * (effects/installations.ts), and the task, its runs and its receipt that an
 * effect is performed on and its check run shows (effects/executor.ts,
 * effects/check-run-view.ts), and what GitHub already said (effects/seen.ts).
 * The room's classes take this interface, not the client.
 */
import type { Db } from "../store/db.js";
import { isUniqueViolation } from "../store/sql.js";
import type { CompletionReceipt, Effect, Installation, Run, Task } from "../store/generated/sqlite/client.js";

export interface OutboxQueries {
  /** Installations with effects due now, not in `skip`, lowest first (at most `take`). */
  dueInstallations(now: Date, skip: ReadonlySet<number>, take: number): Promise<Array<{ installationId: number }>>;
  /**
   * The installation's due effects, first lane first and oldest first within it (at most 5): by creation, which
   * an effect that superseded others has from the oldest of them (apply/coalesce.ts).
   */
  dueEffects(installationId: number, now: Date): Promise<Effect[]>;
  /**
   * The key of a newer effect of the coalescing key that does what the effect `seq` would: any but one
   * pending and due only later (a debounced effect's next window); null when there is none.
   */
  newerOf(coalesceKey: string, seq: number, now: Date): Promise<string | null>;
  /** Takes the effect as it was read, maybe-sent when its previous performer died holding it. */
  claimEffect(c: Effect, owner: string, lockedUntil: Date): Promise<boolean>;
  /** A claimed effect back to pending at `at`. */
  retryEffect(
    seq: number,
    owner: string,
    at: Date,
    errors: string,
    opts: { countAttempt: boolean; maybeSent: boolean; behind?: Date; lane?: number },
  ): Promise<void>;
  /** The number of pending effects dropped. */
  dropPendingEffects(where: { installationId: number } | { repo: string }, why: string, now: Date): Promise<number>;
  /** "removed" while the repository is removed from its installation (the gates' mark), else null. */
  repoAccess(repo: string): Promise<string | null>;
  /**
   * Pending effects held until their installation or repository comes back (held), or all due now again
   * (a token pause of the installation's ends with it); how many.
   */
  holdEffects(where: { installationId: number } | { repo: string }, held: boolean, now: Date): Promise<number>;
  /** The number of running effects put back to pending, maybe-sent. */
  releaseRunningEffects(): Promise<number>;
  replayEffect(id: string, now: Date): Promise<boolean>;
  /** Effects performable now or in flight. */
  activeEffects(now: Date): Promise<number>;
  /** Effects in a state or of a task, a task's oldest first, otherwise newest first. */
  effects(filter: { state?: string; taskId?: string; take: number }): Promise<Effect[]>;
  effectStates(): Promise<Array<{ state: string; _count: { _all: number } }>>;
}

export interface InstallationQueries {
  /** Rejects with Prisma's P2002 when the row exists. */
  createInstallation(id: number, now: Date): Promise<void>;
  /** Uninstalled or suspended at `now`. */
  installationGone(id: number, mark: { deletedAt: Date } | { suspendedAt: Date }, now: Date): Promise<void>;
  /** Managed again, with a clean slate. */
  installationBack(id: number, now: Date): Promise<void>;
  /** Takes the installation's write slot when it is due; false when it is not (or there is no row). */
  takeWriteSlot(id: number, next: Date, now: Date): Promise<boolean>;
  nextWriteAt(id: number): Promise<{ nextWriteAt: Date } | null>;
  rateLimited(id: number, until: Date, now: Date): Promise<void>;
  installationFailures(id: number): Promise<{ failures: number } | null>;
  pauseInstallation(id: number, failures: number, until: Date, why: string, now: Date): Promise<void>;
  clearInstallationPause(id: number, now: Date): Promise<void>;
  /** Installations rate limited or paused after `now`, uninstalled or suspended. */
  heldInstallations(now: Date): Promise<Installation[]>;
  installationStanding(id: number): Promise<{ deletedAt: Date | null; suspendedAt: Date | null } | null>;
}

export interface CheckRunQueries {
  task(id: string): Promise<Task | null>;
  /** The task's runs whose agent started (not aborted or released), oldest first. */
  runsShown(taskId: string): Promise<Run[]>;
  receiptOf(taskId: string): Promise<CompletionReceipt | null>;
  /** The keys of the task's effects that start with `prefix`. */
  effectKeys(taskId: string, prefix: string): Promise<Array<{ key: string }>>;
}

export interface EffectsQueries extends OutboxQueries, InstallationQueries, CheckRunQueries {
  run(id: string): Promise<Run | null>;
}

const due = (now: Date) => ({
  OR: [
    { state: "pending", nextAttemptAt: { lte: now } },
    // A performer that died holding it: its lock ran out.
    { state: "running", lockedUntil: { lt: now } },
  ],
});

/** When held effects come due: never, until they are let go. */
export const HELD = new Date("9999-12-31T00:00:00.000Z");

export function effectsQueries(db: Db): EffectsQueries {
  return {
    dueInstallations: (now, skip, take) =>
      db.effect.findMany({
        where: { ...due(now), ...(skip.size ? { installationId: { notIn: [...skip] } } : {}) },
        select: { installationId: true },
        distinct: ["installationId"],
        orderBy: { installationId: "asc" },
        take,
      }),
    dueEffects: (installationId, now) =>
      db.effect.findMany({
        where: { installationId, ...due(now) },
        orderBy: [{ lane: "asc" }, { createdAt: "asc" }, { seq: "asc" }],
        take: 5,
      }),
    newerOf: async (coalesceKey, seq, now) =>
      (
        await db.effect.findFirst({
          where: {
            coalesceKey,
            seq: { gt: seq },
            NOT: { state: "pending", nextAttemptAt: { gt: now } },
          },
          select: { key: true },
          orderBy: { seq: "desc" },
        })
      )?.key ?? null,
    async claimEffect(c, owner, lockedUntil) {
      const won = await db.effect.updateMany({
        where: { seq: c.seq, state: c.state, lockedUntil: c.lockedUntil },
        data: {
          state: "running",
          lockedBy: owner,
          lockedUntil,
          attempts: { increment: 1 },
          ...(c.state === "running" ? { maybeSent: true } : {}),
        },
      });
      return won.count === 1;
    },
    async retryEffect(seq, owner, at, errors, opts) {
      await db.effect.updateMany({
        where: { seq, state: "running", lockedBy: owner },
        data: {
          state: "pending",
          lockedBy: null,
          lockedUntil: null,
          nextAttemptAt: at,
          errors,
          ...(opts.countAttempt ? {} : { attempts: { decrement: 1 } }),
          ...(opts.maybeSent ? { maybeSent: true } : {}),
          ...(opts.behind ? { createdAt: opts.behind } : {}),
          ...(opts.lane !== undefined ? { lane: opts.lane } : {}),
        },
      });
    },
    async dropPendingEffects(where, why, now) {
      const r = await db.effect.updateMany({
        where: { ...where, state: "pending" },
        data: { state: "dropped", note: why, doneAt: now },
      });
      return r.count;
    },
    async repoAccess(repo) {
      return (await db.repo.findUnique({ where: { id: repo }, select: { access: true } }))?.access ?? null;
    },
    async holdEffects(where, held, now) {
      const r = await db.effect.updateMany({
        where: { ...where, state: "pending", ...(held ? {} : { nextAttemptAt: { gt: now } }) },
        data: { nextAttemptAt: held ? HELD : now },
      });
      return r.count;
    },
    async releaseRunningEffects() {
      const r = await db.effect.updateMany({
        where: { state: "running" },
        data: { state: "pending", lockedBy: null, lockedUntil: null, maybeSent: true },
      });
      return r.count;
    },
    async replayEffect(id, now) {
      const r = await db.effect.updateMany({
        where: { id, state: "parked" },
        data: { state: "pending", attempts: 0, nextAttemptAt: now, note: null },
      });
      return r.count === 1;
    },
    activeEffects: (now) =>
      db.effect.count({
        where: { OR: [{ state: "pending", nextAttemptAt: { lte: now } }, { state: "running" }] },
      }),
    effects: (filter) =>
      db.effect.findMany({
        where: {
          ...(filter.state ? { state: filter.state } : {}),
          ...(filter.taskId ? { taskId: filter.taskId } : {}),
        },
        orderBy: { seq: filter.taskId ? "asc" : "desc" },
        take: filter.take,
      }),
    // Read into a constant: given the method's return type as context, Prisma's groupBy types its arguments wrong.
    effectStates: async () => {
      const rows = await db.effect.groupBy({ by: ["state"], _count: { _all: true } });
      return rows;
    },

    async createInstallation(id, now) {
      await db.installation.create({ data: { id, nextWriteAt: now, updatedAt: now } });
    },
    async installationGone(id, mark, now) {
      await db.installation.upsert({
        where: { id },
        create: { id, nextWriteAt: now, updatedAt: now, ...mark },
        update: { ...mark, updatedAt: now },
      });
    },
    async installationBack(id, now) {
      await db.installation.upsert({
        where: { id },
        create: { id, nextWriteAt: now, updatedAt: now },
        update: { suspendedAt: null, deletedAt: null, pausedUntil: null, failures: 0, updatedAt: now },
      });
    },
    async takeWriteSlot(id, next, now) {
      const took = await db.installation.updateMany({
        where: { id, nextWriteAt: { lte: now } },
        data: { nextWriteAt: next, updatedAt: now },
      });
      return took.count === 1;
    },
    nextWriteAt: (id) => db.installation.findUnique({ where: { id }, select: { nextWriteAt: true } }),
    async rateLimited(id, until, now) {
      await db.installation.updateMany({
        where: { id },
        data: { rateLimitedUntil: until, updatedAt: now },
      });
    },
    installationFailures: (id) => db.installation.findUnique({ where: { id }, select: { failures: true } }),
    async pauseInstallation(id, failures, until, why, now) {
      await db.installation.updateMany({
        where: { id },
        data: { failures, pausedUntil: until, pauseReason: why, updatedAt: now },
      });
    },
    async clearInstallationPause(id, now) {
      await db.installation.updateMany({
        where: { id },
        data: { failures: 0, pausedUntil: null, pauseReason: null, updatedAt: now },
      });
    },
    heldInstallations: (now) =>
      db.installation.findMany({
        where: {
          OR: [
            { rateLimitedUntil: { gt: now } },
            { pausedUntil: { gt: now } },
            { deletedAt: { not: null } },
            { suspendedAt: { not: null } },
          ],
        },
      }),
    installationStanding: (id) =>
      db.installation.findUnique({ where: { id }, select: { deletedAt: true, suspendedAt: true } }),

    task: (id) => db.task.findUnique({ where: { id } }),
    run: (id) => db.run.findUnique({ where: { id } }),
    runsShown: (taskId) =>
      db.run.findMany({ where: { taskId, state: { notIn: ["aborted", "released"] } }, orderBy: { startedAt: "asc" } }),
    receiptOf: (taskId) => db.completionReceipt.findUnique({ where: { taskId } }),
    effectKeys: (taskId, prefix) =>
      db.effect.findMany({ where: { taskId, key: { startsWith: prefix } }, select: { key: true } }),
  };
}

/** What GitHub already said (effects/seen.ts): issues' labels, Orchestra's check runs by commit. */
export interface SeenQueries {
  labelsOf(repo: string, issue: number): Promise<string | null>;
  setLabels(repo: string, issue: number, labels: string, at: Date): Promise<void>;
  forgetLabels(repo: string, issue: number): Promise<void>;
  /** The check run's row: undefined when there is none, a null id while its creation is under way. */
  checkRunOf(repo: string, headSha: string): Promise<{ checkRunId: bigint | null } | undefined>;
  setCheckRun(repo: string, headSha: string, checkRunId: number | null, at: Date): Promise<void>;
}

/** An upsert that a concurrent insert of the same key turns into the update it should have been. */
async function upsert(create: () => Promise<unknown>, update: () => Promise<unknown>): Promise<void> {
  const n = (await update()) as { count: number };
  if (n.count > 0) return;
  try {
    await create();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    await update();
  }
}

export function seenQueries(db: Db): SeenQueries {
  return {
    labelsOf: async (repo, issue) =>
      (await db.issueLabelsSeen.findUnique({ where: { repo_issue: { repo, issue } } }))?.labels ?? null,
    setLabels: (repo, issue, labels, seenAt) =>
      upsert(
        () => db.issueLabelsSeen.create({ data: { repo, issue, labels, seenAt } }),
        () => db.issueLabelsSeen.updateMany({ where: { repo, issue }, data: { labels, seenAt } }),
      ),
    forgetLabels: async (repo, issue) => {
      await db.issueLabelsSeen.deleteMany({ where: { repo, issue } });
    },
    checkRunOf: async (repo, headSha) =>
      (await db.checkRunSeen.findUnique({ where: { repo_headSha: { repo, headSha } } })) ?? undefined,
    setCheckRun: (repo, headSha, id, seenAt) => {
      const checkRunId = id === null ? null : BigInt(id);
      return upsert(
        () => db.checkRunSeen.create({ data: { repo, headSha, checkRunId, seenAt } }),
        () => db.checkRunSeen.updateMany({ where: { repo, headSha }, data: { checkRunId, seenAt } }),
      );
    },
  };
}
