/**
 * The task, its runs and its receipt that an effect is performed on and its check run shows, as
 * effects/check-run-view.ts reads them (queries.ts composes all).
 */
import type { Db } from "../../store/db.js";
import type { CompletionReceipt, Run, Task } from "../../store/generated/sqlite/client.js";

export interface CheckRunQueries {
  task(id: string): Promise<Task | null>;
  /** The task's runs whose agent started (not aborted or released), oldest first. */
  runsShown(taskId: string): Promise<Run[]>;
  receiptOf(taskId: string): Promise<CompletionReceipt | null>;
  /** The keys of the task's effects that start with `prefix`. */
  effectKeys(taskId: string, prefix: string): Promise<Array<{ key: string }>>;
}

export function checkRunQueries(db: Db): CheckRunQueries {
  return {
    task: (id) => db.task.findUnique({ where: { id } }),
    runsShown: (taskId) =>
      db.run.findMany({ where: { taskId, state: { notIn: ["aborted", "released"] } }, orderBy: { startedAt: "asc" } }),
    receiptOf: (taskId) => db.completionReceipt.findUnique({ where: { taskId } }),
    effectKeys: (taskId, prefix) =>
      db.effect.findMany({ where: { taskId, key: { startsWith: prefix } }, select: { key: true } }),
  };
}
