/**
 * `GET /metrics` in Prometheus' text format. With ORCHESTRA_METRICS_TOKEN set
 * a scrape must carry it as a bearer token; without it (never in production,
 * where the token is required) the endpoint answers only scrapes from this
 * machine, since it names repositories, private ones too.
 */
import { BadToken, bearer, hasAdminToken, HttpError, type Router } from "../http/router.js";
import type { Database } from "../store/db.js";
import { CallHours } from "./call-hours.js";
import { Metrics } from "./registry.js";
import { TableGauges } from "./collector.js";
import { staleSweep, type StaleSweep } from "./staleness.js";
import { metricsQueries } from "./queries.js";

export function metricsRoutes(
  router: Router,
  deps: { metrics: Metrics; gauges: TableGauges; token: string | undefined },
): void {
  router.add("GET", "/metrics", async ({ req, res }) => {
    if (deps.token === undefined && !isLoopback(req.socket.remoteAddress)) {
      throw new HttpError(
        403,
        "/metrics answers only this machine while ORCHESTRA_METRICS_TOKEN is unset: " +
          "set it and send it as Authorization: Bearer <ORCHESTRA_METRICS_TOKEN>",
      );
    }
    if (deps.token !== undefined && !hasAdminToken(req, deps.token)) {
      if (bearer(req))
        throw new BadToken(
          "token is not the metrics token",
          "the metrics token is ORCHESTRA_METRICS_TOKEN in the service's environment",
        );
      throw new HttpError(401, "missing bearer token: send Authorization: Bearer <ORCHESTRA_METRICS_TOKEN>");
    }
    await deps.gauges.refresh();
    const body = await deps.metrics.registry.metrics();
    res.writeHead(200, { "content-type": deps.metrics.registry.contentType, "cache-control": "no-store" });
    res.end(body);
  });
}

/** A client on this machine: 127.0.0.0/8, ::1, or IPv4 loopback as IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4.startsWith("127.") || address === "::1";
}

/**
 * The metrics room as the app wires it: the registry, the table
 * gauges, the route, and the sweep staleness `/ready` reads.
 */
export function metricsRoom(deps: {
  api: Router;
  database: Database;
  clock: { now(): Date };
  token: string | undefined;
  sweepMs: number;
  log: { warn(obj: object, msg: string): void };
}): { metrics: Metrics; callHours: CallHours; stale: () => StaleSweep[] } {
  const metrics = new Metrics();
  const queries = metricsQueries(deps.database.db);
  const callHours = new CallHours({
    database: deps.database,
    queries,
    clock: deps.clock,
    onError: (err) =>
      deps.log.warn(
        { err: String(err) },
        "metrics: could not store the hourly GitHub call counts; they are kept and written with the next ones",
      ),
  });
  metrics.onGitHubCall = (kind) => callHours.count(kind);
  const startedAt = deps.clock.now();
  metricsRoutes(deps.api, {
    metrics,
    gauges: new TableGauges(metrics.registry, queries, deps.clock),
    token: deps.token,
  });
  return {
    metrics,
    callHours,
    stale: () => {
      const s = staleSweep("sweep", metrics.lastSuccess("sweep"), startedAt, deps.sweepMs, deps.clock.now());
      return s ? [s] : [];
    },
  };
}
