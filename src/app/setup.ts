/**
 * Setup mode: the service without App credentials serves Probot's setup page
 * (register the App from app.yml; Probot writes its credentials to .env) and
 * Orchestra's /health and /ready, which say it is in setup mode.
 *
 * Probot's `run()` builds this server itself and gives no way to add a route
 * to it, so the server is built here the way `run()` builds it in setup mode:
 * Probot's server with a placeholder App (`run()` does the same, "#1512") and
 * the setup page's handler. That handler is not among the package's exports;
 * it is loaded from the file next to Probot's entry, of the exact version
 * package.json pins.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { Probot, Server } from "probot";
import type { Env } from "../config/env.js";
import { setupHealthRoutes } from "../health/routes.js";
import { Router } from "../http/router.js";
import { takeOverRequests } from "../ingest/front.js";

type SetupHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
interface SetupModule {
  setupAppFactory: (options: { host: string; port: number; log: Logger }) => () => Promise<SetupHandler>;
}

export interface SetupServer {
  port: number;
  stop(): Promise<void>;
}

export async function startSetup(o: { env: Env; log: Logger }): Promise<SetupServer> {
  const { env, log } = o;
  const { setupAppFactory } = (await import(
    new URL("./apps/setup.js", import.meta.resolve("probot")).href
  )) as SetupModule;
  const server = new Server({
    Probot: Probot.defaults({ appId: 1, privateKey: "unused in setup mode", baseUrl: env.baseUrl, log }),
    port: env.port,
    host: env.host,
    log,
  });
  await server.loadHandlerFactory(
    setupAppFactory({ host: env.host, port: env.port, log: log.child({ name: "setup" }) }),
  );
  const http = await server.start();
  const router = new Router();
  setupHealthRoutes(router);
  takeOverRequests(http, [router.handler(log)], log);
  const address = http.address();
  return {
    port: typeof address === "object" && address ? address.port : env.port,
    stop: () => server.stop(),
  };
}
