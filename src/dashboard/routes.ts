/**
 * The dashboard under /dashboard: sign-in with the admin token, the fleet
 * overview, a page per task, and the operator's actions. Pages are rendered
 * on the server with no script; every action is a form post carrying the
 * session's CSRF token, answered with a redirect back (post/redirect/get).
 * Actions go through the same code as the API: task actions raise the
 * machine's command event, replays put a parked row back in its queue.
 */
import type { Router } from "../http/router.js";
import { STYLE } from "./style.js";
import { guards } from "./guard.js";
import { signInRoutes } from "./sign-in.js";
import { fleetRoutes } from "./fleet-routes.js";
import { taskRoutes } from "./task-routes.js";
import type { DashboardDeps } from "./deps.js";

export type { DashboardDeps } from "./deps.js";
export { safeNext } from "./respond.js";
export { signInNotice } from "./sign-in.js";

export function dashboardRoutes(router: Router, deps: DashboardDeps): void {
  const guarded = guards(deps);

  router.add("GET", "/dashboard/assets/style.css", ({ res }) => {
    res.writeHead(200, {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "max-age=300",
      "x-content-type-options": "nosniff",
    });
    res.end(STYLE);
  });

  signInRoutes(router, deps, guarded);
  fleetRoutes(router, deps, guarded);
  taskRoutes(router, deps, guarded);
}
