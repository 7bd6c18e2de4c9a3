/**
 * Operator view of the running replicas: each one's row, its last beat and
 * how long ago that was, and which one answered (src/replicas/).
 */
import { requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import type { Replicas } from "../replicas/replicas.js";

export function replicaRoutes(router: Router, deps: { replicas: Pick<Replicas, "list">; adminToken: string }): void {
  router.add("GET", "/api/v1/replicas", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    sendJson(res, 200, await deps.replicas.list());
  });
}
