/**
 * The inbox's batched insert: concurrent deliveries that arrive within one
 * turn of the event loop share one INSERT (SQLite: one prepared statement per
 * row in one transaction), which is what lets durable ingest keep up with an
 * app that stores nothing. A row is skipped when its delivery id is stored (a
 * redelivery) or its body digest is (a replay under a new id).
 */
import type { Database } from "../store/db.js";
import { atomically, eachRowSqlite, select } from "../store/sql.js";
import { lockKeys, settleKeys } from "./heads.js";
export interface IncomingDelivery {
  deliveryId: string;
  /** "ignored" when it can never act (src/ingest/verdict.ts): stored for the record, never processed. */
  state?: "pending" | "ignored";
  /** Why it was stored as ignored, for the counters (not stored: `note` says it on the row). */
  why?: "unhandled" | "unmanaged";
  /** Why it was stored as ignored, shown with the delivery. */
  note?: string | null;
  /** What it says, for collapsing a run of deliveries on its key (src/inbox/collapse.ts). */
  collapse?: string | null;
  event: string;
  action: string | null;
  installationId: string | null;
  taskKey: string;
  payload: string;
  /**
   * SHA-256 of the body exactly as signed. Unique while the row is kept: the
   * same signed body under a new delivery id is a replay, not a new event.
   */
  bodyDigest?: string | null;
}

/** What became of a delivery handed to the inbox. */
export type Recorded =
  /** Stored: new work (or a new ignored row). */
  | "new"
  /** The same delivery id was stored before: GitHub sent it again (a redelivery). */
  | "duplicate"
  /** The same signed body was stored before under another delivery id: a replay. */
  | "replay";

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
  "bodyDigest",
  "note",
  "collapse",
] as const;
const MAX_BATCH = 200;
// SQLite has one writer: a pending row is its key's head when the key has no open row (src/inbox/heads.ts).
const SQLITE_INSERT =
  `INSERT INTO "Delivery" (${COLUMNS.map((c) => `"${c}"`).join(",")},"head") ` +
  `SELECT ${COLUMNS.map(() => "?").join(",")}, (? = 'pending' AND NOT EXISTS (SELECT 1 FROM "Delivery" o ` +
  `WHERE o."taskKey" = ? AND o."state" IN ('pending','processing'))) WHERE true ON CONFLICT DO NOTHING`;

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
    r.bodyDigest ?? null,
    r.note ?? null,
    r.collapse ?? null,
  ];
}

interface Pending {
  d: IncomingDelivery;
  resolve: (recorded: Recorded) => void;
  reject: (err: unknown) => void;
}

export class BatchedInsert {
  readonly #raw: Database["raw"];
  readonly #provider: Database["provider"];
  #queue: Pending[] = [];
  #flushing = false;
  #scheduled = false;

  constructor(database: Pick<Database, "raw" | "provider">) {
    this.#raw = database.raw;
    this.#provider = database.provider;
  }

  /**
   * Queues a delivery for the next batch; resolves "new" when it is, "duplicate" when the same
   * delivery id was already stored, "replay" when the same signed body was
   * stored under another id. Rejects when the database did not take it: the
   * caller must not acknowledge the delivery then.
   */
  record(d: IncomingDelivery): Promise<Recorded> {
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
    // Duplicates inside one batch (concurrent identical POSTs, or one body under two ids) share the first one's fate.
    const firsts = new Map<string, Pending[]>();
    const byDigest = new Map<string, string>();
    const replays: Pending[] = [];
    for (const p of batch) {
      const same = firsts.get(p.d.deliveryId);
      if (same) {
        same.push(p);
        continue;
      }
      const digest = p.d.bodyDigest;
      if (digest && byDigest.has(digest)) {
        replays.push(p);
        continue;
      }
      if (digest) byDigest.set(digest, p.d.deliveryId);
      firsts.set(p.d.deliveryId, [p]);
    }
    const rows = [...firsts.values()].map((ps) => ps[0]!.d);
    let inserted: Set<string>;
    let known: Set<string>;
    try {
      inserted = await this.#insertRows(rows, new Date());
      known = await this.#storedIds(rows.filter((r) => !inserted.has(r.deliveryId)).map((r) => r.deliveryId));
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    for (const p of replays) p.resolve("replay");
    for (const [id, ps] of firsts) {
      const first: Recorded = inserted.has(id) ? "new" : known.has(id) ? "duplicate" : "replay";
      ps.forEach((p, i) => p.resolve(i === 0 ? first : first === "replay" ? "replay" : "duplicate"));
    }
  }

  /** Inserts the rows, skipping any whose delivery id or body digest is stored; the ids inserted. */
  async #insertRows(rows: IncomingDelivery[], now: Date): Promise<Set<string>> {
    if (this.#provider === "sqlite") {
      // One prepared single-row insert, run per row in one transaction.
      const changes = eachRowSqlite(
        this.#raw,
        SQLITE_INSERT,
        rows.map((r) => [...valuesOf(r, now), r.state ?? "pending", r.taskKey]),
      );
      return new Set(rows.filter((_, i) => changes[i] === 1).map((r) => r.deliveryId));
    }
    // PostgreSQL: the rows go in with no head; then, in the same transaction and under the keys' locks, each key
    // with no open row before gets its head (src/inbox/heads.ts).
    const params: unknown[] = [];
    const tuples = rows.map((r) => {
      params.push(...valuesOf(r, now));
      return `(${COLUMNS.map(() => "?").join(",")})`;
    });
    const keys = rows.filter((r) => (r.state ?? "pending") === "pending").map((r) => r.taskKey);
    let inserted: Record<string, unknown>[] = [];
    await atomically({ raw: this.#raw, provider: this.#provider }, [
      ...lockKeys(this.#provider, keys),
      {
        sql:
          `WITH ins AS (INSERT INTO "Delivery" (${COLUMNS.map((c) => `"${c}"`).join(",")}) ` +
          `VALUES ${tuples.join(",")} ON CONFLICT DO NOTHING RETURNING "deliveryId") SELECT "deliveryId" FROM ins`,
        args: params,
        check: (r) => {
          inserted = r.rows;
          return null;
        },
      },
      ...(keys.length > 0 ? [settleKeys(keys)] : []),
    ]);
    return new Set(inserted.map((r) => String(r["deliveryId"])));
  }

  /** Which of these delivery ids are stored: a row not inserted and not stored under its id was a replayed body. */
  async #storedIds(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await select(
      { raw: this.#raw, provider: this.#provider },
      `SELECT "deliveryId" FROM "Delivery" WHERE "deliveryId" IN (${ids.map(() => "?").join(",")})`,
      ids,
    );
    return new Set(rows.map((r) => String(r["deliveryId"])));
  }
}
