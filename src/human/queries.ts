/**
 * The human room's queries: the task an operator acts on, the audit log of
 * ignored input, and the questions waiting on a condition or expiring (plain
 * SQL: a join the sweep runs every few seconds).
 */
import type { Database } from "../store/db.js";
import { select } from "../store/sql.js";
import type { AuditEntry, Decision, Task } from "../store/generated/sqlite/client.js";

export interface IgnoredEntry {
  at: Date;
  installationId: number | null;
  repo: string;
  actor: string;
  input: string;
  why: string;
}

/** An open question, as the sweep needs it. */
export type OpenQuestion = Pick<Decision, "id" | "taskId" | "body" | "condition">;

/**
 * Open questions of tasks that wait on them (blocked, or claimed by the run
 * that asked). Questions close when their task leaves those states
 * (machine/waiting.ts); the join keeps one that did not (a row older than
 * that rule) from being picked up by every sweep and holding its place.
 * Every question expires, so `expiresAt` set is what the index
 * (answeredAt, expiresAt) finds them by.
 */
const OPEN =
  `SELECT d."id", d."taskId", d."body", d."condition" FROM "Decision" d JOIN "Task" t ON t."id" = d."taskId" ` +
  `WHERE d."kind" = 'question' AND d."answeredAt" IS NULL AND d."expiresAt" IS NOT NULL ` +
  `AND t."state" IN ('blocked', 'claimed')`;

const openQuestion = (r: Record<string, unknown>): OpenQuestion => ({
  id: String(r["id"]),
  taskId: String(r["taskId"]),
  body: String(r["body"]),
  condition: typeof r["condition"] === "string" ? r["condition"] : null,
});

export interface HumanQueries {
  taskExists(id: string): Promise<{ id: string } | null>;
  taskProgress(id: string): Promise<{ state: string; attempt: number } | null>;
  task(id: string): Promise<Task | null>;
  recordIgnored(entry: IgnoredEntry): Promise<void>;
  /** The newest entries (of one repository, or all) and the count per repository. */
  ignored(
    repo: string | undefined,
    limit: number,
  ): Promise<{ rows: AuditEntry[]; counts: Array<{ repo: string; _count: { _all: number } }> }>;
  /** Those of the tasks a question may wait in (claimed or blocked). */
  questionTasks(ids: string[]): Promise<Array<{ id: string }>>;
  /** Open questions whose time ran out before `now`, the longest expired first. */
  expiredQuestions(now: Date, take: number): Promise<OpenQuestion[]>;
  /** Open questions with a condition, oldest first. */
  conditionQuestions(take: number): Promise<OpenQuestion[]>;
  /** Unanswered questions waiting on an issue or PR (`owner/repo#n`, lower case): one read of an index. */
  awaiting(ref: string): Promise<Decision[]>;
}

export function humanQueries(database: Pick<Database, "db" | "raw" | "provider">): HumanQueries {
  const db = database.db;
  return {
    taskExists: (id) => db.task.findUnique({ where: { id }, select: { id: true } }),
    taskProgress: (id) => db.task.findUnique({ where: { id }, select: { state: true, attempt: true } }),
    task: (id) => db.task.findUnique({ where: { id } }),
    async recordIgnored(entry) {
      await db.auditEntry.create({ data: entry });
    },
    async ignored(repo, limit) {
      const [rows, counts] = await Promise.all([
        db.auditEntry.findMany({
          where: repo ? { repo } : {},
          orderBy: { seq: "desc" },
          take: limit,
        }),
        db.auditEntry.groupBy({ by: ["repo"], _count: { _all: true } }),
      ]);
      return { rows, counts };
    },
    questionTasks: (ids) =>
      db.task.findMany({ where: { id: { in: ids }, state: { in: ["claimed", "blocked"] } }, select: { id: true } }),
    expiredQuestions: async (now, take) =>
      (await select(database, `${OPEN} AND d."expiresAt" < ? ORDER BY d."expiresAt", d."id" LIMIT ?`, [now, take])).map(
        openQuestion,
      ),
    conditionQuestions: async (take) =>
      (
        await select(database, `${OPEN} AND d."condition" IS NOT NULL ORDER BY d."createdAt", d."id" LIMIT ?`, [take])
      ).map(openQuestion),
    awaiting: (ref) => db.decision.findMany({ where: { awaits: ref, kind: "question", answeredAt: null } }),
  };
}
