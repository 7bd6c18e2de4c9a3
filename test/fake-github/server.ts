/**
 * The HTTP side: every request is recorded, checked against GitHub's REST
 * description, authenticated like GitHub does, then answered from state.
 * Anything the App does that GitHub would not accept — or that the fake does
 * not model — becomes a violation, so end-to-end tests fail loudly instead of
 * passing against a lenient mock.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { KeyObject } from "node:crypto";
import { checkAppJwt, JWT_ERRORS, parseAuthorization } from "./auth.js";
import { GraphQLRegistry } from "./graphql/index.js";
import {
  DEFAULT_DOCS,
  docsFor,
  errorBody,
  HttpError,
  notFound,
  type AuthInfo,
  type Handler,
  type Reply,
  type RouteContext,
  type RouteTable,
} from "./http.js";
import { Serializer, type Urls } from "./json.js";
import { formatAjvErrors, type OpenApiIndex, type OperationSpec } from "./openapi.js";
import { actionRoutes } from "./routes/actions.js";
import { appRoutes } from "./routes/apps.js";
import { checkRoutes } from "./routes/checks.js";
import { gitRoutes } from "./routes/git.js";
import { issueRoutes } from "./routes/issues.js";
import { pullRoutes } from "./routes/pulls.js";
import { repoRoutes } from "./routes/repos.js";
import type { FakeState } from "./state.js";

export interface RecordedRequest {
  method: string;
  /** REST path without the `/api/v3` prefix (e.g. `/repos/o/r/issues/1/labels`), or `/graphql` */
  path: string;
  query: Record<string, string>;
  /** parsed JSON body (or the raw text when it is not JSON) */
  body: unknown;
  headers: Record<string, string>;
  /** the description's operationId (`issues/add-labels`), or `graphql:<OperationName>` */
  operationId?: string;
  /** `METHOD /template` as in the description */
  route?: string;
  graphql?: { operationName: string | null; variables: Record<string, unknown> };
  status: number;
  /** when the request arrived (ms since the epoch) */
  at: number;
  /** the response body sent (JSON value or raw text) */
  response?: unknown;
  /** answered by an `inject` rule or by chaos instead of the handler (see `performedStatus`) */
  injected?: boolean;
  /**
   * Set when the request was handled for real before an injected answer
   * replaced the real one (`perform`, or a performed chaos 502): the status
   * the real handling produced. The client only saw `status`.
   */
  performedStatus?: number;
  /** the `x-github-request-id` sent with the answer */
  requestId?: string;
}

export interface InjectRule {
  method?: string;
  /**
   * A string matches the REST path (`/repos/o/r/pulls`), the template
   * (`/repos/{owner}/{repo}/pulls`), the operationId (`pulls/create`), or
   * `graphql` / `graphql:<OperationName>`. A RegExp is tested on the path.
   */
  path: string | RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** how many matching requests to answer (default 1; Infinity for all) */
  times?: number;
  /**
   * Handle the request for real first (state changes exactly as without the
   * rule), then replace the answer with this one: "the write took effect on
   * GitHub but the answer was lost". Default false: the handler is not run.
   */
  perform?: boolean;
}

/**
 * Random faults for REST writes (POST, PATCH, PUT, DELETE). Never for GET,
 * GraphQL, or minting installation tokens; explicit `inject` rules come first.
 */
export interface ChaosOptions {
  /** seed of the deterministic PRNG (mulberry32): the same seed gives the same faults */
  seed: number;
  /** share of writes answering 502 */
  failRate: number;
  /** of those 502s, the share performed before answering (default 0.5) */
  performedShare?: number;
  /** share of writes answering GitHub's secondary rate limit (403 + retry-after; never performed) */
  secondaryRateLimitRate: number;
  /** the retry-after header of a secondary rate limit answer (default 1) */
  retryAfterSeconds?: number;
}

export interface ChaosStats {
  /** writes eligible for chaos while it was on */
  writes: number;
  /** writes answered 502, performed or not */
  failed502: number;
  /** of `failed502`, those handled for real before answering */
  performed502: number;
  /** writes answered with a secondary rate limit */
  rateLimited: number;
}

/** An answer that replaces the handler's; `perform` runs the handler first. */
interface Injection {
  perform: boolean;
  answer(rec: RecordedRequest): Reply;
}

const WRITE_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const TOKEN_MINTING = "POST /app/installations/{installation_id}/access_tokens";
const SECONDARY_RATE_LIMIT_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits";

/** mulberry32: a small, fast, seeded PRNG yielding floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROUTES: RouteTable = {
  ...appRoutes,
  ...issueRoutes,
  ...pullRoutes,
  ...gitRoutes,
  ...checkRoutes,
  ...actionRoutes,
  ...repoRoutes,
};

/** Endpoints that take the App's JWT rather than an installation token (cf. @octokit/auth-app). */
const JWT_PATHS = /^\/(app(\/|$)|repos\/\{owner\}\/\{repo\}\/installation$|orgs\/\{org\}\/installation$|users\/\{username\}\/installation$)/;

/** The installation permission an endpoint needs; writes need "write". */
function requiredPermission(op: OperationSpec): [string, "read" | "write"] | null {
  const p = op.path;
  const level = op.method === "get" ? "read" : "write";
  if (/\/pulls\/\{pull_number\}\/(merge|update-branch)$/.test(p) && level === "write") return ["contents", "write"];
  if (p.includes("/actions/")) return ["actions", level];
  if (/\/check-(runs|suites)/.test(p)) return ["checks", level];
  if (p.includes("/pulls")) return ["pull_requests", level];
  if (/\/(issues|labels)(\/|$)/.test(p)) return ["issues", level];
  if (/\/(git|contents|branches|commits|compare)(\/|$)/.test(p)) return ["contents", level];
  if (p.includes("/collaborators")) return ["metadata", "read"];
  return null;
}

export interface FakeServerOptions {
  state: FakeState;
  openapi: OpenApiIndex;
  publicKey: KeyObject;
  port?: number;
}

export class FakeServer {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  readonly graphql = new GraphQLRegistry();
  readonly state: FakeState;
  json!: Serializer;
  urls!: Urls;
  private readonly openapi: OpenApiIndex;
  private readonly publicKey: KeyObject;
  private readonly rules: (InjectRule & { remaining: number })[] = [];
  private readonly server: Server;
  private requestSeq = 0;
  private chaosConfig: (Required<ChaosOptions> & { random: () => number }) | null = null;
  private chaosCounters: ChaosStats = { writes: 0, failed502: 0, performed502: 0, rateLimited: 0 };

  constructor(private readonly opts: FakeServerOptions) {
    this.state = opts.state;
    this.openapi = opts.openapi;
    this.publicKey = opts.publicKey;
    for (const key of Object.keys(ROUTES)) {
      const [method, path] = key.split(" ") as [string, string];
      if (!this.openapi.byRoute(method, path)) {
        throw new Error(`fake GitHub: route ${key} is not an operation in GitHub's REST description`);
      }
    }
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        this.violations.push(`fake GitHub failed to answer ${req.method} ${req.url}: ${String(e)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    // keep-alive sockets from undici would otherwise hold close() open
    this.server.keepAliveTimeout = 1000;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.opts.port ?? 0, "127.0.0.1", () => resolve());
    });
    const { port } = this.server.address() as AddressInfo;
    const web = `http://127.0.0.1:${port}`;
    this.urls = { api: `${web}/api/v3`, web };
    this.json = new Serializer(this.state, this.urls);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  inject(rule: InjectRule): void {
    this.rules.push({ ...rule, remaining: rule.times ?? 1 });
  }

  /**
   * Random faults for REST writes (see ChaosOptions); null switches them off.
   * Each call with options restarts the PRNG from its seed and resets the
   * counters; switching off keeps the counters for reading.
   */
  chaos(opts: ChaosOptions | null): void {
    if (!opts) {
      this.chaosConfig = null;
      return;
    }
    const performedShare = opts.performedShare ?? 0.5;
    const retryAfterSeconds = opts.retryAfterSeconds ?? 1;
    const share = (name: string, v: number): void => {
      if (!(v >= 0 && v <= 1)) throw new Error(`fake GitHub chaos: ${name} must be between 0 and 1, got ${v}`);
    };
    share("failRate", opts.failRate);
    share("secondaryRateLimitRate", opts.secondaryRateLimitRate);
    share("performedShare", performedShare);
    share("failRate + secondaryRateLimitRate", opts.failRate + opts.secondaryRateLimitRate);
    if (!Number.isInteger(opts.seed)) throw new Error(`fake GitHub chaos: seed must be an integer, got ${opts.seed}`);
    if (!(retryAfterSeconds >= 0)) throw new Error(`fake GitHub chaos: retryAfterSeconds must be >= 0, got ${retryAfterSeconds}`);
    this.chaosConfig = { ...opts, performedShare, retryAfterSeconds, random: mulberry32(opts.seed) };
    this.chaosCounters = { writes: 0, failed502: 0, performed502: 0, rateLimited: 0 };
  }

  /** counters of the latest chaos run (a copy) */
  chaosStats(): ChaosStats {
    return { ...this.chaosCounters };
  }

  /**
   * Called for each REST request just before its handler runs, with the
   * operationId: lets a test change GitHub's state at an exact moment (a
   * check turning red between two reads of it).
   */
  beforeHandle: ((operationId: string, rec: RecordedRequest) => void) | null = null;

  // ---------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", this.urls.web);
    const method = (req.method ?? "GET").toUpperCase();
    const rec: RecordedRequest = {
      method,
      path: url.pathname.startsWith("/api/v3/") ? url.pathname.slice(7) : url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: undefined,
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : String(v ?? "")]),
      ),
      status: 0,
      at: Date.now(),
      requestId: `FAKE:${(++this.requestSeq).toString(16).toUpperCase()}`,
    };
    this.requests.push(rec);
    let reply: Reply;
    try {
      reply = await this.dispatch(req, url, method, raw, rec);
    } catch (e) {
      if (e instanceof HttpError) reply = { status: e.status, body: e.body, headers: e.headers };
      else {
        this.violations.push(`fake GitHub crashed on ${method} ${rec.path}: ${e instanceof Error ? e.stack : String(e)}`);
        reply = { status: 500, body: errorBody(500, "Server Error", DEFAULT_DOCS) };
      }
    }
    rec.status = reply.status;
    rec.response = reply.raw ? reply.raw.text : reply.body;
    this.send(res, reply, rec.requestId!);
  }

  private send(res: ServerResponse, reply: Reply, requestId: string): void {
    const headers: Record<string, string> = {
      "x-github-request-id": requestId,
      "x-github-api-version-selected": "2022-11-28",
      "x-github-media-type": "github.v3; format=json",
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4999",
      "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
      "x-ratelimit-used": "1",
      "x-ratelimit-resource": "core",
      ...reply.headers,
    };
    if (reply.status === 204 || reply.status === 304 || (reply.body === undefined && !reply.raw)) {
      res.writeHead(reply.status, headers);
      res.end();
      return;
    }
    const text = reply.raw ? reply.raw.text : JSON.stringify(reply.body);
    headers["content-type"] = reply.raw ? reply.raw.contentType : "application/json; charset=utf-8";
    headers["content-length"] = String(Buffer.byteLength(text));
    res.writeHead(reply.status, headers);
    res.end(text);
  }

  private async dispatch(req: IncomingMessage, url: URL, method: string, raw: string, rec: RecordedRequest): Promise<Reply> {
    let body: unknown = undefined;
    if (raw.length) {
      try {
        body = JSON.parse(raw);
      } catch {
        rec.body = raw;
        if (/json/.test(String(req.headers["content-type"] ?? "")) || /^\s*[[{]/.test(raw)) {
          this.violations.push(`${method} ${rec.path}: request body is not valid JSON`);
          return { status: 400, body: errorBody(400, "Problems parsing JSON", DEFAULT_DOCS) };
        }
        body = raw;
      }
    }
    rec.body = body;

    // GitHub refuses requests without a User-Agent outright
    if (!req.headers["user-agent"]) {
      this.violations.push(`${method} ${rec.path}: no user-agent header (GitHub answers 403)`);
      return {
        status: 403,
        body: errorBody(
          403,
          "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.",
          DEFAULT_DOCS,
        ),
      };
    }
    if (!req.headers.accept) {
      this.violations.push(`${method} ${rec.path}: no accept header (GitHub expects application/vnd.github+json)`);
    }

    if (url.pathname === "/api/graphql") return this.graphqlRequest(req, method, body, rec);

    if (!url.pathname.startsWith("/api/v3/")) {
      return this.withInjection(this.takeInjection(method, rec.path, null), rec, () => {
        this.violations.push(`unexpected route ${method} ${url.pathname} (REST lives under /api/v3 on this host)`);
        return { status: 404, body: errorBody(404, "Not Found", DEFAULT_DOCS) };
      });
    }

    const match = this.openapi.match(method, url.pathname.slice(7));
    if (!match || "methods" in match) {
      return this.withInjection(this.takeInjection(method, rec.path, null), rec, () => {
        const hint = match ? ` (the path exists for ${match.methods.join(", ")})` : " (not in GitHub's REST description)";
        this.violations.push(`unexpected route ${method} ${rec.path}${hint}`);
        return { status: 404, body: errorBody(404, "Not Found", DEFAULT_DOCS) };
      });
    }
    const { op, params } = match;
    const route = `${method} ${op.path}`;
    rec.operationId = op.operationId;
    rec.route = route;

    const invalid = this.validate(op, params, url.searchParams, body, raw.length > 0, rec);
    const injection = this.takeInjection(method, rec.path, op) ?? this.takeChaos(method, op, rec);
    return this.withInjection(injection, rec, () => this.runOperation(req, url, method, body, op, params, invalid, rec));
  }

  /** Authenticates and runs a described REST operation's handler. */
  private runOperation(
    req: IncomingMessage,
    url: URL,
    method: string,
    body: unknown,
    op: OperationSpec,
    params: Record<string, string>,
    invalid: string | null,
    rec: RecordedRequest,
  ): Reply | Promise<Reply> {
    const route = `${method} ${op.path}`;
    this.beforeHandle?.(op.operationId, rec);
    const handler: Handler | undefined = ROUTES[route];
    if (!handler) {
      this.violations.push(`unexpected route ${method} ${rec.path} (${op.operationId} is not implemented by the fake)`);
      return { status: 404, body: errorBody(404, "Not Found", docsFor({ op })) };
    }

    const auth = this.authenticate(op, req.headers.authorization, rec);
    if (auth.kind === "installation") this.checkPermission(op, auth.installationId);
    if (invalid) throw new HttpError(422, errorBody(422, `Invalid request.\n\n${invalid}`, docsFor({ op })));

    const ctx: RouteContext = {
      state: this.state,
      json: this.json,
      op,
      params,
      query: url.searchParams,
      body: body ?? null,
      headers: req.headers,
      auth,
      url: new URL(url.pathname + url.search, this.urls.web),
      actor: auth.kind === "installation" ? this.state.botLogin : this.state.app.owner,
      repo: () => {
        const repo = this.state.findRepo(`${params.owner}/${params.repo}`);
        if (!repo) throw notFound({ op });
        if (auth.kind === "installation") {
          if (repo.installationId !== auth.installationId) throw notFound({ op });
          if (auth.repositories && !auth.repositories.includes(repo.fullName.toLowerCase())) throw notFound({ op });
        }
        return repo;
      },
      int: (name) => Number(params[name]),
      violation: (message) => this.violations.push(message),
    };
    return handler(ctx);
  }

  /** Records violations; returns a 422 message when the JSON body fails its schema. */
  private validate(
    op: OperationSpec,
    params: Record<string, string>,
    query: URLSearchParams,
    body: unknown,
    hasBody: boolean,
    rec: RecordedRequest,
  ): string | null {
    const where = `${op.operationId} ${rec.method} ${rec.path}`;
    for (const p of op.params) {
      if (p.in === "path") {
        const v = params[p.name];
        if (v === undefined || v === "") this.violations.push(`${where}: missing path parameter ${p.name}`);
        else {
          const problem = checkScalar(v, p.schema);
          if (problem) {
            this.violations.push(`${where}: path parameter ${p.name} ${problem}`);
            // GitHub routes a non-numeric number nowhere
            throw notFound({ op });
          }
        }
      } else if (p.in === "query") {
        const v = query.get(p.name);
        if (v === null) {
          if (p.required) this.violations.push(`${where}: missing required query parameter ${p.name}`);
          continue;
        }
        const problem = checkScalar(v, p.schema);
        if (problem) this.violations.push(`${where}: query parameter ${p.name} ${problem}`);
      }
    }
    const knownQuery = new Set(op.params.filter((p) => p.in === "query").map((p) => p.name));
    for (const k of new Set(query.keys())) {
      // GitHub ignores unknown parameters silently, which hides typos in filters
      if (!knownQuery.has(k)) this.violations.push(`${where}: unknown query parameter ${k} (GitHub ignores it)`);
    }

    if (!op.body) {
      if (hasBody && rec.method !== "GET" && !(body && typeof body === "object" && !Object.keys(body).length)) {
        this.violations.push(`${where}: sends a body but the operation takes none`);
      }
      return null;
    }
    if (!hasBody || body === undefined) {
      if (op.body.required) {
        this.violations.push(`${where}: request body is required`);
        return "Request body is required";
      }
      return null;
    }
    const validator = this.openapi.bodyValidator(op);
    if (validator && !validator(body)) {
      const msg = formatAjvErrors(validator.errors);
      this.violations.push(`${where}: request body does not match the schema: ${msg} — body ${truncate(JSON.stringify(body))}`);
      return msg;
    }
    const known = this.openapi.knownBodyKeys(op);
    if (known && body && typeof body === "object" && !Array.isArray(body)) {
      const unknown = Object.keys(body).filter((k) => !known.has(k));
      if (unknown.length) {
        this.violations.push(`${where}: unknown body field(s) ${unknown.join(", ")} (GitHub ignores them)`);
      }
    }
    return null;
  }

  private authenticate(op: OperationSpec, header: string | undefined, rec: RecordedRequest): AuthInfo {
    const docs = docsFor({ op });
    const a = parseAuthorization(header);
    if (!a) this.violations.push(`${rec.method} ${rec.path}: no authorization header`);
    if (JWT_PATHS.test(op.path)) {
      if (!a) throw new HttpError(401, errorBody(401, "Requires authentication", docs));
      const problem =
        a.scheme === "bearer" ? checkAppJwt(a.credentials, this.publicKey, this.state.app.id, Math.floor(Date.now() / 1000)) : JWT_ERRORS.decode;
      if (problem) throw new HttpError(401, errorBody(401, problem, docs));
      return { kind: "app" };
    }
    if (!a) throw new HttpError(401, errorBody(401, "Requires authentication", docs));
    if (a.scheme !== "token" && a.scheme !== "bearer") throw new HttpError(401, errorBody(401, "Bad credentials", docs));
    const token = this.state.tokens.get(a.credentials);
    if (!token) {
      if (a.credentials.split(".").length === 3) {
        this.violations.push(`${rec.method} ${rec.path}: called with the App's JWT; this endpoint needs an installation token`);
      }
      throw new HttpError(401, errorBody(401, "Bad credentials", docs));
    }
    if (token.expiresAt.getTime() <= this.state.now().getTime()) {
      throw new HttpError(401, errorBody(401, "Bad credentials", docs));
    }
    return { kind: "installation", installationId: token.installationId, token: token.token, repositories: token.repositories };
  }

  private checkPermission(op: OperationSpec, installationId: number): void {
    const need = requiredPermission(op);
    if (!need) return;
    const granted = this.state.installations.get(installationId)?.permissions[need[0]];
    if (!granted || (need[1] === "write" && granted !== "write" && granted !== "admin")) {
      throw new HttpError(403, errorBody(403, "Resource not accessible by integration", docsFor({ op })));
    }
  }

  private async graphqlRequest(req: IncomingMessage, method: string, body: unknown, rec: RecordedRequest): Promise<Reply> {
    rec.path = "/graphql";
    if (method !== "POST") {
      this.violations.push(`unexpected route ${method} /api/graphql (GraphQL takes POST)`);
      return { status: 404, body: errorBody(404, "Not Found", DEFAULT_DOCS) };
    }
    const payload = (body ?? {}) as { query?: unknown; variables?: Record<string, unknown>; operationName?: string };
    const nameFromText = typeof payload.query === "string" ? /\b(?:query|mutation)\s+(\w+)/.exec(payload.query)?.[1] : undefined;
    const opName = payload.operationName ?? nameFromText ?? null;
    rec.graphql = { operationName: opName, variables: payload.variables ?? {} };
    rec.operationId = `graphql:${opName ?? "(anonymous)"}`;
    return this.withInjection(this.takeInjection(method, "/graphql", null, opName), rec, () => this.graphqlAnswer(req, body));
  }

  private async graphqlAnswer(req: IncomingMessage, body: unknown): Promise<Reply> {
    const a = parseAuthorization(req.headers.authorization);
    const token = a && (a.scheme === "token" || a.scheme === "bearer") ? this.state.tokens.get(a.credentials) : undefined;
    if (!token || token.expiresAt.getTime() <= this.state.now().getTime()) {
      return {
        status: 401,
        body: {
          message: a ? "Bad credentials" : "This endpoint requires you to be authenticated.",
          documentation_url: "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql",
        },
      };
    }
    const outcome = await this.graphql.handle(body, {
      state: this.state,
      json: this.json,
      installationId: token.installationId,
    });
    this.violations.push(...outcome.violations);
    return { status: 200, body: outcome.body };
  }

  /**
   * Without an injection, runs the real handling. With one, answers with it
   * instead — after running the real handling first when it is `perform`
   * (an HttpError from the real handling is its answer, then replaced).
   */
  private async withInjection(
    injection: Injection | null,
    rec: RecordedRequest,
    run: () => Reply | Promise<Reply>,
  ): Promise<Reply> {
    if (!injection) return run();
    if (injection.perform) {
      let real: Reply;
      try {
        real = await run();
      } catch (e) {
        if (!(e instanceof HttpError)) throw e;
        real = { status: e.status, body: e.body, headers: e.headers };
      }
      rec.performedStatus = real.status;
    }
    return injection.answer(rec);
  }

  /** A chaos fault for this request, if chaos is on and the dice say so. */
  private takeChaos(method: string, op: OperationSpec, rec: RecordedRequest): Injection | null {
    const chaos = this.chaosConfig;
    const route = `${method} ${op.path}`;
    // unimplemented operations stay loud violations rather than random 502s
    if (!chaos || !WRITE_METHODS.has(method) || route === TOKEN_MINTING || !ROUTES[route]) return null;
    const stats = this.chaosCounters;
    stats.writes += 1;
    const roll = chaos.random();
    if (roll < chaos.failRate) {
      const perform = chaos.random() < chaos.performedShare;
      stats.failed502 += 1;
      if (perform) stats.performed502 += 1;
      return {
        perform,
        answer: (r) => {
          r.injected = true;
          return { status: 502, body: errorBody(502, STATUS_CODES[502] ?? "Bad Gateway", docsFor({ op })) };
        },
      };
    }
    if (roll < chaos.failRate + chaos.secondaryRateLimitRate) {
      stats.rateLimited += 1;
      return {
        perform: false,
        answer: (r) => {
          r.injected = true;
          return {
            status: 403,
            body: errorBody(
              403,
              "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. " +
                `If you reach out to GitHub Support for help, please include the request ID ${r.requestId ?? "FAKE:0"}.`,
              SECONDARY_RATE_LIMIT_DOCS,
            ),
            headers: { "retry-after": String(chaos.retryAfterSeconds) },
          };
        },
      };
    }
    return null;
  }

  private takeInjection(
    method: string,
    path: string,
    op: OperationSpec | null,
    graphqlName?: string | null,
  ): Injection | null {
    const idx = this.rules.findIndex((r) => {
      if (r.remaining <= 0) return false;
      if (r.method && r.method.toUpperCase() !== method) return false;
      if (r.path instanceof RegExp) return r.path.test(path);
      if (r.path === path) return true;
      if (op && (r.path === op.path || r.path === op.operationId || r.path === `${method} ${op.path}`)) return true;
      if (graphqlName !== undefined && (r.path === "graphql" || r.path === `graphql:${graphqlName}`)) return true;
      return false;
    });
    if (idx < 0) return null;
    const rule = this.rules[idx]!;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.rules.splice(idx, 1);
    return {
      perform: rule.perform === true,
      answer: (rec) => {
        rec.injected = true;
        const body =
          rule.status === 204 || rule.status === 304
            ? undefined
            : (rule.body ?? errorBody(rule.status, STATUS_CODES[rule.status] ?? "Error", docsFor({ op })));
        return { status: rule.status, body, headers: rule.headers };
      },
    };
  }
}

function checkScalar(value: string, schema: Record<string, unknown>): string | null {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "integer" && !/^-?\d+$/.test(value)) return `must be an integer, got "${value}"`;
  if (type === "number" && Number.isNaN(Number(value))) return `must be a number, got "${value}"`;
  if (type === "boolean" && value !== "true" && value !== "false") return `must be true or false, got "${value}"`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    return `must be one of ${schema.enum.filter((x) => x !== null).join(", ")}, got "${value}"`;
  }
  return null;
}

function truncate(s: string, n = 300): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
