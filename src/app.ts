/**
 * Assembles Orchestra on Probot's server: durable ingest, the inbox processor,
 * the operator API and health routes, and the capability handlers. Nothing
 * here decides anything; it connects the rooms.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { Probot, ProbotOctokit, Server } from "probot";
import type { Credentials, Env } from "./config/env.js";
import type { Database } from "./store/db.js";
import { Inbox } from "./inbox/store.js";
import { Processor, type ProcessorOptions } from "./inbox/processor.js";
import type { RetryPolicy } from "./inbox/backoff.js";
import { webhookHandler } from "./ingest/webhook.js";
import { EventRouter } from "./events/router.js";
import { Router } from "./http/router.js";
import { deliveryRoutes } from "./api/deliveries.js";
import { healthRoutes } from "./health/routes.js";
import { appBotLogin, octokitGitHub } from "./github/octokit.js";
import { ConfigLoader } from "./config/loader.js";
import { Lifecycle, type Clock } from "./tasks/lifecycle.js";
import { registerTasks, startSweeper } from "./tasks/capability.js";
import type { GitHubFor } from "./github/port.js";

export interface Capability {
  (deps: { events: EventRouter; api: Router; database: Database; log: Logger; adminToken: string }): void;
}

export interface OrchestraOptions {
  env: Env & { credentials: Credentials };
  database: Database;
  log: Logger;
  /** Octokit class; tests pass one with retries and throttling off. */
  Octokit?: typeof ProbotOctokit;
  processor?: ProcessorOptions;
  retry?: RetryPolicy;
  capabilities?: Capability[];
  /** Register the task lifecycle (default true); inbox tests run without it. */
  lifecycle?: boolean;
  /** Lease expiry, label repair and dispatch retry interval (default 5 s). */
  sweepMs?: number;
  clock?: Clock;
}

export interface Orchestra {
  server: Server;
  inbox: Inbox;
  processor: Processor;
  events: EventRouter;
  lifecycle: Lifecycle;
  githubFor: GitHubFor;
  start(): Promise<{ port: number }>;
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
  const inbox = new Inbox(database, o.retry);
  const events = new EventRouter();
  const api = new Router();

  const ProbotWithDefaults = Probot.defaults({
    appId: credentials.appId,
    privateKey: credentials.privateKey,
    secret: randomBytes(32).toString("hex"),
    baseUrl: env.baseUrl,
    log,
    ...(o.Octokit ? { Octokit: o.Octokit } : {}),
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
    return octokitGitHub(await probot.auth(installationId));
  };
  const processor = new Processor(inbox, events.dispatcher({ githubFor, log }), log, o.processor);

  let botLogin: Promise<string> | undefined;
  const configs = new ConfigLoader(githubFor);
  const lifecycle = new Lifecycle({
    db: database.db,
    githubFor,
    configs,
    log,
    botLogin: () => {
      if (!probot) return Promise.reject(new Error("server not loaded"));
      const app = probot;
      botLogin ??= app.auth().then(appBotLogin);
      botLogin.catch(() => (botLogin = undefined));
      return botLogin;
    },
    ...(o.clock ? { clock: o.clock } : {}),
  });
  let sweeper: { stop(): Promise<void> } | undefined;

  healthRoutes(api, { database, mode: "app" });
  deliveryRoutes(api, { inbox, adminToken: credentials.adminToken, poke: () => processor.poke() });
  const withLifecycle = o.lifecycle ?? true;
  if (withLifecycle) registerTasks({ events, api, db: database.db, lifecycle, configs, adminToken: credentials.adminToken });
  for (const capability of o.capabilities ?? []) capability({ events, api, database, log, adminToken: credentials.adminToken });

  await server.load((app, { addHandler }) => {
    probot = app;
    addHandler(
      webhookHandler({
        secret: credentials.webhookSecret,
        record: (d) => inbox.record(d),
        handles: (event, action) => events.handlersFor(event, action).length > 0,
        onStored: () => processor.poke(),
        log,
      }),
    );
    addHandler(api.handler(log));
  });

  return {
    server,
    inbox,
    processor,
    events,
    lifecycle,
    githubFor,
    async start() {
      if (database.provider === "sqlite") {
        // One process owns the embedded file: claims still marked in flight
        // belong to a previous process that died; run them again now.
        const released = await inbox.releaseAll();
        if (released > 0) log.warn({ released }, "inbox: re-queued deliveries left in flight by a previous process");
      }
      const http = await server.start();
      processor.start();
      if (withLifecycle) sweeper = startSweeper(lifecycle, log, o.sweepMs ?? 5_000);
      const address = http.address();
      return { port: typeof address === "object" && address ? address.port : env.port };
    },
    async stop() {
      await server.stop();
      await sweeper?.stop();
      await processor.stop();
    },
  };
}
