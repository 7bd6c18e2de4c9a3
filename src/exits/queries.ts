/**
 * The exits room's queries: the run an exit names, its task, and whether a
 * later run has started on the task.
 */
import type { Db } from "../store/db.js";
import type { Run, Task } from "../store/generated/sqlite/client.js";

export interface ExitQueries {
  run(runId: string): Promise<Run | null>;
  task(taskId: string): Promise<Task | null>;
  /** Runs of the task other than `run` that started after it. */
  laterRuns(run: Pick<Run, "id" | "taskId" | "startedAt">): Promise<number>;
}

export function exitQueries(db: Db): ExitQueries {
  return {
    run: (runId) => db.run.findUnique({ where: { id: runId } }),
    task: (taskId) => db.task.findUnique({ where: { id: taskId } }),
    laterRuns: (run) =>
      db.run.count({
        where: { taskId: run.taskId, id: { not: run.id }, startedAt: { gt: run.startedAt } },
      }),
  };
}
