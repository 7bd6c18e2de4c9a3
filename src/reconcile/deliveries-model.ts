/**
 * The missed-deliveries sweep's settings, report and saved state: what the
 * sweep (src/reconcile/deliveries.ts) reads, writes and answers.
 */
import type { Logger } from "pino";
import { DEFAULT_REDELIVERIES_PER_SWEEP } from "../config/defaults.js";
import type { ReconcileQueries } from "./queries.js";
import type { AppHooks, HookDelivery } from "../github/app-hooks.js";

export const CHECKPOINT = "hook-deliveries";
/** GitHub redelivers deliveries of the past 3 days. */
export const WINDOW_MS = 3 * 24 * 3_600_000;
/** A guid is asked for at most once an hour. */
export const ASK_EVERY_MS = 3_600_000;

export interface DeliveriesLimits {
  /** Listing pages read per sweep. */
  pages: number;
  /** Redeliveries requested per sweep. */
  redeliveries: number;
  /** Failed guids held at once; reading pauses (and resumes from its cursor) beyond it. */
  pending: number;
}
export const DEFAULT_LIMITS: DeliveriesLimits = {
  pages: 10,
  redeliveries: DEFAULT_REDELIVERIES_PER_SWEEP,
  pending: 2_000,
};

export interface DeliveriesReport {
  /** Delivery attempts read from the listing. */
  read: number;
  /** Guids without a successful attempt and not in the inbox, within the window. */
  missing: number;
  /** Redeliveries GitHub accepted. */
  redelivered: number;
  /** Missing guids not asked for: older than the window, or asked within the hour. */
  skipped: number;
  /** Missing guids left for the next sweep by the per-sweep bound. */
  deferred: number;
  errors: number;
  /** Dry run: redeliveries that would have been requested. */
  wouldRedeliver?: number;
}

/** A guid with failed attempts and no successful one: redelivered by its newest attempt. */
export interface Pending {
  /** The newest failed attempt. */
  id: number;
  /** When the first failed attempt seen was made: GitHub's window is counted from it. */
  first: string;
  event: string;
  installationId: number | null;
}

/** The checkpoint: the newest attempt examined, an unfinished older range, the failed guids. */
export interface State {
  newest: number | null;
  backlog: { cursor: string; floor: number | null } | null;
  pending: Record<string, Pending>;
}

export interface DeliveriesDeps {
  queries: Pick<
    ReconcileQueries,
    | "checkpoint"
    | "replaceCheckpoint"
    | "report"
    | "redeliveriesAsked"
    | "claimRedelivery"
    | "redeliveryFailed"
    | "inInbox"
  >;
  hooks: AppHooks;
  clock: { now(): Date };
  log: Logger;
  dryRun: boolean;
  limits?: Partial<DeliveriesLimits>;
}

/** What one sweep saw of a guid: a successful attempt, its newest failed one, its first failure. */
export interface Seen {
  ok: boolean;
  failed: HookDelivery | null;
  first: Date;
}
