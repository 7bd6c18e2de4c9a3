/**
 * The webhook handlers' reads: the task an issue, a PR, a branch or a
 * comment is about, and the corrections and questions a comment touches.
 * Task and run rows are written only through the task room (apply/).
 */
import type { Db } from "../store/db.js";
import type { Decision, Task } from "../store/generated/sqlite/client.js";

export interface WebhookQueries {
  task(id: string): Promise<Task | null>;
  /** The repository's task linked to this PR. */
  taskOnPr(repo: string, prNumber: number): Promise<Task | null>;
  /** The repository's task for this issue. */
  taskOfIssue(repo: string, issue: number): Promise<Task | null>;
  /** The repository's task working on this branch. */
  taskOnBranch(repo: string, branch: string): Promise<Task | null>;
  /** The task's corrections from this comment (source `comment:<id>…`) not superseded. */
  corrections(taskId: string, commentId: number): Promise<Decision[]>;
  /** Whether a decision from this comment is recorded (whatever it became: a correction, an answer, a command). */
  recorded(commentId: number): Promise<boolean>;
  /** How many times these decisions were handed to a run. */
  deliveryCount(decisionIds: string[]): Promise<number>;
  /** The task's oldest unanswered question: a sign-off request for `subject`, or (null) a plain question. */
  openQuestion(taskId: string, subject: string | null): Promise<Decision | null>;
}

export function webhookQueries(db: Db): WebhookQueries {
  return {
    task: (id) => db.task.findUnique({ where: { id } }),
    taskOnPr: (repo, prNumber) => db.task.findFirst({ where: { repo, prNumber } }),
    taskOfIssue: (repo, issue) => db.task.findUnique({ where: { repo_issue: { repo, issue } } }),
    taskOnBranch: (repo, branch) => db.task.findFirst({ where: { repo, branch } }),
    corrections: (taskId, commentId) =>
      db.decision.findMany({
        where: {
          taskId,
          kind: "correction",
          source: { startsWith: `comment:${commentId}` },
          supersededAt: null,
        },
      }),
    recorded: async (commentId) => (await db.decision.count({ where: { source: `comment:${commentId}` } })) > 0,
    deliveryCount: (decisionIds) => db.decisionDelivery.count({ where: { decisionId: { in: decisionIds } } }),
    openQuestion: (taskId, subject) =>
      db.decision.findFirst({
        where: {
          taskId,
          kind: "question",
          answeredAt: null,
          ...(subject ? { subject } : { OR: [{ subject: null }, { subject: { not: { startsWith: "verify:" } } }] }),
        },
        orderBy: { createdAt: "asc" },
      }),
  };
}
