/**
 * The checks room's queries: the task PRs a base push, a failing check or a
 * push to a task's branch is about. The room's classes take this interface,
 * not the client.
 */
import type { Db } from "../store/db.js";
import type { Task } from "../store/generated/sqlite/client.js";

export interface ChecksQueries {
  /** The repository's tasks in review with a PR. */
  inReview(repo: string): Promise<Array<{ id: string; prNumber: number | null }>>;
  /** The repository's tasks in review on one of these PRs. */
  reviewedOn(repo: string, prNumbers: number[]): Promise<Task[]>;
  /** The task working on the repository's branch. */
  onBranch(repo: string, branch: string): Promise<Task | null>;
}

export function checksQueries(db: Db): ChecksQueries {
  return {
    inReview: (repo) =>
      db.task.findMany({
        where: { repo, state: "review", prNumber: { not: null } },
        select: { id: true, prNumber: true },
      }),
    reviewedOn: (repo, prNumbers) =>
      db.task.findMany({ where: { repo, prNumber: { in: prNumbers }, state: "review" } }),
    onBranch: (repo, branch) => db.task.findFirst({ where: { repo, branch } }),
  };
}
