/**
 * Assembles Orchestra on Probot's server: durable ingest and the inbox
 * processor, the state machine's one write path, the effects outbox and its
 * executor, the capability rooms (rooms.ts), the API and health routes
 * (routes.ts). Nothing here decides anything; it connects the rooms.
 */
import type { Logger } from "pino";
import type { ProbotOctokit, Server } from "probot";
import type { Credentials, Env } from "../config/env.js";
import type { Database } from "../store/db.js";
import { Inbox, type Collapsed } from "../inbox/store.js";
import { inboxQueries } from "../inbox/queries.js";
import { Processor, type ProcessorOptions } from "../inbox/processor.js";
import type { RetryPolicy } from "../retry/schedule.js";
import type { BodyTiming } from "../ingest/body.js";
import { takeOverRequests } from "../ingest/front.js";
import { logEachDelivery } from "../inbox/log.js";
import { EventRouter } from "../events/router.js";
import { Router } from "../http/router.js";
import { TokenThrottle } from "../http/throttle.js";
import type { GitHubFor } from "../github/port.js";
import type { Clock, Tasks } from "../apply/tasks.js";
import type { Outbox } from "../effects/outbox.js";
import { unmanagedInstallation } from "../effects/installations.js";
import type { Executor, ExecutorOptions } from "../effects/executor.js";
import { type Sweeper, startSweeper } from "../sweeps/sweeper.js";
import { Counters } from "../ignored/counters.js";
import { ignoredQueries } from "../ignored/queries.js";
import type { MissedDeliveries } from "../reconcile/deliveries.js";
import { metricsRoom } from "../metrics/routes.js";
import { Replicas, type ReplicaOptions } from "../replicas/replicas.js";
import { ownerId } from "../store/renewal.js";
import { replicaQueries } from "../replicas/queries.js";
import { gitHubAccess } from "./github.js";
import { buildRooms, type TestHooks } from "./rooms.js";
import { registerRoutes } from "./routes.js";

export { ProductionOctokit } from "./github.js";

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
  hooks?: TestHooks;
  /** This replica's beat (src/replicas/); `start: false` leaves it to the test to call `beat()`. */
  replica?: ReplicaOptions & { start?: boolean };
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
  /** This replica's beat, and the release of what a silent one held. */
  replicas: Replicas;
  /** Missed webhook deliveries: redelivery, and the installations still waiting for one. */
  deliveries: MissedDeliveries;
  githubFor: GitHubFor;
  start(): Promise<{ port: number }>;
  /** Waits for a sweep under way (the one at start-up included). */
  sweepSettled(): Promise<void>;
  stop(): Promise<void>;
}

export async function createOrchestra(o: OrchestraOptions): Promise<Orchestra> {
  const { env, database, log } = o;
  const db = database.db;
  const clock: Clock = o.clock ?? { now: () => new Date() };
  // The owner this replica's processor and executor claim under: what a silent replica's beat row names.
  const owner = o.replica?.id ?? ownerId();
  const retry: Partial<RetryPolicy> = { windowMs: env.retryWindowHours * 3_600_000, ...o.retry };
  const counters = new Counters({ database, queries: ignoredQueries(db), clock });
  // A backlog said the same again and again (src/inbox/collapse.ts): logged, and counted as ignored.
  const collapsed = (c: Collapsed): void => {
    log.info(c, "inbox: deliveries that said what a later one says were collapsed into it");
    counters
      .bump("ignored.collapsed", c.collapsed)
      .catch((err: unknown) => log.warn({ err: String(err) }, "could not count collapsed deliveries"));
  };
  const inbox = new Inbox(inboxQueries(db), database, retry, collapsed);
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
  const github = gitHubAccess({ env, log, metrics, ...(o.Octokit ? { Octokit: o.Octokit } : {}) });
  const { server, githubFor } = github;
  const onIgnored = (why: "unhandled" | "unmanaged") =>
    counters.bump(why === "unmanaged" ? "ignored.unmanaged" : "ignored.unhandled-event");
  const rooms = buildRooms({
    env,
    database,
    log,
    clock,
    retry,
    github,
    metrics,
    ...pick(o, ["reconcileEveryMs", "sweepMs", "deliveriesEveryMs", "hooks"]),
    effects: { owner, ...o.effects },
  });
  const { tasks, outbox, executor, sweeper, deliveries } = rooms;
  const processor = new Processor(
    inbox,
    logEachDelivery(
      events.dispatcher({
        githubFor,
        log,
        unmanaged: (id) => unmanagedInstallation(rooms.effectRows, id),
        observe: (payload) => rooms.seen.observe(payload),
        onIgnored,
      }),
      log,
    ),
    log,
    { owner, clock, onDone: (receivedAt, at) => metrics.delivered(receivedAt, at), ...o.processor },
  );
  const replicas = new Replicas(
    {
      queries: replicaQueries(db),
      clock,
      log,
      release: async (id) => ({ deliveries: await inbox.releaseHeldBy(id), effects: await outbox.releaseHeldBy(id) }),
      onReleased: ({ deliveries, effects }) => {
        metrics.replicaReleased.inc({ kind: "delivery" }, deliveries);
        metrics.replicaReleased.inc({ kind: "effect" }, effects);
      },
    },
    { ...o.replica, id: owner },
  );
  let stopping = false;
  const { ingest, apiHandler } = registerRoutes({
    env,
    database,
    log,
    clock,
    events,
    api,
    rooms,
    inbox,
    counters,
    metrics,
    callHours,
    stale,
    isSelf: github.isSelf,
    knownBotLogin: github.knownBotLogin,
    pokeInbox: () => processor.poke(),
    replicas,
    stopping: () => stopping,
    ...(o.ingest ? { ingest: o.ingest } : {}),
  });
  await server.load((app, { addHandler }) => {
    github.bind(app);
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
    replicas,
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
      if (o.replica?.start !== false) replicas.start();
      const address = http.address();
      return { port: typeof address === "object" && address ? address.port : env.port };
    },
    async sweepSettled() {
      await sweeping?.settled();
    },
    async stop() {
      // Deliveries are refused (503) from now on; the loops stop taking work, then the GitHub calls
      // in flight are abandoned, so nothing waits on a GitHub that does not answer. Their deliveries
      // and effects stay pending for the next process or another replica.
      stopping = true;
      const loops = [sweeping?.stop() ?? Promise.resolve(), processor.stop(), executor.stop()];
      github.stopCalls();
      await Promise.all(loops);
      // Last: what it held is given back by now, so its row goes and nobody waits for it to fall silent.
      await replicas.stop();
      await server.stop();
    },
  };
}

/** The options that are set, so an unset one keeps its room's default. */
function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
