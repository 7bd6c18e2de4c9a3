/**
 * The blockers room's queries: the tasks whose blockers are read again (by
 * issue, by a blocker that changed, or due in the sweep).
 */
import type { Db } from "../store/db.js";
import type { Task } from "../store/generated/sqlite/client.js";

export interface BlockerQueries {
  taskOfIssue(repo: string, issue: number): Promise<Task | null>;
  /** Tasks not done or cancelled whose blockers include `ref` (at most 500). */
  blockedByRef(ref: string): Promise<Task[]>;
  /** Queued tasks whose blockers were never read, or not since `recheckBefore`, oldest first. */
  dueForBlockers(notHeld: object, now: Date, recheckBefore: Date, take: number): Promise<Task[]>;
}

export function blockerQueries(db: Db): BlockerQueries {
  return {
    taskOfIssue: (repo, issue) => db.task.findUnique({ where: { repo_issue: { repo, issue } } }),
    blockedByRef: (ref) =>
      // The JSON array holds quoted refs: match the whole ref, not a prefix of another one.
      db.task.findMany({
        where: { blockedBy: { contains: JSON.stringify(ref) }, state: { notIn: ["done", "cancelled"] } },
        take: 500,
      }),
    dueForBlockers: (notHeld, now, recheckBefore, take) =>
      db.task.findMany({
        where: {
          state: "queued",
          ...notHeld,
          AND: [
            {
              OR: [{ blockersAt: null }, { blockedBy: { not: null }, blockersAt: { lt: recheckBefore } }],
            },
            { OR: [{ backoffUntil: null }, { backoffUntil: { lte: now } }] },
          ],
        },
        orderBy: { queuedAt: "asc" },
        take,
      }),
  };
}
