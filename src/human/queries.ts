/**
 * The human room's queries: the task an operator acts on, the audit log of
 * ignored input, and the questions waiting on a condition or expiring.
 */
import type { Db } from "../store/db.js";
import type { AuditEntry, Decision, Task } from "../store/generated/sqlite/client.js";

export interface IgnoredEntry {
  at: Date;
  installationId: number | null;
  repo: string;
  actor: string;
  input: string;
  why: string;
}

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
  /** Unanswered questions whose time ran out before `now`. */
  expiredQuestions(now: Date, take: number): Promise<Decision[]>;
  /** Unanswered questions with a condition, oldest first. */
  conditionQuestions(take: number): Promise<Decision[]>;
  /** Unanswered questions waiting on an issue or PR (`owner/repo#n`, lower case): one read of an index. */
  awaiting(ref: string): Promise<Decision[]>;
}

export function humanQueries(db: Db): HumanQueries {
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
    expiredQuestions: (now, take) =>
      db.decision.findMany({
        where: { kind: "question", answeredAt: null, expiresAt: { lt: now } },
        take,
      }),
    conditionQuestions: (take) =>
      db.decision.findMany({
        where: { kind: "question", answeredAt: null, condition: { not: null } },
        orderBy: { createdAt: "asc" },
        take,
      }),
    awaiting: (ref) => db.decision.findMany({ where: { awaits: ref, kind: "question", answeredAt: null } }),
  };
}
