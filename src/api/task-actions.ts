/** POST /api/v1/tasks/:id/:action (admin token): an operator's action on a task (human/actions.ts). */
import { z } from "zod";
import { requireAdmin, type Router } from "../http/router.js";
import { jsonBody } from "../http/body.js";
import { sendJson } from "../http/respond.js";
import { isTaskAction, TASK_ACTIONS, taskAction, type TaskActionDeps } from "../human/actions.js";
import { Refusal } from "../refusal.js";

const body = z.object({ by: z.string().min(1).max(100).optional() }).strict();

export function taskActionRoutes(router: Router, deps: TaskActionDeps & { adminToken: string }): void {
  router.add("POST", "/api/v1/tasks/:id/:action", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const action = params["action"]!;
    if (!isTaskAction(action))
      throw new Refusal("not-found", `no action ${action}; the actions are ${TASK_ACTIONS.join(", ")}`);
    const { by } = await jsonBody(req, body);
    sendJson(res, 200, await taskAction(deps, params["id"]!, action, by ?? "operator"));
  });
}
