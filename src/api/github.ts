/** GET /api/v1/github (admin token): how Orchestra stands with GitHub (metrics/standing.ts). */
import { requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import { githubStanding, type StandingDeps } from "../metrics/standing.js";

export function githubRoutes(router: Router, deps: StandingDeps & { adminToken: string }): void {
  router.add("GET", "/api/v1/github", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    sendJson(res, 200, await githubStanding(deps));
  });
}
