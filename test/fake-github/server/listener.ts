/**
 * The HTTP listener: the socket on 127.0.0.1, each request recorded and
 * answered (git over smart HTTP handed to git), and the answer sent with the
 * headers GitHub sends.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gitService, matchGitRoute, serveGit, type GitRoute } from "../git/backend.js";
import { DEFAULT_DOCS, errorBody, HttpError, type RecordedRequest, type Reply } from "../http.js";
import { Serializer } from "../json.js";
import type { FakeServerOptions } from "./core.js";
import { RestEndpoint } from "./rest.js";

export class HttpListener extends RestEndpoint {
  private readonly server: Server;
  private requestSeq = 0;

  constructor(opts: FakeServerOptions) {
    super(opts);
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
}
