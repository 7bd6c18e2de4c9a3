/**
 * Coalescing at the outbox's door: an effect recorded with a coalescing key
 * (machine/effects.ts) does all that the older pending effects of that key
 * would have done, so they are dropped in the same transaction, never sent.
 * A new effect due now drops every older pending one (due now, or waiting to
 * retry); a debounced one due later (the fleet issue's next window) drops
 * only those that would not go out before it, so an earlier window's edit is
 * never put off. One in flight is left to finish: the executor drops it if it
 * comes back pending behind a newer effect of its key (effects/executor.ts).
 */
import type { Step } from "../store/sql.js";

export function supersedeStep(coalesceKey: string, key: string, at: Date, now: Date): Step {
  const later = at.getTime() > now.getTime();
  return {
    sql:
      `UPDATE "Effect" SET "state" = 'dropped', "note" = ?, "doneAt" = ? ` +
      `WHERE "coalesceKey" = ? AND "state" = 'pending' AND "key" <> ? ` +
      `AND "seq" < (SELECT "seq" FROM "Effect" WHERE "key" = ?)` +
      (later ? ` AND "nextAttemptAt" >= ?` : ""),
    args: [`superseded by effect ${key}`, now, coalesceKey, key, key, ...(later ? [at] : [])],
  };
}
