/**
 * A small method+path router for the JSON API. Handlers return nothing and
 * write the response; a thrown HttpError becomes its JSON answer, anything
 * else a 500 that is logged.
 */
import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pathOf, sendError } from "./respond.js";
import { Refusal, type RefusalKind } from "../refusal.js";
import { ADMIN_HINT, tooManyMessage, type TokenThrottle } from "./throttle.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * A token that is not the one it claims to be (a wrong admin, worker or metrics token): a 401 that counts against
 * the client's address, and a 429 once the address is over its limit (throttle.ts). `hint` names the right token.
 */
export class BadToken extends HttpError {
  constructor(
    message: string,
    readonly hint: string,
    extra: Record<string, unknown> = {},
  ) {
    super(401, message, extra);
  }
}

export interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** The status that answers each kind of refusal from the rooms below the HTTP layer. */
export const REFUSAL_STATUS: Record<RefusalKind, number> = {
  invalid: 400,
  forbidden: 403,
  "not-found": 404,
  conflict: 409,
  unavailable: 503,
};

type Handler = (r: Request) => void | Promise<void>;

interface Route {
  method: string;
  path: string;
  pattern: RegExp;
  keys: string[];
  handler: Handler;
}

export class Router {
  readonly #routes: Route[] = [];
  readonly #throttle: TokenThrottle | undefined;

  constructor(opts: { throttle?: TokenThrottle } = {}) {
    this.#throttle = opts.throttle;
  }

  /** Counts a wrong token from the request's client: the seconds it must wait once over its limit, else null. */
  tokenFailed(req: IncomingMessage): number | null {
    return this.#throttle?.failed(req) ?? null;
  }

  add(method: string, path: string, handler: Handler): this {
    const keys: string[] = [];
    const pattern = new RegExp(
      `^${path.replace(/:([a-zA-Z]+)/g, (_, k: string) => {
        keys.push(k);
        return "([^/]+)";
      })}/?$`,
    );
    this.#routes.push({ method, path, pattern, keys, handler });
    return this;
  }

  /** Every registered route as `METHOD /path/:param` (tests walk them all). */
  routes(): Array<{ method: string; path: string }> {
    return this.#routes.map((r) => ({ method: r.method, path: r.path }));
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
      try {
        const { params, query } = parts(route, path, req.url ?? "/");
        await route.handler({ req, res, params, query });
      } catch (err) {
        const wait = err instanceof BadToken ? this.tokenFailed(req) : null;
        if (wait !== null) {
          if (!res.headersSent) {
            res.setHeader("retry-after", String(wait));
            sendError(res, 429, tooManyMessage(wait, (err as BadToken).hint), { retryAfterSeconds: wait });
          }
        } else if (err instanceof HttpError) {
          if (!res.headersSent) {
            const wait = err.extra["retryAfterSeconds"];
            if (typeof wait === "number") res.setHeader("retry-after", String(wait));
            sendError(res, err.status, err.message, err.extra);
          }
        } else if (err instanceof Refusal) {
          if (!res.headersSent) sendError(res, REFUSAL_STATUS[err.kind], err.message, err.extra);
        } else {
          log.error({ err: String(err), path }, "api: request failed");
          if (!res.headersSent) sendError(res, 500, "internal error; see the service log");
        }
      }
      return true;
    };
  }
}

/**
 * Why a decoded path segment or query value cannot name anything (null when
 * it can): a control character. Like a `%` escape that is not valid UTF-8
 * (`%zz`, `%E0%A4%A`), it is the caller's mistake (400), never a server
 * error: PostgreSQL refuses a NUL in a text parameter, which used to surface
 * as a 500.
 */
export function malformed(value: string): string | null {
  const control = /[\u0000-\u001f\u007f]/.exec(value);
  return control
    ? `contains the control character U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`
    : null;
}

function decodeSegment(name: string, raw: string): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw new HttpError(
      400,
      `malformed path: the ${name} segment "${raw.slice(0, 100)}" has ` +
        `a % escape that is not valid UTF-8; escape a literal % as %25`,
    );
  }
  const bad = malformed(value);
  if (bad) throw new HttpError(400, `malformed path: the ${name} segment ${bad}`);
  return value;
}

function parts(route: Route, path: string, url: string): { params: Record<string, string>; query: URLSearchParams } {
  const m = route.pattern.exec(path)!;
  const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeSegment(k, m[i + 1]!)]));
  let query: URLSearchParams;
  try {
    query = new URL(url, "http://x").searchParams;
  } catch {
    throw new HttpError(400, "malformed request target: not a path with an optional query");
  }
  for (const [name, value] of query) {
    const bad = malformed(name) ?? malformed(value);
    if (bad) throw new HttpError(400, `malformed query: the parameter ${JSON.stringify(name.slice(0, 50))} ${bad}`);
  }
  return { params, query };
}

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

/** Bearer token check in constant time. */
export function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

/** Whether the request carries the admin token (for answers that only add detail for the operator). */
export function hasAdminToken(req: IncomingMessage, adminToken: string | undefined): boolean {
  const token = bearer(req);
  return Boolean(token && adminToken && timingSafeEqual(digest(token), digest(adminToken)));
}

export function requireAdmin(req: IncomingMessage, adminToken: string): void {
  const token = bearer(req);
  if (!token) throw new HttpError(401, "missing bearer token: send Authorization: Bearer <ORCHESTRA_ADMIN_TOKEN>");
  if (!timingSafeEqual(digest(token), digest(adminToken)))
    throw new BadToken("token is not the admin token", ADMIN_HINT);
}

/**
 * `?state=…&limit=…` of a list route: the state one of `states`, the limit
 * 1–1000 (default 100). 400 otherwise.
 */
export function listQuery(
  query: URLSearchParams,
  states: ReadonlySet<string>,
): { state: string | undefined; limit: number } {
  const state = query.get("state") ?? undefined;
  if (state && !states.has(state)) throw new HttpError(400, `state must be one of ${[...states].join(", ")}`);
  const limitText = query.get("limit");
  const limit = limitText === null ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new HttpError(400, "limit must be an integer from 1 to 1000");
  return { state, limit };
}
