/**
 * What the inbox room reads and writes through the client: the delivery rows
 * the processor claims, renews and releases (inbox/store.ts), and the
 * operator's list and counts of them (inbox/view.ts). The batched insert and
 * the writes that move a key's head (inbox/heads.ts) go through the raw
 * driver and are not here. The room's classes take this interface, not the
 * client.
 */
import type { Db } from "../store/db.js";
import type { Delivery } from "../store/generated/sqlite/client.js";

/** A delivery's row. */
export type DeliveryRow = Delivery;

/** A delivery as listed: everything but its payload. */
export type ListedDelivery = Omit<Delivery, "payload">;

export interface InboxQueries {
  /** These deliveries, in seq order. */
  deliveriesBySeq(seqs: number[]): Promise<Delivery[]>;
  /** The key's next pending deliveries after `seq`, oldest first, at most `take` ([taskKey, state, seq] index). */
  nextPending(
    taskKey: string,
    seq: number,
    take: number,
  ): Promise<Array<Pick<Delivery, "seq" | "deliveryId" | "collapse" | "attempts">>>;
  /** Whether the key has a pending or processing delivery. */
  hasOpen(taskKey: string): Promise<boolean>;
  /** The body of the key's newest delivery of `event`, in any state, or null. */
  newestPayload(taskKey: string, event: string): Promise<string | null>;
  /** Takes the delivery as it was read; false when another processor changed it first. */
  claimDelivery(head: Delivery, owner: string, lockedUntil: Date): Promise<boolean>;
  /** False when the owner no longer holds the claim. */
  renewClaim(seq: number, owner: string, lockedUntil: Date): Promise<boolean>;
  /** The number of processing deliveries put back to pending. */
  /** Deliveries being processed (all, or those `owner` holds) back to pending. */
  releaseProcessing(owner?: string): Promise<number>;
  /** A claimed delivery back to pending, due at `now`, its attempt given back. */
  releaseDelivery(seq: number, owner: string, now: Date): Promise<void>;
  /** Deliveries in a listed state (inbox/view.ts), newest first, without their payload. */
  listedDeliveries(state: string | undefined, take: number): Promise<ListedDelivery[]>;
  /** Deliveries counted by stored state, and the pending ones that failed before. */
  deliveryCounts(): Promise<{ groups: Array<{ state: string; _count: { _all: number } }>; retrying: number }>;
}

const whereState = (state: string | undefined) => {
  if (!state) return {};
  if (state === "retrying") return { state: "pending", attempts: { gt: 0 } };
  if (state === "pending") return { state: "pending", attempts: 0 };
  return { state };
};

export function inboxQueries(db: Db): InboxQueries {
  return {
    deliveriesBySeq: (seqs) =>
      db.delivery.findMany({
        where: { seq: { in: seqs } },
        orderBy: { seq: "asc" },
      }),
    newestPayload: async (taskKey, event) =>
      (
        await db.delivery.findFirst({
          where: { taskKey, event },
          orderBy: { seq: "desc" },
          select: { payload: true },
        })
      )?.payload ?? null,
    nextPending: (taskKey, seq, take) =>
      db.delivery.findMany({
        where: { taskKey, state: "pending", seq: { gt: seq } },
        orderBy: { seq: "asc" },
        take,
        select: { seq: true, deliveryId: true, collapse: true, attempts: true },
      }),
    hasOpen: async (taskKey) =>
      (await db.delivery.findFirst({
        where: { taskKey, state: { in: ["pending", "processing"] } },
        select: { seq: true },
      })) !== null,
    async claimDelivery(head, owner, lockedUntil) {
      const won = await db.delivery.updateMany({
        where: { seq: head.seq, state: head.state, lockedUntil: head.lockedUntil, head: true },
        data: {
          state: "processing",
          lockedBy: owner,
          lockedUntil,
          attempts: { increment: 1 },
        },
      });
      return won.count === 1;
    },
    async renewClaim(seq, owner, lockedUntil) {
      const r = await db.delivery.updateMany({
        where: { seq, state: "processing", lockedBy: owner },
        data: { lockedUntil },
      });
      return r.count === 1;
    },
    async releaseProcessing(owner) {
      const r = await db.delivery.updateMany({
        where: { state: "processing", ...(owner ? { lockedBy: owner } : {}) },
        data: { state: "pending", lockedBy: null, lockedUntil: null },
      });
      return r.count;
    },
    async releaseDelivery(seq, owner, now) {
      await db.delivery.updateMany({
        where: { seq, state: "processing", lockedBy: owner },
        data: { state: "pending", lockedBy: null, lockedUntil: null, nextAttemptAt: now, attempts: { decrement: 1 } },
      });
    },
    listedDeliveries: (state, take) =>
      db.delivery.findMany({
        where: whereState(state),
        orderBy: { seq: "desc" },
        take,
        omit: { payload: true },
      }),
    async deliveryCounts() {
      const [groups, retrying] = await Promise.all([
        db.delivery.groupBy({ by: ["state"], _count: { _all: true } }),
        db.delivery.count({ where: { state: "pending", attempts: { gt: 0 } } }),
      ]);
      return { groups, retrying };
    },
  };
}
