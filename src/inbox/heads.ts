/**
 * The head of each task key: the oldest open (pending or processing)
 * delivery of the key carries `head = TRUE`, every other row FALSE. The claim
 * reads heads only (the [head, seq] index), so a key with 100,000 deliveries
 * waiting costs a claim what a key with one does; nothing rejects a backlog
 * row by row.
 *
 * Every write that opens or closes a delivery moves the head in the same
 * transaction: a crash leaves the old head or the new one, never none. A
 * processor that dies holding a head leaves it processing and still the head,
 * so it is claimed again when its lease runs out. On PostgreSQL the
 * transaction first takes an advisory lock on the key, so two replicas moving
 * one key's head (one storing a delivery, the other finishing the head) run
 * one after the other and the second sees what the first wrote; it also makes
 * a key's sequence numbers follow commit order. SQLite has one writer.
 *
 * Finding the new head is two index seeks per key ([taskKey, state, seq]: the
 * oldest pending and the oldest processing row) and a check that no older open
 * row exists, whatever the key's backlog.
 */
import type { Database } from "../store/db.js";
import { atomically, StepRefused, type Step, type StepResult } from "../store/sql.js";

const OPEN = `('pending','processing')`;

/** SQL naming the task key of the row with this seq (one `?`). */
export const KEY_OF_SEQ = `(SELECT k."taskKey" FROM "Delivery" k WHERE k."seq" = ?)`;
/** SQL naming the task key of the row with this delivery id (one `?`). */
export const KEY_OF_ID = `(SELECT k."taskKey" FROM "Delivery" k WHERE k."deliveryId" = ?)`;

/** PostgreSQL: the advisory lock that serialises head moves on keys (given as SQL taking `args`), taken in order. */
export function lockSteps(provider: Database["provider"], keys: Array<{ sql: string; args: unknown[] }>): Step[] {
  if (provider === "sqlite") return [];
  return keys.map((k) => ({
    sql: `SELECT 1 AS "locked" FROM (SELECT pg_advisory_xact_lock(hashtext(${k.sql}))) l`,
    args: k.args,
  }));
}

/** Lock steps for plain key values, in one order every writer shares (no two writers wait on each other). */
export function lockKeys(provider: Database["provider"], keys: Iterable<string>): Step[] {
  return lockSteps(
    provider,
    [...new Set(keys)].sort().map((k) => ({ sql: "?", args: [k] })),
  );
}

/**
 * Makes the oldest open row of each key (given as SQL with its args) the head,
 * when no head is left on it. Keys whose head is in place are not changed.
 */
export function settleStep(keys: Array<{ sql: string; args: unknown[] }>): Step {
  const candidates: string[] = [];
  const args: unknown[] = [];
  for (const k of keys) {
    for (const state of ["pending", "processing"]) {
      candidates.push(
        `(SELECT min(c."seq") FROM "Delivery" c WHERE c."taskKey" = ${k.sql} AND c."state" = '${state}')`,
      );
      args.push(...k.args);
    }
  }
  return {
    sql:
      `UPDATE "Delivery" SET "head" = TRUE WHERE "head" = FALSE AND "seq" IN (${candidates.join(",")}) ` +
      `AND NOT EXISTS (SELECT 1 FROM "Delivery" e WHERE e."taskKey" = "Delivery"."taskKey" ` +
      `AND e."state" IN ${OPEN} AND e."seq" < "Delivery"."seq")`,
    args,
  };
}

/** Settles plain key values. */
export const settleKeys = (keys: Iterable<string>): Step =>
  settleStep([...new Set(keys)].map((k) => ({ sql: "?", args: [k] })));

/** The claim's read: due heads, oldest first. */
export const DUE_HEADS =
  `SELECT d."seq" FROM "Delivery" d WHERE d."head" = TRUE AND ` +
  `((d."state" = 'pending' AND d."nextAttemptAt" <= ?) ` +
  `OR (d."state" = 'processing' AND d."lockedUntil" IS NOT NULL AND d."lockedUntil" <= ?)) ` +
  `ORDER BY d."seq" LIMIT `;

/**
 * A replayed (parked) delivery opens again: when it is older than the key's
 * head, it becomes the head and the other one steps back (the key's order is
 * arrival order). Replays are rare operator acts; this reads the key's open rows.
 */
export function yieldHeadStep(deliveryId: string): Step {
  return {
    sql:
      `UPDATE "Delivery" SET "head" = FALSE WHERE "head" = TRUE AND "taskKey" = ${KEY_OF_ID} ` +
      `AND "seq" > (SELECT r."seq" FROM "Delivery" r WHERE r."deliveryId" = ?)`,
    args: [deliveryId, deliveryId],
  };
}

type Raw = Pick<Database, "raw" | "provider">;

/** Runs the steps; false when a step found the claim (or the parked row) gone and nothing was written. */
async function moved(database: Raw, steps: Step[]): Promise<boolean> {
  try {
    await atomically(database, steps);
    return true;
  } catch (err) {
    if (err instanceof StepRefused) return false;
    throw err;
  }
}

const one = (what: string) => (r: StepResult) => (r.changes === 1 ? null : what);

/**
 * Closes or reopens a claimed delivery and moves its key's head in one transaction. `set` names the columns
 * written; a closed row stops being the head. False when the owner no longer held the claim.
 */
export function finishClaim(
  database: Raw,
  seq: number,
  owner: string,
  set: { state: string; closes: boolean; columns: Record<string, unknown> },
): Promise<boolean> {
  const names = Object.keys(set.columns);
  const key = [{ sql: KEY_OF_SEQ, args: [seq] }];
  return moved(database, [
    ...lockSteps(database.provider, key),
    {
      sql:
        `UPDATE "Delivery" SET "state" = ?, "lockedBy" = NULL, "lockedUntil" = NULL` +
        names.map((n) => `, "${n}" = ?`).join("") +
        (set.closes ? `, "head" = FALSE` : "") +
        ` WHERE "seq" = ? AND "state" = 'processing' AND "lockedBy" = ?`,
      args: [set.state, ...names.map((n) => set.columns[n]), seq, owner],
      check: one("the claim was lost"),
    },
    settleStep(key),
  ]);
}

/** A parked delivery back in the queue with a fresh attempt budget; it is its key's head when it is the oldest. */
export function replayParked(database: Raw, deliveryId: string, now: Date): Promise<boolean> {
  const key = [{ sql: KEY_OF_ID, args: [deliveryId] }];
  return moved(database, [
    ...lockSteps(database.provider, key),
    {
      sql:
        `UPDATE "Delivery" SET "state" = 'pending', "attempts" = 0, "nextAttemptAt" = ?, "firstFailedAt" = NULL ` +
        `WHERE "deliveryId" = ? AND "state" = 'parked'`,
      args: [now, deliveryId],
      check: one("not parked"),
    },
    yieldHeadStep(deliveryId),
    settleStep(key),
  ]);
}

/**
 * A run of deliveries collapsed into its newest (src/inbox/collapse.ts): the older ones, the head among them,
 * stored as ignored with the note, and the newest made the head. False (nothing written) when any of them
 * changed meanwhile (another replica claimed the head, or collapsed the run first).
 */
export function collapseRun(database: Raw, taskKey: string, seqs: number[], note: string, now: Date): Promise<boolean> {
  return moved(database, [
    ...lockKeys(database.provider, [taskKey]),
    {
      sql:
        `UPDATE "Delivery" SET "state" = 'ignored', "head" = FALSE, "processedAt" = ?, "note" = ? ` +
        `WHERE "seq" IN (${seqs.map(() => "?").join(",")}) AND "state" = 'pending' AND "attempts" = 0`,
      args: [now, note, ...seqs],
      check: (r) => (r.changes === seqs.length ? null : "the run changed meanwhile"),
    },
    settleKeys([taskKey]),
  ]);
}
