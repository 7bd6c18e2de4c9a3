/** The audit log of ignored input (admin token): `GET /api/v1/audit?repo=owner/repo&limit=100`. */
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import type { Audit } from "../human/audit.js";

export function auditRoutes(router: Router, deps: { audit: Audit; adminToken: string }): void {
  router.add("GET", "/api/v1/audit", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const limit = Number(query.get("limit") ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new HttpError(400, "limit must be an integer from 1 to 1000");
    const repo = query.get("repo") ?? undefined;
    sendJson(res, 200, await deps.audit.list({ ...(repo ? { repo } : {}), limit }));
  });
}
