/**
 * A small method+path router for the JSON API. Handlers return nothing and
 * write the response; a thrown HttpError becomes its JSON answer, anything
 * else a 500 that is logged.
 */
import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pathOf, sendError } from "./respond.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
}

type Handler = (r: Request) => Promise<void>;

interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: Handler;
}

export class Router {
  readonly #routes: Route[] = [];

  add(method: string, path: string, handler: Handler): this {
    const keys: string[] = [];
    const pattern = new RegExp(
      `^${path.replace(/:([a-zA-Z]+)/g, (_, k: string) => {
        keys.push(k);
        return "([^/]+)";
      })}/?$`,
    );
    this.#routes.push({ method, pattern, keys, handler });
    return this;
  }

  /** A Probot server handler: true when this router answered. */
  handler(log: { error(obj: object, msg: string): void }) {
    return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
      const path = pathOf(req);
      const matching = this.#routes.filter((r) => r.pattern.test(path));
      if (matching.length === 0) return false;
      const route = matching.find((r) => r.method === req.method);
      if (!route) {
        sendError(res, 405, `${req.method} is not allowed here; use ${matching.map((r) => r.method).join(" or ")}`);
        return true;
      }
      const m = route.pattern.exec(path)!;
      const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1]!)]));
      const query = new URL(req.url ?? "/", "http://x").searchParams;
      try {
        await route.handler({ req, res, params, query });
      } catch (err) {
        if (err instanceof HttpError) {
          if (!res.headersSent) sendError(res, err.status, err.message, err.extra);
        } else {
          log.error({ err: String(err), path }, "api: request failed");
          if (!res.headersSent) sendError(res, 500, "internal error; see the service log");
        }
      }
      return true;
    };
  }
}

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

/** Bearer token check in constant time. */
export function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

export function requireAdmin(req: IncomingMessage, adminToken: string): void {
  const token = bearer(req);
  if (!token) throw new HttpError(401, "missing bearer token: send Authorization: Bearer <ORCHESTRA_ADMIN_TOKEN>");
  if (!timingSafeEqual(digest(token), digest(adminToken))) throw new HttpError(401, "token is not the admin token");
}

/** `?state=…&limit=…` of a list route: the state one of `states`, the limit 1–1000 (default 100). 400 otherwise. */
export function listQuery(query: URLSearchParams, states: ReadonlySet<string>): { state: string | undefined; limit: number } {
  const state = query.get("state") ?? undefined;
  if (state && !states.has(state)) throw new HttpError(400, `state must be one of ${[...states].join(", ")}`);
  const limitText = query.get("limit");
  const limit = limitText === null ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new HttpError(400, "limit must be an integer from 1 to 1000");
  return { state, limit };
}
