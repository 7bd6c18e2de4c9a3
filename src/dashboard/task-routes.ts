/** A task's page, and the operator's actions on it (through the same code as the API's). */
import { HttpError, type Router } from "../http/router.js";
import { taskPage } from "./task-page.js";
import { taskDetail } from "../views/task-detail.js";
import { taskAction } from "../human/actions.js";
import type { Guards } from "./guard.js";
import type { DashboardDeps } from "./deps.js";

export function taskRoutes(router: Router, deps: DashboardDeps, { page, action }: Guards): void {
  router.add(
    "GET",
    "/dashboard/tasks/:id",
    page(async (r, ctx) => {
      const detail = await taskDetail(deps, r.params["id"]!);
      if (!detail) throw new HttpError(404, `There is no task ${r.params["id"]}.`);
      return taskPage(ctx, detail);
    }),
  );

  router.add(
    "POST",
    "/dashboard/tasks/:id/:action",
    action(async (r) => {
      const id = r.params["id"]!;
      const done = await taskAction(deps, id, r.params["action"]!, "dashboard");
      const to = `/dashboard/tasks/${encodeURIComponent(id)}`;
      return {
        to,
        notice:
          done.outcome === "applied"
            ? `${done.action}: done; the task is ${done.task.state ?? "gone"}.`
            : `${done.action}: nothing to change; the task is ${done.task.state ?? "gone"}.`,
      };
    }),
  );
}
