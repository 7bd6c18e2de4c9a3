/**
 * `/health` answers while the process is up; `/ready` only when the database
 * answers and every committed migration is applied, so a load balancer sends
 * no webhook to a replica that would answer it 503.
 *
 * `/ready` answers from a check at most a few seconds old (readiness.ts). Anyone
 * sees the status and a generic reason; the details — the database's error
 * text, where the database is, which migrations are missing — go only to a
 * caller with the admin token, because error text and locations help an
 * attacker more than a load balancer. A wrong token gets the public answer,
 * not a 401: probes must not fail on credentials.
 *
 * A replica whose sweep loop has not succeeded for a long while
 * (metrics/staleness.ts) still serves: it answers 200 with status
 * "degraded" and names the stale sweep.
 *
 * The admin detail also says which GitHub host this is and every feature it
 * was found to lack, with the fallback Orchestra uses there (github/hosts.ts):
 * a documented mode, not a reason to stop serving.
 *
 * In setup mode (no App credentials: Probot's setup page) the process is up
 * and says so on `/health`, but it receives no webhooks: `/ready` answers
 * 503 with why and what to do, so a deployment that lost its credentials is
 * not taken for a working replica.
 */
import type { Database } from "../store/db.js";
import { hasAdminToken, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import { READY_CACHE_MS, Readiness } from "./readiness.js";
import type { StaleSweep } from "../metrics/staleness.js";
import type { HostReport } from "../github/features.js";

export function healthRoutes(
  router: Router,
  deps: {
    database: Database;
    adminToken?: string;
    clock?: { now(): Date };
    readiness?: Readiness;
    stale?: () => StaleSweep[];
    /** What is known of the GitHub host: its release and the features it lacks. */
    host?: () => HostReport;
  },
): void {
  const clock = deps.clock ?? { now: () => new Date() };
  const readiness = deps.readiness ?? Readiness.of(deps.database, clock);

  router.add("GET", "/health", ({ res }) => {
    sendJson(res, 200, { status: "ok", mode: "app" });
  });

  router.add("GET", "/ready", async ({ req, res }) => {
    const c = await readiness.check();
    const stale = c.ready ? (deps.stale?.() ?? []) : [];
    const answer = c.ready
      ? {
          status: stale.length ? "degraded" : "ready",
          database: deps.database.provider,
          mode: "app",
          ...(stale.length ? { stale: stale.map((s) => s.sweep) } : {}),
        }
      : { status: "not ready", reason: c.reason, database: deps.database.provider };
    if (!hasAdminToken(req, deps.adminToken)) {
      sendJson(res, c.ready ? 200 : 503, answer);
      return;
    }
    const ageMs = Math.max(0, clock.now().getTime() - c.checkedAt.getTime());
    sendJson(res, c.ready ? 200 : 503, {
      ...answer,
      detail: {
        where: deps.database.where,
        ...(c.error !== null ? { error: c.error } : {}),
        ...(stale.length
          ? {
              staleSweeps: stale,
              staleHint:
                "the sweep loop has not finished a run in that time: see the log for 'sweep failed', and the database",
            }
          : {}),
        ...(c.pending.length > 0
          ? {
              pending: c.pending,
              hint: "run orchestra migrate, or restart a replica: each applies pending migrations at start-up",
            }
          : {}),
        ...(deps.host ? { github: githubDetail(deps.host()) } : {}),
        checkedAt: c.checkedAt,
        ageMs,
        cacheMs: READY_CACHE_MS,
      },
    });
  });
}

/** The host and its fallbacks, as the operator reads them. */
function githubDetail(r: HostReport) {
  return {
    host: r.host,
    fallbacks: r.gaps.map((g) => ({
      feature: g.feature,
      fallback: g.fallback,
      evidence: g.evidence,
      since: g.since,
    })),
  };
}

/** What setup mode is and how to leave it: anyone who reaches the port may see it, as they may see the setup page. */
export const SETUP_MODE =
  "setup mode: no App credentials (APP_ID, PRIVATE_KEY), so no webhook is received; register the App on this " +
  "server's setup page (/probot), add ORCHESTRA_ADMIN_TOKEN, and restart";

export function setupHealthRoutes(router: Router): void {
  router.add("GET", "/health", ({ res }) => {
    sendJson(res, 200, { status: "ok", mode: "setup", setup: SETUP_MODE });
  });
  router.add("GET", "/ready", ({ res }) => {
    sendJson(res, 503, { status: "not ready", reason: "setup mode", mode: "setup", setup: SETUP_MODE });
  });
}
