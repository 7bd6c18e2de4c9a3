/**
 * Assembles Orchestra on Probot's server: durable ingest and the inbox
 * processor, the state machine's one write path, the effects outbox and its
 * executor, the capability rooms, the API and health routes. Nothing here
 * decides anything; it connects the rooms.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { Probot, ProbotOctokit, Server } from "probot";
import type { Credentials, Env } from "./config/env.js";
import type { Database } from "./store/db.js";
import { Inbox } from "./inbox/store.js";
import { inboxQueries } from "./inbox/queries.js";
import { Processor, type ProcessorOptions } from "./inbox/processor.js";
import type { RetryPolicy } from "./retry/schedule.js";
import type { BodyTiming } from "./ingest/body.js";
import { webhookHandler } from "./ingest/webhook.js";
import { takeOverRequests } from "./ingest/front.js";
import { logEachDelivery } from "./inbox/log.js";
import { EventRouter } from "./events/router.js";
import { Router } from "./http/router.js";
import { TokenThrottle } from "./http/throttle.js";
import { healthRoutes } from "./health/routes.js";
import { appBotLogin, octokitGitHub } from "./github/octokit.js";
import type { GitHubFor } from "./github/port.js";
import { ConfigLoader } from "./config/loader.js";
import { Tasks, type Clock, type TasksDeps } from "./apply/tasks.js";
import { Outbox } from "./effects/outbox.js";
import { Installations, unmanagedInstallation } from "./effects/installations.js";
import { Executor, type ExecutorOptions } from "./effects/executor.js";
import { effectsQueries } from "./effects/queries.js";
import { Ledger } from "./cost/ledger.js";
import { ledgerQueries } from "./cost/queries.js";
import { Workers } from "./workers/workers.js";
import { WorkerTokens } from "./workers/tokens.js";
import { workersQueries } from "./workers/queries.js";
import { Idempotency } from "./api/idempotency.js";
import { Decisions } from "./claims/decisions.js";
import { Claims, GITHUB_COM } from "./claims/claims.js";
import { Leases } from "./claims/leases.js";
import { Settler } from "./exits/settle.js";
import { Exits, type ExitsDeps } from "./exits/exit.js";
import { Releases } from "./claims/releases.js";
import { WorkerPauses } from "./workers/pauses.js";
import { Dispatcher } from "./dispatch/dispatcher.js";
import { RepoGates } from "./gates/repos.js";
import { Breaker } from "./gates/breaker.js";
import { gateQueries } from "./gates/queries.js";
import { claimQueries } from "./claims/queries.js";
import { exitQueries } from "./exits/queries.js";
import { dispatchQueries } from "./dispatch/queries.js";
import { blockerQueries } from "./blockers/queries.js";
import { Blockers } from "./blockers/blockers.js";
import { Sweeper, startSweeper } from "./sweeps/sweeper.js";
import { Retention } from "./retention/retention.js";
import { errorText } from "./github/errors.js";
import { PermissionCache } from "./trust/permissions.js";
import { Audit } from "./human/audit.js";
import { humanQueries } from "./human/queries.js";
import { reconcileQueries } from "./reconcile/queries.js";
import { sweepQueries } from "./sweeps/queries.js";
import { Counters, countingIgnored } from "./ignored/counters.js";
import { ignoredQueries } from "./ignored/queries.js";
import { Questions } from "./human/conditions.js";
import { reconcileRoom } from "./reconcile/room.js";
import type { MissedDeliveries } from "./reconcile/deliveries.js";
import { webhookRoom } from "./webhooks/room.js";
import { webhookQueries } from "./webhooks/queries.js";
import { checksQueries } from "./checks/queries.js";
import { FleetIssues } from "./fleet/issues.js";
import { fleetQueries } from "./fleet/queries.js";
import { cachedFor } from "./gates/waiting.js";
import { registerApi } from "./api/index.js";
import { apiQueries } from "./api/queries.js";
import { dashboardRoutes } from "./dashboard/routes.js";
import { dashboardQueries } from "./dashboard/queries.js";
import { viewsQueries } from "./views/queries.js";
import { metricsRoom } from "./metrics/routes.js";
import { webOf } from "./dashboard/html.js";
import { Broker } from "./credentials/broker.js";
import { credentialsQueries } from "./credentials/queries.js";
import { sealerFrom } from "./credentials/seal.js";
import { octokitInstallationTokens } from "./github/octokit-tokens.js";

/**
 * Probot's octokit without its throttling: writes are paced per installation
 * by the effects executor (Probot's limiter is shared by every installation
 * and can hold a request for an hour on a rate limit). Its retry plugin stays
 * for reads; writes opt out of it call by call.
 */
export const ProductionOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  throttle: { enabled: false },
}));

export interface OrchestraOptions {
  env: Env & { credentials: Credentials };
  database: Database;
  log: Logger;
  /** Octokit class; tests pass one with retries off. */
  Octokit?: typeof ProbotOctokit;
  processor?: ProcessorOptions;
  /** The retry schedule of deliveries and effects; the window defaults to env.retryWindowHours. */
  retry?: Partial<RetryPolicy>;
  /** How often the sweep loop runs drift repair (default 5 minutes). */
  reconcileEveryMs?: number;
  /** Lease expiry, classification and dispatch sweep interval (default 5 s). */
  sweepMs?: number;
  /** Missed-deliveries sweep interval (default 60 s): each reads GitHub's delivery log. */
  deliveriesEveryMs?: number;
  /** The executor; `spacingMs` is the minimum time between two writes of one installation (default 1000). */
  effects?: ExecutorOptions & { spacingMs?: number; start?: boolean };
  clock?: Clock;
  /** Webhook ingest limits; `maxUnverifiedBytes` caps bytes of unverified bodies held at once (default 64 MB). */
  ingest?: { maxUnverifiedBytes?: number; bodyTiming?: BodyTiming };
  /** Points where tests put a concurrent event exactly (never set in service). */
  hooks?: Pick<TasksDeps, "afterTaskRead"> & Pick<ExitsDeps, "beforeTransition">;
}

export interface Orchestra {
  server: Server;
  inbox: Inbox;
  processor: Processor;
  events: EventRouter;
  tasks: Tasks;
  outbox: Outbox;
  executor: Executor;
  sweeper: Sweeper;
  /** Missed webhook deliveries: redelivery, and the installations still waiting for one. */
  deliveries: MissedDeliveries;
  githubFor: GitHubFor;
  start(): Promise<{ port: number }>;
  /** Waits for a sweep under way (the one at start-up included). */
  sweepSettled(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Probot's own webhook middleware cannot be switched off; it is parked on a
 * path nobody posts to, with a random secret, so no request can reach the
 * handlers without going through the durable inbox.
 */
const PROBOT_INTERNAL_WEBHOOK_PATH = "/-/probot-internal-webhooks";

export async function createOrchestra(o: OrchestraOptions): Promise<Orchestra> {
  const { env, database, log } = o;
  const { credentials } = env;
  const db = database.db;
  const clock: Clock = o.clock ?? { now: () => new Date() };
  const retry: Partial<RetryPolicy> = { windowMs: env.retryWindowHours * 3_600_000, ...o.retry };
  const inbox = new Inbox(inboxQueries(db), database, retry);
  const effectRows = effectsQueries(db);
  const events = new EventRouter();
  const api = new Router({ throttle: new TokenThrottle(clock) });
  const { metrics, callHours, stale } = metricsRoom({
    api,
    database,
    clock,
    token: env.metricsToken,
    sweepMs: o.sweepMs ?? 5_000,
    log,
  });

  const ProbotWithDefaults = Probot.defaults({
    appId: credentials.appId,
    privateKey: credentials.privateKey,
    secret: randomBytes(32).toString("hex"),
    baseUrl: env.baseUrl,
    log,
    Octokit: o.Octokit ?? ProductionOctokit,
  });
  const server = new Server({
    Probot: ProbotWithDefaults,
    port: env.port,
    host: env.host,
    log,
    webhookPath: PROBOT_INTERNAL_WEBHOOK_PATH,
  });

  let probot: Probot | undefined;
  const githubFor: GitHubFor = async (installationId) => {
    if (!probot) throw new Error("server not loaded");
    const octokit = await probot.auth(installationId);
    metrics.watchRateLimit(installationId, octokit);
    return metrics.countingPort(installationId, octokitGitHub(octokit));
  };
  // The App's own login, its delivery log and its installations
  // are read as the App itself (its JWT), not as an installation.
  const appAuth = async () => {
    if (!probot) throw new Error("server not loaded");
    return probot.auth();
  };
  let login: Promise<string> | undefined;
  const botLogin = () => {
    login ??= appAuth().then(appBotLogin);
    login.catch(() => (login = undefined));
    return login;
  };
  const isSelf = async (actor: { login: string; type: string }) =>
    actor.type === "Bot" && actor.login.toLowerCase() === (await botLogin()).toLowerCase();
  const counters = new Counters({ database, queries: ignoredQueries(db), clock });
  const onIgnored = (why: "unhandled" | "unmanaged") =>
    counters.bump(why === "unmanaged" ? "ignored.unmanaged" : "ignored.unhandled-event");
  const processor = new Processor(
    inbox,
    logEachDelivery(
      events.dispatcher({ githubFor, log, unmanaged: (id) => unmanagedInstallation(effectRows, id), onIgnored }),
      log,
    ),
    log,
    { clock, onDone: (receivedAt, at) => metrics.delivered(receivedAt, at), ...o.processor },
  );

  // The one write path, the outbox, and the rooms that raise events through them.
  const gateRows = gateQueries(db);
  const gates = new RepoGates({ queries: gateRows, clock });
  const configs = new ConfigLoader(githubFor, 60_000, (installationId, repo, result) =>
    gates
      .record(installationId, repo, result)
      .catch((err: unknown) =>
        log.warn(
          { repo, err: errorText(err) },
          "could not record the repository's gates; the next configuration read records them",
        ),
      ),
  );
  // Installations whose webhook deliveries failed and are not recovered yet: claims there wait for the truth.
  let deliveriesWaiting: () => Promise<Set<number>> = () => Promise.resolve(new Set());
  // The task room pokes the executor, which is built on the task room: the poke goes through this reference.
  const late: { executor?: Executor } = {};
  const tasks = new Tasks({
    db,
    database,
    configs,
    log,
    clock,
    dryRun: env.dryRun,
    fleetDebounceMs: env.fleetDebounceSeconds * 1000,
    onEffects: () => late.executor?.poke(),
    ...(o.hooks?.afterTaskRead ? { afterTaskRead: o.hooks.afterTaskRead } : {}),
  });
  const outbox = new Outbox(effectRows, database);
  // Run tokens are minted as the App and kept sealed under a key derived from its private key.
  const broker = new Broker({
    queries: credentialsQueries(db),
    tokens: octokitInstallationTokens(appAuth),
    sealer: sealerFrom(credentials.privateKey),
    clock,
  });
  const ledger = new Ledger(ledgerQueries(db));
  const installations = new Installations(effectRows, clock, o.effects?.spacingMs ?? 1_000);
  const fleet = new FleetIssues({
    queries: fleetQueries(db),
    configs,
    clock,
    botLogin,
    deliveriesWaiting: () => deliveriesWaiting(),
  });
  const executor = new Executor(
    { queries: effectRows, outbox, installations, githubFor, tasks, ledger, log, clock, fleet, credentials: broker },
    { windowMs: retry.windowMs!, ...o.effects },
  );
  late.executor = executor;
  const workers = new Workers(workersQueries(db), clock);
  const pauses = new WorkerPauses({ queries: workersQueries(db), clock });
  const workerTokens = new WorkerTokens({ queries: workersQueries(db), workers, tasks, pauses });
  const apiRows = apiQueries(db);
  const idempotency = new Idempotency(apiRows, clock, { ttlMs: env.retention.idempotencyHours * 3_600_000 });
  const claimRows = claimQueries(db);
  const decisions = new Decisions(claimRows, database, clock);
  const claims = new Claims({
    queries: claimRows,
    database,
    tasks,
    workers,
    decisions,
    configs,
    clock,
    urls: { web: webOf(env.baseUrl), api: env.baseUrl ?? GITHUB_COM.api },
    deliveriesWaiting: () => deliveriesWaiting(),
    credentials: broker,
  });
  const leases = new Leases({ queries: claimRows, tasks, workers, decisions, clock });
  const releases = new Releases({ leases, tasks, pauses });
  const breaker = new Breaker({ queries: gateRows, database, tasks, configs, clock, log });
  const exitRows = exitQueries(db);
  const settler = new Settler({
    queries: exitRows,
    tasks,
    githubFor,
    ledger,
    clock,
    log,
    onClassified: (installationId, repo) => breaker.check(installationId, repo),
  });
  const blockers = new Blockers({ queries: blockerQueries(db), tasks, githubFor, clock, log });
  const humanRows = humanQueries(db);
  const audit = new Audit({ queries: humanRows, clock });
  const questions = new Questions({ queries: humanRows, tasks, githubFor, clock, log, npmRegistry: env.npmRegistry });
  const exits = new Exits({
    queries: exitRows,
    tasks,
    leases,
    settler,
    githubFor,
    configs,
    ledger,
    clock,
    ...(o.hooks?.beforeTransition ? { beforeTransition: o.hooks.beforeTransition } : {}),
  });
  const dispatcher = new Dispatcher({
    queries: dispatchQueries(db),
    tasks,
    claims,
    leases,
    exits,
    configs,
    botLogin,
    log,
    clock,
  });
  const retention = new Retention({ database, policy: env.retention, clock, log });
  const permissions = new PermissionCache();
  const {
    deliveries,
    streaks,
    reconciler,
    schedule: reconcile,
    branches,
  } = reconcileRoom({
    queries: reconcileQueries(db),
    tasks,
    githubFor,
    configs,
    permissions,
    appAuth,
    fleet,
    dryRun: env.dryRun,
    clock,
    log,
    ...(o.reconcileEveryMs ? { reconcileEveryMs: o.reconcileEveryMs } : {}),
  });
  deliveriesWaiting = cachedFor(5_000, clock, () => deliveries.waiting());
  const sweeper = new Sweeper({
    queries: sweepQueries(db),
    tasks,
    settler,
    claims,
    blockers,
    breaker,
    questions,
    reconcile,
    deliveries,
    deliveriesEveryMs: o.deliveriesEveryMs ?? 60_000,
    retention,
    installations,
    configs,
    clock,
    log,
    leaseLost: (workerId) => pauses.note(workerId),
    onSuccess: (kind, at, r) => metrics.swept(kind, at, r?.expired),
  });

  webhookRoom(events, {
    queries: webhookQueries(db),
    checks: checksQueries(db),
    effects: effectRows,
    tasks,
    dispatcher,
    configs,
    permissions,
    isSelf,
    blockers,
    audit,
    counters,
    questions,
    reconciler,
    fleet,
    installations,
    outbox,
    gates,
    clock,
    log,
  });
  healthRoutes(api, { database, mode: "app", adminToken: credentials.adminToken, clock, stale });
  const apiDeps = {
    queries: apiRows,
    database,
    views: viewsQueries(db),
    adminToken: credentials.adminToken,
    workers,
    tokens: workerTokens,
    idempotency,
    claims: metrics.timedClaims(claims),
    leases,
    exits,
    credentials: broker,
    releases,
    pauses,
    inbox,
    outbox,
    ledger,
    gates,
    audit,
    streaks,
    branches,
    counters,
    tasks,
    humanQueries: humanRows,
    clock,
    callHours,
    rateLimits: () => metrics.rateLimits,
    web: webOf(env.baseUrl),
    deliveriesWaiting: () => deliveriesWaiting(),
    pokeInbox: () => processor.poke(),
    pokeEffects: () => executor.poke(),
  };
  registerApi(api, apiDeps);
  dashboardRoutes(api, { ...apiDeps, sessions: dashboardQueries(db) });

  const ingest = webhookHandler({
    secret: credentials.webhookSecret,
    record: metrics.countingRecord(countingIgnored((d) => inbox.record(d), counters, log)),
    handles: (event, action) => events.handlersFor(event, action).length > 0,
    onStored: () => processor.poke(),
    log,
    maxUnverifiedBytes: o.ingest?.maxUnverifiedBytes,
    ...(o.ingest?.bodyTiming ? { bodyTiming: o.ingest.bodyTiming } : {}),
  });
  const apiHandler = api.handler(log);
  await server.load((app, { addHandler }) => {
    probot = app;
    // Also behind Probot's chain, should a request ever reach it first.
    addHandler(ingest);
    addHandler(apiHandler);
  });

  let sweeping: { stop(): Promise<void>; settled(): Promise<void> } | undefined;
  return {
    server,
    inbox,
    processor,
    events,
    tasks,
    outbox,
    executor,
    sweeper,
    deliveries,
    githubFor,
    async start() {
      if (database.provider === "sqlite") {
        // One process owns the embedded file: claims still marked in flight
        // belong to a previous process that died; run them again now.
        const released = await inbox.releaseAll();
        if (released > 0) log.warn({ released }, "inbox: re-queued deliveries left in flight by a previous process");
        const effects = await outbox.releaseAll();
        if (effects > 0)
          log.warn(
            { effects },
            "effects: re-queued effects left in flight by a previous process; " +
              "each is checked on GitHub before it is sent again",
          );
      }
      const http = await server.start();
      takeOverRequests(http, [ingest, apiHandler], log);
      processor.start();
      if (o.effects?.start !== false) executor.start();
      sweeping = startSweeper(sweeper, log, o.sweepMs ?? 5_000);
      const address = http.address();
      return { port: typeof address === "object" && address ? address.port : env.port };
    },
    async sweepSettled() {
      await sweeping?.settled();
    },
    async stop() {
      await server.stop();
      await sweeping?.stop();
      await processor.stop();
      await executor.stop();
    },
  };
}
