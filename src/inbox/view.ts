/**
 * The operator's view of the inbox: deliveries listed by state, and how many
 * are in each. A delivery waiting for a retry after a failure is "retrying",
 * apart from fresh pending ones: during a GitHub outage that number grows
 * while parked stays zero, and that is what an operator wants to see.
 */
import type { Db } from "../store/db.js";
import { type ErrorEntry, parseRing } from "../store/error-ring.js";

/** The states an operator can list: the stored ones, and "retrying" (pending after a failed attempt). */
export const LISTED_STATES = ["pending", "retrying", "processing", "done", "ignored", "parked"] as const;
export type ListedState = (typeof LISTED_STATES)[number];

export interface DeliverySummary {
  seq: number;
  deliveryId: string;
  event: string;
  action: string | null;
  taskKey: string;
  state: string;
  attempts: number;
  receivedAt: Date;
  nextAttemptAt: Date;
  /** Start of the current failure window (null: it has not failed since it was received or replayed). */
  firstFailedAt: Date | null;
  processedAt: Date | null;
  errors: ErrorEntry[];
}

const whereState = (state: string | undefined) => {
  if (!state) return {};
  if (state === "retrying") return { state: "pending", attempts: { gt: 0 } };
  if (state === "pending") return { state: "pending", attempts: 0 };
  return { state };
};

export async function listDeliveries(db: Db, filter: { state?: string; limit?: number } = {}): Promise<DeliverySummary[]> {
  const rows = await db.delivery.findMany({
    where: whereState(filter.state),
    orderBy: { seq: "desc" },
    take: Math.min(filter.limit ?? 100, 1000),
    omit: { payload: true },
  });
  return rows.map((r) => ({
    seq: r.seq,
    deliveryId: r.deliveryId,
    event: r.event,
    action: r.action,
    taskKey: r.taskKey,
    state: r.state === "pending" && r.attempts > 0 ? "retrying" : r.state,
    attempts: r.attempts,
    receivedAt: r.receivedAt,
    nextAttemptAt: r.nextAttemptAt,
    firstFailedAt: r.firstFailedAt,
    processedAt: r.processedAt,
    errors: parseRing(r.errors),
  }));
}

/** Count of deliveries in each listed state, every state present (zero included). */
export async function deliverySummary(db: Db): Promise<Record<ListedState, number>> {
  const [groups, retrying] = await Promise.all([
    db.delivery.groupBy({ by: ["state"], _count: { _all: true } }),
    db.delivery.count({ where: { state: "pending", attempts: { gt: 0 } } }),
  ]);
  const out = Object.fromEntries(LISTED_STATES.map((s) => [s, 0])) as Record<ListedState, number>;
  for (const g of groups) if (g.state in out) out[g.state as ListedState] = g._count._all;
  out.pending -= retrying;
  out.retrying = retrying;
  return out;
}

/** Deliveries by stored state, as the table holds them. */
export async function deliveryCounts(db: Db): Promise<Record<string, number>> {
  const groups = await db.delivery.groupBy({ by: ["state"], _count: { _all: true } });
  return Object.fromEntries(groups.map((g) => [g.state, g._count._all]));
}
