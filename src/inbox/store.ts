/**
 * The inbox table: deliveries are written here before GitHub gets its 2xx and
 * drained by the processor. Writes are batched: concurrent deliveries that
 * arrive within one turn of the event loop share one INSERT, which is what
 * lets durable ingest keep up with an app that stores nothing.
 */
import type { Database } from "../store/db.js";
import { type ErrorEntry, parseRing, pushError } from "../store/error-ring.js";
import { DEFAULT_RETRY, retryDecision, type Failure, type RetryPolicy } from "../retry/schedule.js";
import { deliveryTally, listDeliveries, type DeliverySummary, type DeliveryTally } from "./view.js";
import { eachRowSqlite, select } from "../store/sql.js";
import type { InboxQueries } from "./queries.js";

export type { DeliverySummary } from "./view.js";

export type DeliveryState = "pending" | "processing" | "done" | "ignored" | "parked";

export interface IncomingDelivery {
  deliveryId: string;
  /** "ignored" when no capability handles the event: stored for the record, never processed. */
  state?: "pending" | "ignored";
  event: string;
  action: string | null;
  installationId: string | null;
  taskKey: string;
  payload: string;
}

export interface ClaimedDelivery extends IncomingDelivery {
  seq: number;
  attempts: number;
  errors: ErrorEntry[];
  /** Start of the current failure window; null until an attempt fails. */
  firstFailedAt: Date | null;
  receivedAt?: Date;
}

/** A failed attempt as the processor reports it: what the error means for a retry, and its text for the ring. */
export interface FailedAttempt {
  failure: Failure;
  class: string;
  message: string;
}

/** What became of a failed attempt: retried at a time, or parked with the reason (already in its error ring). */
export type FailOutcome =
  { state: "pending"; retryAt: Date; firstFailedAt: Date } | { state: "parked"; why: string; firstFailedAt: Date };

const COLUMNS = [
  "deliveryId",
  "event",
  "action",
  "installationId",
  "taskKey",
  "payload",
  "receivedAt",
  "nextAttemptAt",
  "state",
  "attempts",
  "errors",
  "processedAt",
] as const;
const MAX_BATCH = 200;
const SQLITE_INSERT =
  `INSERT INTO "Delivery" (${COLUMNS.map((c) => `"${c}"`).join(",")}) ` +
  `VALUES (${COLUMNS.map(() => "?").join(",")}) ON CONFLICT ("deliveryId") DO NOTHING`;

/** A delivery's row, in COLUMNS order. */
function valuesOf(r: IncomingDelivery, now: Date): unknown[] {
  const state = r.state ?? "pending";
  return [
    r.deliveryId,
    r.event,
    r.action,
    r.installationId,
    r.taskKey,
    r.payload,
    now,
    now,
    state,
    0,
    "[]",
    state === "ignored" ? now : null,
  ];
}

const argType = (v: unknown) =>
  ({ scalarType: typeof v === "number" ? "int" : v instanceof Date ? "datetime" : "string", arity: "scalar" }) as const;

interface Pending {
  d: IncomingDelivery;
  resolve: (stored: boolean) => void;
  reject: (err: unknown) => void;
}

export class Inbox {
  readonly #queries: InboxQueries;
  readonly #raw: Database["raw"];
  readonly #provider: Database["provider"];
  #queue: Pending[] = [];
  #flushing = false;
  #scheduled = false;

  readonly retry: RetryPolicy;

  constructor(queries: InboxQueries, database: Pick<Database, "raw" | "provider">, retry: Partial<RetryPolicy> = {}) {
    this.retry = { ...DEFAULT_RETRY, ...retry };
    this.#queries = queries;
    this.#raw = database.raw;
    this.#provider = database.provider;
  }

  /**
   * Stores a delivery; resolves true when it is new, false when the same
   * delivery id was already stored. Rejects when the database did not take it:
   * the caller must not acknowledge the delivery then.
   */
  record(d: IncomingDelivery): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ d, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        await this.#insert(batch);
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #insert(batch: Pending[]): Promise<void> {
    // Duplicates inside one batch (concurrent identical POSTs) share the first one's fate.
    const firsts = new Map<string, Pending[]>();
    for (const p of batch) {
      const same = firsts.get(p.d.deliveryId);
      if (same) same.push(p);
      else firsts.set(p.d.deliveryId, [p]);
    }
    const rows = [...firsts.values()].map((ps) => ps[0]!.d);
    const now = new Date();
    if (this.#provider === "sqlite") {
      let inserted: Set<string>;
      try {
        // One prepared single-row insert, run per row in one transaction.
        const changes = eachRowSqlite(
          this.#raw,
          SQLITE_INSERT,
          rows.map((r) => valuesOf(r, now)),
        );
        inserted = new Set(rows.filter((_, i) => changes[i] === 1).map((r) => r.deliveryId));
      } catch (err) {
        for (const p of batch) p.reject(err);
        return;
      }
      this.#settle(firsts, inserted);
      return;
    }
    const params: unknown[] = [];
    const tuples = rows.map((r) => {
      const marks = valuesOf(r, now).map((v) => {
        params.push(v);
        return `$${params.length}`;
      });
      return `(${marks.join(",")})`;
    });
    const sql =
      `INSERT INTO "Delivery" (${COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES ${tuples.join(",")} ` +
      `ON CONFLICT ("deliveryId") DO NOTHING RETURNING "deliveryId"`;
    let inserted: Set<string>;
    try {
      const out = await this.#raw.queryRaw({ sql, args: params, argTypes: params.map(argType) });
      inserted = new Set(out.rows.map((r) => String(r[0])));
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    this.#settle(firsts, inserted);
  }

  #settle(firsts: Map<string, Pending[]>, inserted: ReadonlySet<string>): void {
    for (const [id, ps] of firsts) {
      const isNew = inserted.has(id);
      ps.forEach((p, i) => p.resolve(isNew && i === 0));
    }
  }

  /**
   * Claims up to `limit` deliveries that are at the head of their task key and
   * due, skipping keys in `busy` (in flight here). The claim is a conditional
   * update, so two processors (two replicas on PostgreSQL) never claim the same
   * delivery: one update matches, the other changes nothing.
   */
  async claim(
    owner: string,
    limit: number,
    leaseMs: number,
    busy: ReadonlySet<string>,
    now = new Date(),
  ): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    // Due heads only: the oldest open delivery of each task key, and only when it is due (pending and its time
    // has come, or processing under a lease that ran out). Keys that are backing off are not read at all, so
    // however many of them wait, a due key behind them is claimed now. The (state, seq) and (taskKey, seq)
    // indexes keep this cheap however long the inbox grows. A few more than `limit`: another replica may win some.
    const heads = await select(
      { raw: this.#raw, provider: this.#provider },
      `SELECT d."seq" FROM "Delivery" d WHERE ` +
        `((d."state" = 'pending' AND d."nextAttemptAt" <= ?) ` +
        `OR (d."state" = 'processing' AND d."lockedUntil" IS NOT NULL AND d."lockedUntil" <= ?)) ` +
        `AND NOT EXISTS (SELECT 1 FROM "Delivery" e WHERE e."taskKey" = d."taskKey" ` +
        `AND e."seq" < d."seq" AND e."state" IN ('pending','processing')) ` +
        `ORDER BY d."seq" LIMIT ${Math.max(1, Math.min(500, (limit + busy.size) * 2))}`,
      [now, now],
    );
    if (heads.length === 0) return [];
    const rows = await this.#queries.deliveriesBySeq(heads.map((h) => Number(h["seq"])));
    const claimed: ClaimedDelivery[] = [];
    for (const head of rows) {
      if (claimed.length >= limit) break;
      if (busy.has(head.taskKey)) continue;
      const due =
        head.state === "pending"
          ? head.nextAttemptAt <= now
          : // a processor died holding it
            head.state === "processing" && head.lockedUntil !== null && head.lockedUntil <= now;
      if (!due) continue;
      if (!(await this.#queries.claimDelivery(head, owner, new Date(now.getTime() + leaseMs)))) continue;
      claimed.push({
        seq: head.seq,
        deliveryId: head.deliveryId,
        event: head.event,
        action: head.action,
        installationId: head.installationId,
        taskKey: head.taskKey,
        payload: head.payload,
        attempts: head.attempts + 1,
        errors: parseRing(head.errors),
        firstFailedAt: head.firstFailedAt,
        receivedAt: head.receivedAt,
      });
    }
    return claimed;
  }

  /** Extends the claim while a handler is still running. False when the claim was lost. */
  async renew(seq: number, owner: string, leaseMs: number, now = new Date()): Promise<boolean> {
    return this.#queries.renewClaim(seq, owner, new Date(now.getTime() + leaseMs));
  }

  /** Marks a claimed delivery finished. False when this owner no longer held it. */
  async complete(seq: number, owner: string, state: "done" | "ignored", now = new Date()): Promise<boolean> {
    return this.#queries.completeDelivery(seq, owner, state, now);
  }

  /**
   * Records a failed attempt: back to pending at the time the retry schedule
   * says, or parked (a transient failure outlasting the retry window, a
   * deterministic one after a few attempts) with an entry in its error ring
   * that says why and how to replay it. Parked deliveries stay until an
   * operator replays them.
   */
  async fail(
    d: ClaimedDelivery,
    owner: string,
    attempt: FailedAttempt,
    now = new Date(),
    random?: () => number,
  ): Promise<FailOutcome> {
    let errors = pushError(d.errors, { at: now.toISOString(), class: attempt.class, message: attempt.message });
    const decision = retryDecision({
      failure: attempt.failure,
      attempts: d.attempts,
      firstFailedAt: d.firstFailedAt,
      now,
      policy: this.retry,
      ...(random ? { random } : {}),
    });
    const parked = "park" in decision;
    if (parked) {
      errors = pushError(errors, {
        at: now.toISOString(),
        class: "parked",
        message: `parked after ${decision.why}. Fix the cause, then run: orchestra replay ${d.deliveryId}`,
      });
    }
    await this.#queries.failDelivery(d.seq, owner, {
      state: parked ? "parked" : "pending",
      errors: JSON.stringify(errors),
      nextAttemptAt: parked ? now : decision.retryAt,
      firstFailedAt: decision.firstFailedAt,
    });
    return parked
      ? { state: "parked", why: decision.why, firstFailedAt: decision.firstFailedAt }
      : { state: "pending", retryAt: decision.retryAt, firstFailedAt: decision.firstFailedAt };
  }

  /**
   * Releases claims a dead process left behind. Only safe where a single
   * process uses the database (the embedded SQLite file); with PostgreSQL a
   * claim is left to expire, because its owner may be a live replica.
   */
  async releaseAll(): Promise<number> {
    return this.#queries.releaseProcessing();
  }

  /**
   * Puts a parked delivery back in the queue with a fresh attempt
   * budget and retry window; history is kept in its errors.
   */
  async replay(deliveryId: string, now = new Date()): Promise<boolean> {
    return this.#queries.replayDelivery(deliveryId, now);
  }

  /** Deliveries, newest first; state "retrying" lists pending ones that have failed before. */
  list(filter: { state?: string; limit?: number } = {}): Promise<DeliverySummary[]> {
    return listDeliveries(this.#queries, filter);
  }

  /** Deliveries counted by state: as stored, and as listed (retrying apart from fresh pending). */
  tally(): Promise<DeliveryTally> {
    return deliveryTally(this.#queries);
  }
}
