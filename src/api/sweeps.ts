/**
 * Operator view of the sweeps: what each reconcile, deliveries and retention
 * run did (counts per action, and in dry run the plan), and which
 * repositories or installations reconcile cannot read at the moment.
 */
import { HttpError, listQuery, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import type { FailureStreaks } from "../reconcile/failing.js";
import { SWEEP_KINDS } from "../reconcile/reports.js";
import type { ApiQueries } from "./queries.js";

const KINDS = new Set<string>(SWEEP_KINDS);

export function sweepRoutes(
  router: Router,
  deps: { queries: Pick<ApiQueries, "sweepReports">; adminToken: string; streaks: Pick<FailureStreaks, "current"> },
): void {
  router.add("GET", "/api/v1/sweeps", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const { limit } = listQuery(new URLSearchParams({ limit: query.get("limit") ?? "100" }), new Set());
    const kind = query.get("kind") ?? undefined;
    if (kind !== undefined && !KINDS.has(kind))
      throw new HttpError(400, `kind must be one of ${[...KINDS].join(", ")}`);
    const [rows, failing] = await Promise.all([deps.queries.sweepReports(kind, limit), deps.streaks.current()]);
    sendJson(res, 200, {
      failing,
      reports: rows.map((r) => ({
        kind: r.kind,
        at: r.at.toISOString(),
        installationId: r.installationId,
        counts: JSON.parse(r.counts) as Record<string, number>,
        detail: r.detail === null ? null : (JSON.parse(r.detail) as unknown),
      })),
    });
  });
}
