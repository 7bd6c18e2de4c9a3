/**
 * Registers what answers requests: the one webhook room on the event router,
 * the health, API and dashboard routes, and the durable webhook ingest.
 * Nothing here decides anything; it connects the rooms to HTTP.
 */
import type { Logger } from "pino";
import type { Credentials, Env } from "../config/env.js";
import type { Database } from "../store/db.js";
import type { Clock } from "../apply/tasks.js";
import type { EventRouter } from "../events/router.js";
import type { Router } from "../http/router.js";
import type { Inbox } from "../inbox/store.js";
import type { Counters } from "../ignored/counters.js";
import type { BodyTiming } from "../ingest/body.js";
import type { Metrics } from "../metrics/registry.js";
import type { metricsRoom } from "../metrics/routes.js";
import type { Rooms } from "./rooms.js";
import { countingIgnored } from "../ignored/counters.js";
import { webhookHandler } from "../ingest/webhook.js";
import { InstallationStanding } from "../ingest/standing.js";
import { unmanagedInstallation } from "../effects/installations.js";
import { healthRoutes } from "../health/routes.js";
import { webhookRoom } from "../webhooks/room.js";
import { webhookQueries } from "../webhooks/queries.js";
import { checksQueries } from "../checks/queries.js";
import { registerApi } from "../api/index.js";
import { dashboardRoutes } from "../dashboard/routes.js";
import { dashboardQueries } from "../dashboard/queries.js";
import { viewsQueries } from "../views/queries.js";
import type { Replicas } from "../replicas/replicas.js";
import { webOf } from "../dashboard/html.js";

type MetricsRoom = ReturnType<typeof metricsRoom>;

export function registerRoutes(o: {
  env: Env & { credentials: Credentials };
  database: Database;
  log: Logger;
  clock: Clock;
  events: EventRouter;
  api: Router;
  rooms: Rooms;
  inbox: Inbox;
  counters: Counters;
  metrics: Metrics;
  callHours: MetricsRoom["callHours"];
  stale: MetricsRoom["stale"];
  isSelf: (actor: { login: string; type: string }) => Promise<boolean>;
  knownBotLogin: () => string | null;
  pokeInbox: () => void;
  replicas: Pick<Replicas, "list">;
  /** The service is stopping: webhooks are refused with 503. */
  stopping: () => boolean;
  ingest?: { maxUnverifiedBytes?: number; bodyTiming?: BodyTiming };
}) {
  const { env, database, log, clock, events, api, rooms: r, inbox, counters, metrics } = o;
  const { credentials } = env;
  const db = database.db;
  webhookRoom(events, {
    queries: webhookQueries(db),
    checks: checksQueries(db),
    effects: r.effectRows,
    tasks: r.tasks,
    dispatcher: r.dispatcher,
    configs: r.configs,
    permissions: r.permissions,
    isSelf: o.isSelf,
    blockers: r.blockers,
    audit: r.audit,
    counters,
    questions: r.questions,
    reconciler: r.reconcile.reconciler,
    fleet: r.fleet,
    installations: r.installations,
    outbox: r.outbox,
    gates: r.gates,
    clock,
    log,
  });
  const host = () => r.features.report();
  healthRoutes(api, { database, adminToken: credentials.adminToken, clock, stale: o.stale, host });
  const apiDeps = {
    queries: r.apiRows,
    database,
    views: viewsQueries(db),
    adminToken: credentials.adminToken,
    workers: r.workers,
    tokens: r.workerTokens,
    idempotency: r.idempotency,
    claims: metrics.timedClaims(r.claims),
    onClaimShed: () => metrics.claimsShed.inc(),
    leases: r.leases,
    exits: r.exits,
    credentials: r.broker,
    releases: r.releases,
    pauses: r.pauses,
    inbox,
    outbox: r.outbox,
    ledger: r.ledger,
    gates: r.gates,
    audit: r.audit,
    streaks: r.reconcile.streaks,
    branches: r.reconcile.branches,
    counters,
    tasks: r.tasks,
    humanQueries: r.humanRows,
    clock,
    callHours: o.callHours,
    rateLimits: () => metrics.rateLimits,
    web: webOf(env.baseUrl),
    deliveriesWaiting: r.deliveriesWaiting,
    pokeInbox: o.pokeInbox,
    pokeEffects: () => r.executor.poke(),
    replicas: o.replicas,
    host,
  };
  registerApi(api, apiDeps);
  dashboardRoutes(api, { ...apiDeps, sessions: dashboardQueries(db) });
  // Someone who opens the service's address finds the dashboard (its sign-in page until they have a session).
  api.add("GET", "/", ({ res }) => {
    res.writeHead(302, { location: "/dashboard" }).end();
  });

  const standing = new InstallationStanding({
    listUnmanaged: async () =>
      (await r.effectRows.heldInstallations(clock.now()))
        .filter((i) => i.deletedAt !== null || i.suspendedAt !== null)
        .map((i) => String(i.id)),
    // Its own events waiting (an unsuspend not processed yet): it may be managed again by then.
    confirm: async (id) => ((await inbox.hasOpen(id)) ? null : unmanagedInstallation(r.effectRows, Number(id))),
    clock,
    log,
  });
  const ingest = webhookHandler({
    secret: credentials.webhookSecret,
    record: metrics.countingRecord(countingIgnored((d) => inbox.record(d), counters, log)),
    handles: (event, action) => events.handlersFor(event, action).length > 0,
    unmanaged: (id) => standing.unmanaged(id),
    selfLogin: o.knownBotLogin,
    onStored: o.pokeInbox,
    stopping: o.stopping,
    log,
    maxUnverifiedBytes: o.ingest?.maxUnverifiedBytes,
    ...(o.ingest?.bodyTiming ? { bodyTiming: o.ingest.bodyTiming } : {}),
  });
  return { ingest, apiHandler: api.handler(log) };
}
