/**
 * The HTTP side: every request is recorded, checked against GitHub's REST
 * description, authenticated like GitHub does, then answered from state.
 * Anything the App does that GitHub would not accept — or that the fake does
 * not model — becomes a violation, so end-to-end tests fail loudly instead of
 * passing against a lenient mock.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { KeyObject } from "node:crypto";
import { Checks } from "./checks.js";
import { Faults } from "./faults.js";
import { GraphQLRegistry } from "./graphql/index.js";
import {
  DEFAULT_DOCS,
  docsFor,
  errorBody,
  HttpError,
  notFound,
  type Handler,
  type RecordedRequest,
  type Reply,
  type RouteContext,
  type RouteTable,
} from "./http.js";
import { Serializer, type Urls } from "./json.js";
import type { OpenApiIndex, OperationSpec } from "./openapi.js";
import { actionRoutes } from "./routes/actions.js";
import { appRoutes } from "./routes/apps.js";
import { checkRoutes } from "./routes/checks.js";
import { dependencyRoutes } from "./routes/dependencies.js";
import { download } from "./routes/downloads.js";
import { gitService, matchGitRoute, serveGit, type GitRoute } from "./git/backend.js";
import { gitRoutes } from "./routes/git.js";
import { hookRoutes } from "./routes/hooks.js";
import { issueRoutes } from "./routes/issues.js";
import { metaRoutes } from "./routes/meta.js";
import { pullRoutes } from "./routes/pulls.js";
import { repoRoutes } from "./routes/repos.js";
import type { ChaosOptions, ChaosStats, InjectRule, OutageOptions } from "./faults.js";
import type { FakeState } from "./state.js";

export type { ChaosOptions, ChaosStats, InjectRule, OutageOptions } from "./faults.js";
export type { RecordedRequest } from "./http.js";

const ROUTES: RouteTable = {
  ...appRoutes,
  ...hookRoutes,
  ...issueRoutes,
  ...dependencyRoutes,
  ...pullRoutes,
  ...gitRoutes,
  ...checkRoutes,
  ...actionRoutes,
  ...repoRoutes,
  ...metaRoutes,
};

export interface FakeServerOptions {
  state: FakeState;
  /** The description of the host this fake plays: what it serves. */
  openapi: OpenApiIndex;
  /**
   * api.github.com's description, when the fake plays another host: a route
   * there and not on this host is one the host lacks (GitHub's 404, recorded
   * in `hostGaps`), not a mistake of the App's.
   */
  dotcom?: OpenApiIndex;
  publicKey: KeyObject;
  port?: number;
}

export class FakeServer {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  /** Requests for routes api.github.com has and the host this fake plays lacks, answered 404 as that host does. */
  readonly hostGaps: RecordedRequest[] = [];
  /** The routes this host serves: the fake's, less those its description lacks. */
  private readonly routes: RouteTable = {};
  readonly graphql = new GraphQLRegistry();
  readonly state: FakeState;
  json!: Serializer;
  urls!: Urls;
  private readonly openapi: OpenApiIndex;
  private readonly checks: Checks;
  private readonly faults = new Faults();
  private readonly server: Server;
  private requestSeq = 0;

  constructor(private readonly opts: FakeServerOptions) {
    this.state = opts.state;
    this.openapi = opts.openapi;
    this.checks = new Checks({
      state: opts.state,
      openapi: opts.openapi,
      publicKey: opts.publicKey,
      violations: this.violations,
    });
    for (const [key, handler] of Object.entries(ROUTES)) {
      const [method, path] = key.split(" ") as [string, string];
      if (this.openapi.byRoute(method, path)) this.routes[key] = handler;
      else if (!opts.dotcom)
        throw new Error(`fake GitHub: route ${key} is not an operation in GitHub's REST description`);
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

  /** see FakeGitHub.inject and Faults */
  inject(rule: InjectRule): void {
    this.faults.inject(rule);
  }

  /** see Faults.outage */
  outage(opts: OutageOptions | null): void {
    this.faults.outage(opts);
  }

  /** see ChaosOptions and Faults.chaos */
  chaos(opts: ChaosOptions | null): void {
    this.faults.chaos(opts);
  }

  /** counters of the latest chaos run (a copy) */
  chaosStats(): ChaosStats {
    return this.faults.chaosStats();
  }

  /**
   * Called for each REST request just before its handler runs, with the
   * operationId: lets a test change GitHub's state at an exact moment (a
   * check turning red between two reads of it).
   */
  beforeHandle: ((operationId: string, rec: RecordedRequest) => void) | null = null;

  /**
   * Runs after a request's answer is decided and before it is sent: GitHub's
   * own webhooks for what the request did go out from here (see
   * test/support/github-events.ts), so they are on their way before the
   * caller has its answer, as they often are on GitHub.
   */
  afterHandle: ((rec: RecordedRequest, reply: Reply) => Promise<void>) | null = null;

  private readonly holds = new Map<string, { gate: Promise<void>; reached: (rec: RecordedRequest) => void }>();

  /** see FakeGitHub.hold */
  hold(operationId: string): { reached: Promise<RecordedRequest>; release(): void } {
    let release!: () => void;
    let reached!: (rec: RecordedRequest) => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = new Promise<RecordedRequest>((r) => (reached = r));
    this.holds.set(operationId, { gate, reached });
    return {
      reached: first,
      release: () => {
        this.holds.delete(operationId);
        release();
      },
    };
  }

  // ---------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const gitRoute = matchGitRoute(new URL(req.url ?? "/", this.urls.web).pathname);
    if (gitRoute) return this.handleGit(req, res, gitRoute);
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
        this.violations.push(
          `fake GitHub crashed on ${method} ${rec.path}: ${e instanceof Error ? e.stack : String(e)}`,
        );
        reply = { status: 500, body: errorBody(500, "Server Error", DEFAULT_DOCS) };
      }
    }
    rec.status = reply.status;
    rec.response = reply.raw ? reply.raw.text : reply.body;
    if (this.afterHandle) {
      try {
        await this.afterHandle(rec, reply);
      } catch (e) {
        this.violations.push(`fake GitHub could not send the webhooks of ${method} ${rec.path}: ${String(e)}`);
      }
    }
    this.send(res, reply, rec.requestId!);
  }

  /**
   * Git over smart HTTP (git/backend.ts): the body is a pack, streamed to git
   * as it comes, so it is not read here. Recorded like any request (under
   * `git:git-upload-pack` / `git:git-receive-pack`); an outage or an
   * `inject` rule for its path answers instead of git.
   */
  private async handleGit(req: IncomingMessage, res: ServerResponse, route: GitRoute): Promise<void> {
    const url = new URL(req.url ?? "/", this.urls.web);
    const method = (req.method ?? "GET").toUpperCase();
    const rec: RecordedRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: undefined,
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : String(v ?? "")]),
      ),
      operationId: `git:${gitService(route, url.searchParams)}`,
      status: 0,
      at: Date.now(),
      requestId: `FAKE:${(++this.requestSeq).toString(16).toUpperCase()}`,
    };
    this.requests.push(rec);
    const injection = this.faults.take(method, rec.path, null);
    if (injection) {
      req.resume();
      const reply = await this.faults.run(injection, rec, () => ({ status: 500 }));
      rec.status = reply.status;
      rec.response = reply.body;
      this.send(res, reply, rec.requestId!);
      return;
    }
    const answer = await serveGit(this.state, route, url, req, res, (m) => this.violations.push(m));
    rec.status = answer.status;
    rec.response = answer.message;
  }

  private send(res: ServerResponse, reply: Reply, requestId: string): void {
    const headers: Record<string, string> = {
      // GitHub's own clock: a rate limit's reset is measured against it.
      date: this.state.now().toUTCString(),
      "x-github-request-id": requestId,
      "x-github-api-version-selected": "2022-11-28",
      "x-github-media-type": "github.v3; format=json",
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4999",
      "x-ratelimit-reset": String(Math.floor(this.state.now().getTime() / 1000) + 3600),
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

  private async dispatch(
    req: IncomingMessage,
    url: URL,
    method: string,
    raw: string,
    rec: RecordedRequest,
  ): Promise<Reply> {
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

    const file = download(this.state, method, url, req.headers.range);
    if (file) return this.faults.run(this.faults.take(method, rec.path, null), rec, () => file);

    if (!url.pathname.startsWith("/api/v3/")) {
      return this.faults.run(this.faults.take(method, rec.path, null), rec, () => {
        this.violations.push(`unexpected route ${method} ${url.pathname} (REST lives under /api/v3 on this host)`);
        return { status: 404, body: errorBody(404, "Not Found", DEFAULT_DOCS) };
      });
    }

    const match = this.openapi.match(method, url.pathname.slice(7));
    const newer = this.opts.dotcom?.match(method, url.pathname.slice(7));
    if ((!match || "methods" in match) && newer && !("methods" in newer)) {
      // A route newer than this host: GitHub Enterprise Server answers it as any unknown path.
      rec.operationId = newer.op.operationId;
      rec.route = `${method} ${newer.op.path}`;
      this.hostGaps.push(rec);
      return this.faults.run(this.faults.take(method, rec.path, newer.op), rec, () => ({
        status: 404,
        body: errorBody(404, "Not Found", DEFAULT_DOCS),
      }));
    }
    if (!match || "methods" in match) {
      return this.faults.run(this.faults.take(method, rec.path, null), rec, () => {
        const hint = match
          ? ` (the path exists for ${match.methods.join(", ")})`
          : " (not in GitHub's REST description)";
        this.violations.push(`unexpected route ${method} ${rec.path}${hint}`);
        return { status: 404, body: errorBody(404, "Not Found", DEFAULT_DOCS) };
      });
    }
    const { op, params } = match;
    const route = `${method} ${op.path}`;
    rec.operationId = op.operationId;
    rec.route = route;

    const held = this.holds.get(op.operationId);
    if (held) {
      held.reached(rec);
      await held.gate;
    }
    const invalid = this.checks.validate(op, params, url.searchParams, body, raw.length > 0, rec);
    const injection =
      this.faults.take(method, rec.path, op) ?? this.faults.takeChaos(method, op, Boolean(this.routes[route]));
    return this.faults.run(injection, rec, () => this.runOperation(req, url, method, body, op, params, invalid, rec));
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
    const handler: Handler | undefined = this.routes[route];
    if (!handler) {
      this.violations.push(`unexpected route ${method} ${rec.path} (${op.operationId} is not implemented by the fake)`);
      return { status: 404, body: errorBody(404, "Not Found", docsFor({ op })) };
    }

    const auth = this.checks.authenticate(op, req.headers.authorization, rec);
    if (auth.kind === "installation") this.checks.checkPermission(op, auth.installationId, auth.token);
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

  private async graphqlRequest(
    req: IncomingMessage,
    method: string,
    body: unknown,
    rec: RecordedRequest,
  ): Promise<Reply> {
    rec.path = "/graphql";
    if (method !== "POST") {
      this.violations.push(`unexpected route ${method} /api/graphql (GraphQL takes POST)`);
      return { status: 404, body: errorBody(404, "Not Found", DEFAULT_DOCS) };
    }
    const payload = (body ?? {}) as { query?: unknown; variables?: Record<string, unknown>; operationName?: string };
    const nameFromText =
      typeof payload.query === "string" ? /\b(?:query|mutation)\s+(\w+)/.exec(payload.query)?.[1] : undefined;
    const opName = payload.operationName ?? nameFromText ?? null;
    rec.graphql = { operationName: opName, variables: payload.variables ?? {} };
    rec.operationId = `graphql:${opName ?? "(anonymous)"}`;
    return this.faults.run(this.faults.take(method, "/graphql", null, opName), rec, () =>
      this.graphqlAnswer(req, body),
    );
  }

  private async graphqlAnswer(req: IncomingMessage, body: unknown): Promise<Reply> {
    const installationId = this.checks.graphqlInstallation(req.headers.authorization);
    if (typeof installationId !== "number") return installationId;
    const outcome = await this.graphql.handle(body, { state: this.state, json: this.json, installationId });
    this.violations.push(...outcome.violations);
    return { status: 200, body: outcome.body };
  }
}
