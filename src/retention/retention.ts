/**
 * Retention: old rows the service no longer needs are deleted on a schedule
 * (from the sweep loop, at most once an interval) and by `orchestra prune`.
 *
 * What goes, and why each age is what it is:
 *
 * - **Inbox rows** (`Delivery`) that are `done` or `ignored`, received more
 *   than `deliveriesDays` ago (default 7). The inbox recognises a redelivery
 *   only by its `deliveryId` (X-GitHub-Delivery), and GitHub lets a delivery be
 *   redelivered — with the same id — for 3 days after it was first sent. A
 *   row pruned inside that window would let a redelivery in as new work and
 *   run it twice; so the window may not be shorter than 4 days (3 days plus
 *   slack for clocks and for a redelivery requested at the window's end), and
 *   the default is a week.
 * - **Finished effects** (`done`, `dropped`, `dry-run`) finished more than
 *   `effectsDays` ago (default 14). An effect's key stops deduplicating once
 *   its row is gone. Most keys carry something that never comes again (a
 *   task version, a run id, a comment or delivery id, whose redelivery the
 *   inbox stops for 7 days); the few that can (a bad-configuration comment on
 *   one issue) are at worst written once more after two weeks.
 * - **Idempotency records** older than `idempotencyHours` (default 24): the
 *   worker API's Idempotency-Key replay window. Workers retry within seconds
 *   or minutes; a retry later than that is taken as a new call.
 * - **Sweep reports** older than `sweepReportsDays` (default 14) and **audit
 *   entries** older than `auditDays` (default 30).
 *
 * What never goes: deliveries and effects that are `pending`, `processing` or
 * `running` (work not done), `parked` ones (an operator must see them), and
 * history — Task, Run, Decision, DecisionDelivery, CompletionReceipt.
 *
 * Deletes are bounded: at most `batchSize` rows per statement, the oldest
 * first, and the service's run does at most `maxBatches` statements per
 * table, yielding between them, so a huge backlog never holds the database
 * (SQLite's one writer, PostgreSQL's row locks) for long. A run that leaves
 * rows behind comes back after `backlogMs` instead of a whole interval, so a
 * backlog shrinks steadily. Each statement is
 * `DELETE … WHERE pk IN (SELECT pk … LIMIT n) AND <the same condition>`,
 * which both providers run; the outer condition is checked again on the row
 * as it is when deleted. Replicas sharing a PostgreSQL database may prune at
 * once: a row one of them deleted is simply not there for the other.
 */
import type { Logger } from "pino";
import type { Database } from "../store/db.js";
import { atomically, select } from "../store/sql.js";
import type { RetentionPolicy } from "../config/defaults.js";

export const PRUNED_KINDS = ["deliveries", "effects", "idempotency", "sweepReports", "audit"] as const;
export type PrunedKind = (typeof PRUNED_KINDS)[number];
export type PruneCounts = Record<PrunedKind, number>;

interface Target {
  kind: PrunedKind;
  table: string;
  pk: string;
  /** SQL condition with one `?`: the cutoff. */
  where: string;
  age(p: RetentionPolicy): number;
}

const DAY = 24 * 3600_000;
const HOUR = 3600_000;

const TARGETS: readonly Target[] = [
  // Oldest first by arrival order (the [state, seq] index): the walk stops after a batch.
  {
    kind: "deliveries",
    table: "Delivery",
    pk: "seq",
    where: `"state" IN ('done', 'ignored') AND "receivedAt" < ?`,
    age: (p) => p.deliveriesDays * DAY,
  },
  // doneAt is set when an effect finishes; createdAt stands in for a row finished without one.
  {
    kind: "effects",
    table: "Effect",
    pk: "seq",
    where: `"state" IN ('done', 'dropped', 'dry-run') AND COALESCE("doneAt", "createdAt") < ?`,
    age: (p) => p.effectsDays * DAY,
  },
  {
    kind: "idempotency",
    table: "IdempotentResponse",
    pk: "key",
    where: `"createdAt" < ?`,
    age: (p) => p.idempotencyHours * HOUR,
  },
  { kind: "sweepReports", table: "SweepReport", pk: "seq", where: `"at" < ?`, age: (p) => p.sweepReportsDays * DAY },
  { kind: "audit", table: "AuditEntry", pk: "seq", where: `"at" < ?`, age: (p) => p.auditDays * DAY },
];

export interface PruneOptions {
  /** Count what would go; delete nothing. */
  dryRun?: boolean;
  /** Rows per DELETE statement (default 1,000). */
  batchSize?: number;
  /** Statements per table in this run (default: until nothing is left). */
  maxBatches?: number;
  /** Called after each statement with the kind and its rows deleted so far in this run. */
  onProgress?: (kind: PrunedKind, deletedSoFar: number) => void;
}

export interface PruneResult {
  dryRun: boolean;
  /** Rows deleted (or, in a dry run, that would be) per kind. */
  counts: PruneCounts;
  /** Rows older than these (in the pruned states) are the ones that go. */
  cutoffs: Record<PrunedKind, Date>;
  /** False when a table hit maxBatches with rows still to go. */
  complete: boolean;
}

export const DEFAULT_BATCH_SIZE = 1_000;

export function cutoffsFor(policy: RetentionPolicy, now: Date): Record<PrunedKind, Date> {
  return Object.fromEntries(TARGETS.map((t) => [t.kind, new Date(now.getTime() - t.age(policy))])) as Record<
    PrunedKind,
    Date
  >;
}

export const totalOf = (counts: PruneCounts): number => PRUNED_KINDS.reduce((n, k) => n + counts[k], 0);

const zero = (): PruneCounts => ({ deliveries: 0, effects: 0, idempotency: 0, sweepReports: 0, audit: 0 });
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Deletes (or counts, in a dry run) what the policy no longer keeps, as of `now`. */
export async function prune(
  database: Pick<Database, "raw" | "provider">,
  policy: RetentionPolicy,
  now: Date,
  opts: PruneOptions = {},
): Promise<PruneResult> {
  const batch = Math.max(1, Math.floor(opts.batchSize ?? DEFAULT_BATCH_SIZE));
  const maxBatches = opts.maxBatches ?? Infinity;
  const cutoffs = cutoffsFor(policy, now);
  const counts = zero();
  let complete = true;
  for (const t of TARGETS) {
    const cutoff = cutoffs[t.kind];
    if (opts.dryRun) {
      const rows = await select(database, `SELECT COUNT(*) AS "n" FROM "${t.table}" WHERE ${t.where}`, [cutoff]);
      counts[t.kind] = Number(rows[0]?.["n"] ?? 0);
      continue;
    }
    const sql =
      `DELETE FROM "${t.table}" WHERE "${t.pk}" IN ` +
      `(SELECT "${t.pk}" FROM "${t.table}" WHERE ${t.where} ORDER BY "${t.pk}" LIMIT ${batch}) AND ${t.where}`;
    for (let i = 0; ; i++) {
      if (i >= maxBatches) {
        complete = false;
        break;
      }
      let changes = 0;
      await atomically(database, [{ sql, args: [cutoff, cutoff], check: (r) => ((changes = r.changes), null) }]);
      counts[t.kind] += changes;
      if (changes > 0) opts.onProgress?.(t.kind, counts[t.kind]);
      if (changes < batch) break;
      // Let requests and the inbox in between two statements.
      await yieldTurn();
    }
  }
  return { dryRun: Boolean(opts.dryRun), counts, cutoffs, complete };
}

export interface RetentionDeps {
  database: Pick<Database, "raw" | "provider">;
  policy: RetentionPolicy;
  clock: { now(): Date };
  log: Pick<Logger, "info">;
  /** Rows per statement (default 1,000). */
  batchSize?: number;
  /** Statements per table per run (default 5). */
  maxBatches?: number;
  /** When a run left rows behind, the next one is due after this (default a minute). */
  backlogMs?: number;
}

/** The scheduled pruner the sweep loop calls: it runs when due and is a no-op otherwise. */
export class Retention {
  #dueAt: number | null = null;

  constructor(readonly deps: RetentionDeps) {}

  /** When the next run is due (null: at the next sweep, or never when the interval is 0). */
  get dueAt(): Date | null {
    return this.#dueAt === null ? null : new Date(this.#dueAt);
  }

  /** Prunes if due (the first call always is); null when it was not due. */
  async sweep(): Promise<PruneResult | null> {
    const { policy, clock } = this.deps;
    if (policy.intervalMinutes <= 0) return null;
    const now = clock.now();
    if (this.#dueAt !== null && now.getTime() < this.#dueAt) return null;
    const started = Date.now();
    // Due again after the interval even when this run fails: a broken prune must not run every sweep.
    this.#dueAt = now.getTime() + policy.intervalMinutes * 60_000;
    const result = await prune(this.deps.database, policy, now, {
      batchSize: this.deps.batchSize ?? DEFAULT_BATCH_SIZE,
      maxBatches: this.deps.maxBatches ?? 5,
    });
    if (!result.complete) this.#dueAt = Math.min(this.#dueAt, now.getTime() + (this.deps.backlogMs ?? 60_000));
    const total = totalOf(result.counts);
    if (total > 0)
      this.deps.log.info(
        { ...result.counts, total, more: !result.complete, ms: Date.now() - started },
        "retention: pruned old rows",
      );
    return result;
  }
}
