/**
 * The dispatch room's queries: the run behind an Actions run, by its link
 * or among the live dispatched runs of a repository.
 */
import type { Db } from "../store/db.js";
import type { Run } from "../store/generated/sqlite/client.js";

export interface DispatchQueries {
  run(runId: string): Promise<Run | null>;
  /** The dispatched run linked to this workflow run. */
  linkedRun(workflowRunId: number): Promise<Run | null>;
  /** The repository's claimed tasks without a worker (dispatched ones). */
  dispatchedTasks(repo: string): Promise<Array<{ id: string }>>;
  /** The tasks' live dispatched runs not linked to a workflow run yet, oldest first. */
  unlinkedRuns(taskIds: string[]): Promise<Run[]>;
}

export function dispatchQueries(db: Db): DispatchQueries {
  return {
    run: (runId) => db.run.findUnique({ where: { id: runId } }),
    linkedRun: (workflowRunId) =>
      db.run.findFirst({ where: { workflowRunId: BigInt(workflowRunId), mode: "dispatch" } }),
    dispatchedTasks: (repo) =>
      db.task.findMany({ where: { repo, state: "claimed", workerId: null }, select: { id: true } }),
    unlinkedRuns: (taskIds) =>
      db.run.findMany({
        where: { taskId: { in: taskIds }, mode: "dispatch", state: "live", workflowRunId: null },
        orderBy: { startedAt: "asc" },
      }),
  };
}
