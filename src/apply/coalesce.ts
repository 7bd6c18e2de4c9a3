/**
 * Coalescing at the outbox's door: an effect recorded with a coalescing key
 * (machine/effects.ts) does all that the older pending effects of that key
 * would have done, so they are dropped in the same transaction, never sent,
 * and it takes the place in line of the oldest of them (its `createdAt`, by
 * which the executor orders a lane): a task whose state moved on while its
 * label waited does not go to the back of the line.
 *
 * A new effect due now drops every older pending one (due now, or waiting to
 * retry); a debounced one due later (the fleet issue's next window) drops
 * only those that would not go out before it, so an earlier window's edit is
 * never put off. One in flight is left to finish: the executor drops it if it
 * comes back pending behind a newer effect of its key (effects/executor.ts).
 */
import type { Step } from "../store/sql.js";

export function supersedeSteps(coalesceKey: string, key: string, at: Date, now: Date): Step[] {
  const later = at.getTime() > now.getTime();
  const older =
    `FROM "Effect" o WHERE o."coalesceKey" = ? AND o."state" = 'pending' AND o."key" <> ? ` +
    `AND o."seq" < (SELECT n."seq" FROM "Effect" n WHERE n."key" = ?)` +
    (later ? ` AND o."nextAttemptAt" >= ?` : "");
  const args = [coalesceKey, key, key, ...(later ? [at] : [])];
  return [
    {
      sql:
        `UPDATE "Effect" SET "createdAt" = COALESCE((SELECT MIN(o."createdAt") ${older}), "createdAt") ` +
        `WHERE "key" = ? AND "state" = 'pending'`,
      args: [...args, key],
    },
    {
      sql: `UPDATE "Effect" SET "state" = 'dropped', "note" = ?, "doneAt" = ? WHERE "seq" IN (SELECT o."seq" ${older})`,
      args: [`superseded by effect ${key}`, now, ...args],
    },
  ];
}
