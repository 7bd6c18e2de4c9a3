/**
 * The inbox table: deliveries are written here before GitHub gets its 2xx and
 * drained by the processor. Writes are batched: concurrent deliveries that
 * arrive within one turn of the event loop share one INSERT, which is what
 * lets durable ingest keep up with an app that stores nothing.
 */
import type { Database, Db } from "../store/db.js";
import { type ErrorEntry, parseRing, pushError } from "../store/error-ring.js";
import { DEFAULT_RETRY, nextDelay, type RetryPolicy } from "./backoff.js";

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
}

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
  processedAt: Date | null;
  errors: ErrorEntry[];
}

const COLUMNS = ["deliveryId", "event", "action", "installationId", "taskKey", "payload", "receivedAt", "nextAttemptAt", "state", "attempts", "errors", "processedAt"] as const;
const MAX_BATCH = 200;

const argType = (v: unknown) =>
  ({ scalarType: typeof v === "number" ? "int" : v instanceof Date ? "datetime" : "string", arity: "scalar" }) as const;

interface Pending {
  d: IncomingDelivery;
  resolve: (stored: boolean) => void;
  reject: (err: unknown) => void;
}

export class Inbox {
  readonly #db: Db;
  readonly #raw: Database["raw"];
  readonly #provider: Database["provider"];
  #queue: Pending[] = [];
  #flushing = false;
  #scheduled = false;

  constructor(database: Pick<Database, "db" | "raw" | "provider">, readonly retry: RetryPolicy = DEFAULT_RETRY) {
    this.#db = database.db;
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
    const params: unknown[] = [];
    const tuples = rows.map((r) => {
      const state = r.state ?? "pending";
      const values = [r.deliveryId, r.event, r.action, r.installationId, r.taskKey, r.payload, now, now, state, 0, "[]", state === "ignored" ? now : null];
      const marks = values.map((v) => {
        params.push(v);
        return this.#provider === "sqlite" ? "?" : `$${params.length}`;
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
  async claim(owner: string, limit: number, leaseMs: number, busy: ReadonlySet<string>, now = new Date()): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    // Heads only: the oldest open delivery of each task key. The (state, seq)
    // and (taskKey, seq) indexes keep this cheap however long the inbox grows.
    const heads = await this.#db.$queryRawUnsafe<{ seq: number | bigint }[]>(
      `SELECT d."seq" FROM "Delivery" d WHERE d."state" IN ('pending','processing') ` +
        `AND NOT EXISTS (SELECT 1 FROM "Delivery" e WHERE e."taskKey" = d."taskKey" AND e."seq" < d."seq" AND e."state" IN ('pending','processing')) ` +
        `ORDER BY d."seq" LIMIT ${Math.max(1, Math.min(500, (limit + busy.size) * 4))}`,
    );
    if (heads.length === 0) return [];
    const rows = await this.#db.delivery.findMany({ where: { seq: { in: heads.map((h) => Number(h.seq)) } }, orderBy: { seq: "asc" } });
    const claimed: ClaimedDelivery[] = [];
    for (const head of rows) {
      if (claimed.length >= limit) break;
      if (busy.has(head.taskKey)) continue;
      const due =
        head.state === "pending"
          ? head.nextAttemptAt <= now
          : head.state === "processing" && head.lockedUntil !== null && head.lockedUntil <= now; // a processor died holding it
      if (!due) continue;
      const won = await this.#db.delivery.updateMany({
        where: { seq: head.seq, state: head.state, lockedUntil: head.lockedUntil },
        data: { state: "processing", lockedBy: owner, lockedUntil: new Date(now.getTime() + leaseMs), attempts: { increment: 1 } },
      });
      if (won.count !== 1) continue;
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
      });
    }
    return claimed;
  }

  /** Extends the claim while a handler is still running. False when the claim was lost. */
  async renew(seq: number, owner: string, leaseMs: number): Promise<boolean> {
    const r = await this.#db.delivery.updateMany({
      where: { seq, state: "processing", lockedBy: owner },
      data: { lockedUntil: new Date(Date.now() + leaseMs) },
    });
    return r.count === 1;
  }

  /** Marks a claimed delivery finished. False when this owner no longer held it. */
  async complete(seq: number, owner: string, state: "done" | "ignored"): Promise<boolean> {
    const r = await this.#db.delivery.updateMany({
      where: { seq, state: "processing", lockedBy: owner },
      data: { state, processedAt: new Date(), lockedBy: null, lockedUntil: null },
    });
    return r.count === 1;
  }

  /**
   * Records a failed attempt: back to pending with a backoff, or parked once
   * the attempts are spent. Parked deliveries keep their error ring and stay
   * until an operator replays them.
   */
  async fail(d: ClaimedDelivery, owner: string, error: { class: string; message: string }, now = new Date()): Promise<DeliveryState> {
    const errors = pushError(d.errors, { at: now.toISOString(), ...error });
    const delay = nextDelay(d.attempts, this.retry);
    const state: DeliveryState = delay === null ? "parked" : "pending";
    await this.#db.delivery.updateMany({
      where: { seq: d.seq, state: "processing", lockedBy: owner },
      data: {
        state,
        errors: JSON.stringify(errors),
        lockedBy: null,
        lockedUntil: null,
        nextAttemptAt: new Date(now.getTime() + (delay ?? 0)),
      },
    });
    return state;
  }

  /**
   * Releases claims a dead process left behind. Only safe where a single
   * process uses the database (the embedded SQLite file); with PostgreSQL a
   * claim is left to expire, because its owner may be a live replica.
   */
  async releaseAll(): Promise<number> {
    const r = await this.#db.delivery.updateMany({
      where: { state: "processing" },
      data: { state: "pending", lockedBy: null, lockedUntil: null },
    });
    return r.count;
  }

  /** Puts a parked delivery back in the queue with a fresh attempt budget; history is kept in its errors. */
  async replay(deliveryId: string): Promise<boolean> {
    const r = await this.#db.delivery.updateMany({
      where: { deliveryId, state: "parked" },
      data: { state: "pending", attempts: 0, nextAttemptAt: new Date() },
    });
    return r.count === 1;
  }

  async list(filter: { state?: string; limit?: number } = {}): Promise<DeliverySummary[]> {
    const rows = await this.#db.delivery.findMany({
      where: filter.state ? { state: filter.state } : {},
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
      state: r.state,
      attempts: r.attempts,
      receivedAt: r.receivedAt,
      nextAttemptAt: r.nextAttemptAt,
      processedAt: r.processedAt,
      errors: parseRing(r.errors),
    }));
  }

  async counts(): Promise<Record<string, number>> {
    const groups = await this.#db.delivery.groupBy({ by: ["state"], _count: { _all: true } });
    return Object.fromEntries(groups.map((g) => [g.state, g._count._all]));
  }
}
