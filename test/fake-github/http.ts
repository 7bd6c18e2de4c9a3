/** Route plumbing shared by every route module: context, replies, the request record, GitHub-style errors. */
import type { IncomingHttpHeaders } from "node:http";
import type { Serializer } from "./json.js";
import type { OperationSpec } from "./openapi.js";
import type { FakeState, Repo } from "./state.js";

export interface Reply {
  status: number;
  /** JSON-encoded unless `raw` is set; omitted for 204 */
  body?: unknown;
  /** a body as is: text, or bytes (a download's range may cut a character) */
  raw?: { contentType: string; text: string | Buffer };
  headers?: Record<string, string>;
}

/** One request as the fake saw and answered it (`FakeGitHub.requests`). */
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

export type AuthInfo =
  | { kind: "app" }
  | { kind: "installation"; installationId: number; token: string; repositories: string[] | null }
  | { kind: "none" };

export interface RouteContext {
  state: FakeState;
  json: Serializer;
  op: OperationSpec;
  params: Record<string, string>;
  query: URLSearchParams;
  body: any;
  headers: IncomingHttpHeaders;
  auth: AuthInfo;
  /** the request URL as the client addressed it (for Link headers) */
  url: URL;
  /** the acting identity: the App's bot for installation tokens */
  actor: string;
  /** owner/repo from the path, or 404 as GitHub answers for repos the token cannot see */
  repo(): Repo;
  /** an integer path parameter (validated against the description already) */
  int(name: string): number;
  /** record a misuse GitHub would not reject but that is almost surely a bug */
  violation(message: string): void;
}

export type Handler = (ctx: RouteContext) => Reply | Promise<Reply>;

/** "METHOD /template" → handler; templates are the description's own paths. */
export type RouteTable = Record<string, Handler>;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

export const DEFAULT_DOCS = "https://docs.github.com/rest";

export function docsFor(ctx: { op?: OperationSpec | null }): string {
  return ctx.op?.docs ?? DEFAULT_DOCS;
}

export function errorBody(status: number, message: string, docs: string, extra: Record<string, unknown> = {}): unknown {
  // GitHub has added a string "status" to error bodies
  return { message, ...extra, documentation_url: docs, status: String(status) };
}

export function notFound(ctx: { op?: OperationSpec | null }, message = "Not Found"): HttpError {
  return new HttpError(404, errorBody(404, message, docsFor(ctx)));
}

export interface ValidationErrorItem {
  resource: string;
  code: "missing" | "missing_field" | "invalid" | "already_exists" | "unprocessable" | "custom";
  field?: string;
  message?: string;
  value?: unknown;
}

export function validationFailed(
  ctx: { op?: OperationSpec | null },
  errors: ValidationErrorItem[],
  message = "Validation Failed",
): HttpError {
  return new HttpError(422, errorBody(422, message, docsFor(ctx), { errors }));
}

/** A 4xx with only a message, as many GitHub endpoints answer. */
export function fail(ctx: { op?: OperationSpec | null }, status: number, message: string): HttpError {
  return new HttpError(status, errorBody(status, message, docsFor(ctx)));
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const noContent = (): Reply => ({ status: 204 });

/**
 * Page a list the way GitHub does (`per_page` default 30, max 100) and add a
 * `Link` header, which Octokit's paginate() follows.
 */
export function paginate(ctx: RouteContext, items: unknown[], wrap?: (page: unknown[]) => unknown): Reply {
  const perPage = Math.min(Math.max(Number(ctx.query.get("per_page") ?? 30) || 30, 1), 100);
  const page = Math.max(Number(ctx.query.get("page") ?? 1) || 1, 1);
  const last = Math.max(Math.ceil(items.length / perPage), 1);
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const link = (p: number, rel: string): string => {
    const u = new URL(ctx.url);
    u.searchParams.set("per_page", String(perPage));
    u.searchParams.set("page", String(p));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, "prev"), link(1, "first"));
  if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
  return {
    status: 200,
    body: wrap ? wrap(slice) : slice,
    headers: links.length ? { link: links.join(", ") } : {},
  };
}

export function sortBy<T>(
  items: T[],
  key: (t: T) => number,
  direction: string | null,
  defaultDir: "asc" | "desc",
): T[] {
  const dir = (direction ?? defaultDir) === "asc" ? 1 : -1;
  return [...items].sort((a, b) => (key(a) - key(b)) * dir);
}
