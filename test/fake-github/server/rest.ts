/**
 * A request's way to its answer: the body parsed, the headers GitHub insists
 * on, GraphQL and downloads passed on, the path matched against this host's
 * description (and api.github.com's), then the operation validated,
 * authenticated and handed to its route.
 */
import type { IncomingMessage } from "node:http";
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
} from "../http.js";
import type { OperationSpec } from "../openapi.js";
import { download } from "../routes/downloads.js";
import { GraphQLEndpoint } from "./graphql.js";

export class RestEndpoint extends GraphQLEndpoint {
  protected async dispatch(
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
}
