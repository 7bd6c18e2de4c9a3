/**
 * The operator's view of the inbox: deliveries listed by state, and how many
 * are in each. A delivery waiting for a retry after a failure is "retrying",
 * apart from fresh pending ones: during a GitHub outage that number grows
 * while parked stays zero, and that is what an operator wants to see.
 */
import { type ErrorEntry, parseRing } from "../store/error-ring.js";
import type { InboxQueries } from "./queries.js";

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
  /** Why it was stored as ignored at ingest or collapsed into a later one; null otherwise. */
  note: string | null;
  errors: ErrorEntry[];
}

export async function listDeliveries(
  queries: Pick<InboxQueries, "listedDeliveries">,
  filter: { state?: string; limit?: number } = {},
): Promise<DeliverySummary[]> {
  const rows = await queries.listedDeliveries(filter.state, Math.min(filter.limit ?? 100, 1000));
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
    note: r.note,
    errors: parseRing(r.errors),
  }));
}

export interface DeliveryTally {
  /** By stored state, as the table holds them. */
  counts: Record<string, number>;
  /** By listed state, every state present (zero included): fresh pending apart from retrying. */
  summary: Record<ListedState, number>;
}

/** The deliveries counted by state, in one grouped read and one count of the retrying ones. */
export async function deliveryTally(queries: Pick<InboxQueries, "deliveryCounts">): Promise<DeliveryTally> {
  const { groups, retrying } = await queries.deliveryCounts();
  const counts = Object.fromEntries(groups.map((g) => [g.state, g._count._all]));
  const summary = Object.fromEntries(LISTED_STATES.map((s) => [s, 0])) as Record<ListedState, number>;
  for (const g of groups) if (g.state in summary) summary[g.state as ListedState] = g._count._all;
  summary.pending -= retrying;
  summary.retrying = retrying;
  return { counts, summary };
}
