/**
 * The HTTP server's front door. Probot's server runs every request through
 * its own chain first: a request logger at `info` (pino-http, with a child
 * logger and header redaction per request), its webhook middleware, /ping and
 * static files. The webhook endpoint and the JSON API do not need any of it,
 * and at webhook rates it is most of the cost. The front door takes the
 * server's `request` event over: Orchestra's handlers answer first, with one
 * `debug` line per request; anything they do not answer (/ping, Probot's
 * static pages, 404) goes on to Probot's chain as before.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { sendError } from "../http/respond.js";

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function takeOverRequests(server: Server, handlers: RequestHandler[], log: Logger): void {
  const fallback = server.listeners("request") as Listener[];
  server.removeAllListeners("request");
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (log.isLevelEnabled("debug")) logOnFinish(req, res, log);
    try {
      for (const handler of handlers) {
        if (await handler(req, res)) return;
      }
    } catch (err) {
      log.error(
        { err: err instanceof Error ? (err.stack ?? err.message) : String(err), method: req.method, url: req.url },
        "request failed",
      );
      if (!res.headersSent) sendError(res, 500, "internal error; see the service log");
      else res.destroy();
      return;
    }
    for (const listener of fallback) listener.call(server, req, res);
  };
  server.on("request", (req: IncomingMessage, res: ServerResponse) => void serve(req, res));
}

function logOnFinish(req: IncomingMessage, res: ServerResponse, log: Logger): void {
  const started = performance.now();
  const done = (): void => {
    const delivery = req.headers["x-github-delivery"];
    log.debug(
      {
        method: req.method,
        url: req.url,
        status: res.statusCode,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...(delivery ? { delivery } : {}),
        ...(res.writableFinished ? {} : { closed: true }),
      },
      `${req.method} ${req.url} ${res.statusCode}`,
    );
  };
  res.once("finish", done);
  res.once("close", () => {
    if (!res.writableFinished) done();
  });
}
