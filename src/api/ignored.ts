/**
 * Counts of ignored input (admin token): `GET /api/v1/ignored` answers
 * `{counters: [{name, value, updatedAt, what}]}`, every known counter, zero
 * when it never moved. The audit log (`/api/v1/audit`) has the recent entries
 * behind the untrusted ones.
 */
import { requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import type { Counters } from "../ignored/counters.js";

export function ignoredRoutes(router: Router, deps: { counters: Pick<Counters, "list">; adminToken: string }): void {
  router.add("GET", "/api/v1/ignored", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    sendJson(res, 200, { counters: await deps.counters.list() });
  });
}
