/** The outbox's effect rows, as effects/outbox.ts and the executor read and write them (queries.ts composes all). */
import type { Db } from "../../store/db.js";
import type { Effect } from "../../store/generated/sqlite/client.js";

export interface OutboxQueries {
  /** Installations with effects due now, not in `skip`, lowest first (at most `take`). */
  dueInstallations(now: Date, skip: ReadonlySet<number>, take: number): Promise<Array<{ installationId: number }>>;
  /**
   * The installation's due effects, first lane first and oldest first within it (at most `take`): by creation,
   * which an effect that superseded others has from the oldest of them (apply/coalesce.ts).
   */
  dueEffects(installationId: number, now: Date, take: number): Promise<Effect[]>;
  /**
   * The key of a newer effect of the coalescing key that does what the effect `seq` would: any but one
   * pending and due only later (a debounced effect's next window); null when there is none.
   */
  newerOf(coalesceKey: string, seq: number, now: Date): Promise<string | null>;
  /** Takes the effect as it was read, maybe-sent when its previous performer died holding it. */
  claimEffect(c: Effect, owner: string, lockedUntil: Date): Promise<boolean>;
  /** Extends a running effect's claim while its performer holds it; false when the performer lost it. */
  renewEffect(seq: number, owner: string, lockedUntil: Date): Promise<boolean>;
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
  /** Effects being performed (all, or those `owner` holds) back to pending, marked maybe-sent. */
  releaseRunningEffects(owner?: string): Promise<number>;
  replayEffect(id: string, now: Date): Promise<boolean>;
  /** Effects performable now or in flight. */
  activeEffects(now: Date): Promise<number>;
  /** Effects in a state or of a task, a task's oldest first, otherwise newest first. */
  effects(filter: { state?: string; taskId?: string; take: number }): Promise<Effect[]>;
  effectStates(): Promise<Array<{ state: string; _count: { _all: number } }>>;
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

export function outboxQueries(db: Db): OutboxQueries {
  return {
    dueInstallations: (now, skip, take) =>
      db.effect.findMany({
        where: { ...due(now), ...(skip.size ? { installationId: { notIn: [...skip] } } : {}) },
        select: { installationId: true },
        distinct: ["installationId"],
        orderBy: { installationId: "asc" },
        take,
      }),
    dueEffects: (installationId, now, take) =>
      db.effect.findMany({
        where: { installationId, ...due(now) },
        orderBy: [{ lane: "asc" }, { createdAt: "asc" }, { seq: "asc" }],
        take,
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
    async renewEffect(seq, owner, lockedUntil) {
      const { count } = await db.effect.updateMany({
        where: { seq, state: "running", lockedBy: owner },
        data: { lockedUntil },
      });
      return count === 1;
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
    async releaseRunningEffects(owner) {
      const r = await db.effect.updateMany({
        where: { state: "running", ...(owner ? { lockedBy: owner } : {}) },
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
  };
}
