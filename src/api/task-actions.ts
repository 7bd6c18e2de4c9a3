/**
 * An operator's retry, resume, hold or cancel of a task (admin token): the
 * same machine event as the comment command, with no comment behind it, so
 * the same rules apply (a refusal says why and what would work) and the
 * label and any live run follow through the outbox.
 */
import { z } from "zod";
import type { Db } from "../store/db.js";
import { Busy, type Tasks } from "../apply/tasks.js";
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { jsonBody } from "../http/body.js";
import { sendJson } from "../http/respond.js";

export const TASK_ACTIONS = ["retry", "resume", "hold", "cancel"] as const;
type Action = (typeof TASK_ACTIONS)[number];

const body = z.object({ by: z.string().min(1).max(100).optional() }).strict();

export interface TaskActionDeps {
  db: Db;
  tasks: Pick<Tasks, "raise">;
}

/**
 * Raises an operator's action on a task as the command event; the API and
 * the dashboard both act through this. A refusal or an unknown task is an
 * HttpError that says why.
 */
export async function taskAction(deps: TaskActionDeps, id: string, action: string, by: string) {
  if (!(TASK_ACTIONS as readonly string[]).includes(action))
    throw new HttpError(404, `no action ${action}; the actions are ${TASK_ACTIONS.join(", ")}`);
  const command = action as Action;
  const task = await deps.db.task.findUnique({ where: { id }, select: { id: true } });
  if (!task) throw new HttpError(404, `no task ${id}`);
  const r = await deps.tasks
    .raise({ taskId: task.id }, { kind: "command", command, author: by, commentId: null })
    .catch((err: unknown) => {
      if (err instanceof Busy)
        throw new HttpError(409, `${command}: the task kept changing; try again`, { reason: "busy", retryable: true });
      throw err;
    });
  if (r.outcome === "refused") throw new HttpError(409, `${command} refused: ${r.message}`, { reason: r.reason });
  const after = await deps.db.task.findUnique({ where: { id: task.id }, select: { state: true, attempt: true } });
  return { task: { id: task.id, ...after }, action: command, outcome: r.outcome };
}

export function taskActionRoutes(router: Router, deps: TaskActionDeps & { adminToken: string }): void {
  router.add("POST", "/api/v1/tasks/:id/:action", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    if (!(TASK_ACTIONS as readonly string[]).includes(params["action"]!))
      throw new HttpError(404, `no action ${params["action"]}; the actions are ${TASK_ACTIONS.join(", ")}`);
    const { by } = await jsonBody(req, body);
    sendJson(res, 200, await taskAction(deps, params["id"]!, params["action"]!, by ?? "operator"));
  });
}
