/**
 * The ingest half of the App on its own, for tests of the inbox and the
 * processor with handlers of their own (one that fails, one that is slow, one
 * that records): the real webhook handler, inbox, processor and event router,
 * and the deliveries API, wired as src/app.ts wires them, on a plain HTTP
 * server. Tests of the whole App use startOrchestra instead.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { Writable } from "node:stream";
import { EventRouter } from "../../src/events/router.js";
import { Inbox } from "../../src/inbox/store.js";
import { inboxQueries } from "../../src/inbox/queries.js";
import { effectsQueries } from "../../src/effects/queries.js";
import { Processor, type ProcessorOptions } from "../../src/inbox/processor.js";
import { logEachDelivery } from "../../src/inbox/log.js";
import { webhookHandler } from "../../src/ingest/webhook.js";
import { takeOverRequests } from "../../src/ingest/front.js";
import { Router } from "../../src/http/router.js";
import { sendError } from "../../src/http/respond.js";
import { deliveryRoutes } from "../../src/api/deliveries.js";
import { unmanagedInstallation } from "../../src/effects/installations.js";
import { createLogger } from "../../src/log.js";
import { openDatabase, type Database } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import type { RetryPolicy } from "../../src/retry/schedule.js";
import type { GitHubFor } from "../../src/github/port.js";
import { RigClock } from "./clock.js";

export interface IngestRig {
  url: string;
  port: number;
  secret: string;
  adminToken: string;
  database: Database;
  inbox: Inbox;
  processor: Processor;
  logs: Array<Record<string, unknown>>;
  admin(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

export async function startIngest(opts: {
  db: { url: string | undefined };
  /** The webhook secret and admin token; random unless given. */
  secret?: string;
  adminToken?: string;
  /** Where to listen (default 127.0.0.1 on a free port). */
  host?: string;
  port?: number;
  ingest?: { maxUnverifiedBytes?: number };
  /** Whether the service is stopping (its deliveries are refused with 503). */
  stopping?: () => boolean;
  /** Log level of the captured logs (default info). */
  logLevel?: string;
  /** Registers the test's handlers. */
  handlers?: (events: EventRouter) => void;
  processor?: ProcessorOptions;
  retry?: Partial<RetryPolicy>;
  /** The installations' GitHub, for handlers that call ctx.github(); none unless given. */
  githubFor?: GitHubFor;
  clock?: { now(): Date };
}): Promise<IngestRig> {
  const secret = opts.secret ?? randomBytes(16).toString("hex");
  const adminToken = opts.adminToken ?? randomBytes(32).toString("hex");
  const clock = opts.clock ?? new RigClock();
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split("\n")) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const log = createLogger(opts.logLevel ?? "info", sink);
  const database = await openDatabase(opts.db.url, { poolSize: 5 });
  await migrate(database);
  const inbox = new Inbox(inboxQueries(database.db), database, opts.retry ?? {});
  const events = new EventRouter();
  opts.handlers?.(events);
  const githubFor: GitHubFor =
    opts.githubFor ?? (() => Promise.reject(new Error("this rig has no GitHub; pass githubFor to startIngest")));
  const processor = new Processor(
    inbox,
    logEachDelivery(
      events.dispatcher({ githubFor, log, unmanaged: (id) => unmanagedInstallation(effectsQueries(database.db), id) }),
      log,
    ),
    log,
    { clock, pollMs: 50, ...opts.processor },
  );
  const ingest = webhookHandler({
    secret,
    record: (d) => inbox.record(d),
    handles: (event, action) => events.handlersFor(event, action).length > 0,
    onStored: () => processor.poke(),
    log,
    ...(opts.stopping ? { stopping: opts.stopping } : {}),
    ...(opts.ingest?.maxUnverifiedBytes ? { maxUnverifiedBytes: opts.ingest.maxUnverifiedBytes } : {}),
  });
  const api = new Router();
  deliveryRoutes(api, { inbox, adminToken, clock, poke: () => processor.poke() });
  const server: Server = createServer((_req, res) => sendError(res, 404, "not found"));
  takeOverRequests(server, [ingest, api.handler(log)], log);
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", resolve));
  // As the App does at start: one process owns the embedded file, so claims left in flight belong to a dead one.
  if (database.provider === "sqlite") await inbox.releaseAll();
  processor.start();
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    secret,
    adminToken,
    database,
    inbox,
    processor,
    logs,
    admin: (path, init = {}) =>
      fetch(url + path, { ...init, headers: { authorization: `Bearer ${adminToken}`, ...(init.headers ?? {}) } }),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await processor.stop();
      await database.close();
    },
  };
}
