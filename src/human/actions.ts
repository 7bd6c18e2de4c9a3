/**
 * An operator's retry, resume, hold or cancel of a task: the same machine
 * event as the comment command, with no comment behind it, so the same rules
 * apply (a refusal says why and what would work) and the label and any live
 * run follow through the outbox. The API and the dashboard both act through
 * this; a refusal or an unknown task is a `Refusal` that says why.
 */
import { Busy, type Tasks } from "../apply/tasks.js";
import { Refusal } from "../refusal.js";
import type { HumanQueries } from "./queries.js";

export const TASK_ACTIONS = ["retry", "resume", "hold", "cancel"] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

export function isTaskAction(action: string): action is TaskAction {
  return (TASK_ACTIONS as readonly string[]).includes(action);
}

export interface TaskActionDeps {
  humanQueries: Pick<HumanQueries, "taskExists" | "taskProgress">;
  tasks: Pick<Tasks, "raise">;
}

export async function taskAction(deps: TaskActionDeps, id: string, action: string, by: string) {
  if (!isTaskAction(action))
    throw new Refusal("not-found", `no action ${action}; the actions are ${TASK_ACTIONS.join(", ")}`);
  const task = await deps.humanQueries.taskExists(id);
  if (!task) throw new Refusal("not-found", `no task ${id}`);
  const r = await deps.tasks
    .raise({ taskId: task.id }, { kind: "command", command: action, author: by, commentId: null })
    .catch((err: unknown) => {
      if (err instanceof Busy)
        throw new Refusal("conflict", `${action}: the task kept changing; try again`, {
          reason: "busy",
          retryable: true,
        });
      throw err;
    });
  if (r.outcome === "refused") throw new Refusal("conflict", `${action} refused: ${r.message}`, { reason: r.reason });
  const after = await deps.humanQueries.taskProgress(task.id);
  return { task: { id: task.id, ...after }, action, outcome: r.outcome };
}
