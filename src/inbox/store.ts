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
import { select } from "../store/sql.js";
import type { DeliveryRow, InboxQueries } from "./queries.js";
import { collapseRun, DUE_HEADS, finishClaim, replayParked } from "./heads.js";
import { runLength } from "./collapse.js";
import { BatchedInsert, type IncomingDelivery, type Recorded } from "./insert.js";

export type { DeliverySummary } from "./view.js";

export type DeliveryState = "pending" | "processing" | "done" | "ignored" | "parked";

export type { IncomingDelivery, Recorded } from "./insert.js";

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

/** A run of deliveries collapsed into its newest (src/inbox/collapse.ts). */
export interface Collapsed {
  taskKey: string;
  /** The delivery processed for the run. */
  newest: string;
  /** How many older ones were stored as ignored. */
  collapsed: number;
}

/** Pending deliveries read behind a head to find its run, and runs followed on one key per claim. */
const RUN_BATCH = 100;
const RUN_ROUNDS = 10;

export class Inbox {
  readonly #queries: InboxQueries;
  readonly #raw: Database["raw"];
  readonly #provider: Database["provider"];
  readonly #database: Pick<Database, "raw" | "provider">;
  readonly #insert: BatchedInsert;
  readonly #onCollapsed: (c: Collapsed) => void;

  readonly retry: RetryPolicy;

  constructor(
    queries: InboxQueries,
    database: Pick<Database, "raw" | "provider">,
    retry: Partial<RetryPolicy> = {},
    /** Told of each run collapsed (logged and counted by the caller). */
    onCollapsed: (c: Collapsed) => void = () => {},
  ) {
    this.retry = { ...DEFAULT_RETRY, ...retry };
    this.#onCollapsed = onCollapsed;
    this.#queries = queries;
    this.#raw = database.raw;
    this.#provider = database.provider;
    this.#database = { raw: database.raw, provider: database.provider };
    this.#insert = new BatchedInsert(database);
  }

  /**
   * Stores a delivery; resolves "new" when it is, "duplicate" when the same
   * delivery id was already stored, "replay" when the same signed body was
   * stored under another id. Rejects when the database did not take it: the
   * caller must not acknowledge the delivery then.
   */
  record(d: IncomingDelivery): Promise<Recorded> {
    return this.#insert.record(d);
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
    // Due heads only: each task key's head (its oldest open delivery, kept by src/inbox/heads.ts), and only when it
    // is due (pending and its time has come, or processing under a lease that ran out). A key's backlog behind its
    // head is not read at all, so a claim costs the same with 10 or 100,000 deliveries waiting on one key. A few
    // more than `limit`: another replica may win some.
    const heads = await select(
      { raw: this.#raw, provider: this.#provider },
      DUE_HEADS + String(Math.max(1, Math.min(500, (limit + busy.size) * 2))),
      [now, now],
    );
    if (heads.length === 0) return [];
    const rows = await this.#queries.deliveriesBySeq(heads.map((h) => Number(h["seq"])));
    const claimed: ClaimedDelivery[] = [];
    for (const first of rows) {
      if (claimed.length >= limit) break;
      if (busy.has(first.taskKey)) continue;
      const head = await this.#newestOfRun(first, now);
      if (!head) continue;
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

  /**
   * The head itself, or, when the deliveries right behind it say the same (src/inbox/collapse.ts), the newest
   * of that run, made the head once the older ones are stored as ignored. Reads at most RUN_BATCH deliveries
   * behind the head per round, and only for a head that can collapse. Null when the run changed meanwhile.
   */
  async #newestOfRun(head: DeliveryRow, now: Date): Promise<DeliveryRow | null> {
    let current = head;
    for (let round = 0; round < RUN_ROUNDS; round++) {
      if (current.state !== "pending" || current.collapse === null || current.attempts !== 0) return current;
      const newer = await this.#queries.nextPending(current.taskKey, current.seq, RUN_BATCH);
      const n = runLength(current, newer);
      if (n === 0) return current;
      const newest = newer[n - 1]!;
      const seqs = [current.seq, ...newer.slice(0, n - 1).map((r) => r.seq)];
      const note = `collapsed into ${newest.deliveryId}: a later delivery on this key says the same and is processed`;
      if (!(await collapseRun(this.#database, current.taskKey, seqs, note, now))) return null;
      this.#onCollapsed({ taskKey: current.taskKey, newest: newest.deliveryId, collapsed: seqs.length });
      const [next] = await this.#queries.deliveriesBySeq([newest.seq]);
      if (!next) return null;
      current = next;
    }
    return current;
  }

  /** Whether a task key has a delivery waiting or in flight (an installation's own events, for ingest). */
  hasOpen(taskKey: string): Promise<boolean> {
    return this.#queries.hasOpen(taskKey);
  }

  /** Extends the claim while a handler is still running. False when the claim was lost. */
  async renew(seq: number, owner: string, leaseMs: number, now = new Date()): Promise<boolean> {
    return this.#queries.renewClaim(seq, owner, new Date(now.getTime() + leaseMs));
  }

  /** Marks a claimed delivery finished. False when this owner no longer held it. */
  async complete(seq: number, owner: string, state: "done" | "ignored", now = new Date()): Promise<boolean> {
    return finishClaim(this.#database, seq, owner, { state, closes: true, columns: { processedAt: now } });
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
    await finishClaim(this.#database, d.seq, owner, {
      state: parked ? "parked" : "pending",
      closes: parked,
      columns: {
        errors: JSON.stringify(errors),
        nextAttemptAt: parked ? now : decision.retryAt,
        firstFailedAt: decision.firstFailedAt,
      },
    });
    return parked
      ? { state: "parked", why: decision.why, firstFailedAt: decision.firstFailedAt }
      : { state: "pending", retryAt: decision.retryAt, firstFailedAt: decision.firstFailedAt };
  }

  /** A claimed delivery left as it was, pending and due, its attempt not counted: the service is stopping. */
  async release(seq: number, owner: string, now = new Date()): Promise<void> {
    await this.#queries.releaseDelivery(seq, owner, now);
  }

  /**
   * Releases claims a dead process left behind. Only safe where a single
   * process uses the database (the embedded SQLite file); with PostgreSQL a
   * claim is released only when its owner stopped beating (src/replicas/),
   * because its owner may be a live replica.
   */
  async releaseAll(): Promise<number> {
    return this.#queries.releaseProcessing();
  }

  /** The deliveries a replica that stopped beating was processing, back to pending (the attempt counts). */
  async releaseHeldBy(owner: string): Promise<number> {
    return this.#queries.releaseProcessing(owner);
  }

  /**
   * Puts a parked delivery back in the queue with a fresh attempt
   * budget and retry window; history is kept in its errors.
   */
  async replay(deliveryId: string, now = new Date()): Promise<boolean> {
    return replayParked(this.#database, deliveryId, now);
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
