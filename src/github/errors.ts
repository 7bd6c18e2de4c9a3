/**
 * What an octokit failure means for whoever retries it: a rate limit and
 * until when, a token GitHub will not mint (the installation's trouble, not
 * the call's), or a request that may have taken effect although no answer
 * came. Absence is only ever GitHub's own 404.
 */
import { GitHubError } from "./port.js";
import type { Failure } from "../retry/schedule.js";

interface RequestErrorLike {
  status?: number;
  message?: string;
  request?: { url?: string };
  response?: { headers?: Record<string, string | undefined>; data?: { message?: string } };
}

/**
 * How long a rate limit asks to wait, from the moment GitHub answered:
 * `retry-after` (seconds) for secondary limits, `x-ratelimit-reset` (epoch
 * seconds) for an exhausted quota, else a minute. The reset is an instant on
 * GitHub's clock, so it is measured against the answer's own `Date` header
 * (also GitHub's clock), not this machine's: whoever waits turns the wait into
 * an instant on its own clock.
 */
export function rateLimitWaitMs(
  status: number | undefined,
  message: string,
  headers: Record<string, string | undefined>,
  received = Date.now(),
): number | undefined {
  if (status !== 403 && status !== 429) return undefined;
  const retryAfter = headers["retry-after"];
  const exhausted = headers["x-ratelimit-remaining"] === "0";
  if (retryAfter === undefined && !exhausted && !/rate limit/i.test(message)) return undefined;
  if (retryAfter !== undefined && /^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
  const reset = Number(headers["x-ratelimit-reset"]);
  if (exhausted && Number.isFinite(reset) && reset > 0) {
    const answered = Date.parse(headers["date"] ?? "");
    return Math.max(0, reset * 1000 - (Number.isFinite(answered) ? answered : received));
  }
  return 60_000;
}

interface GraphqlErrorLike {
  name?: unknown;
  errors?: unknown;
  headers?: Record<string, string | undefined>;
}

/** GitHub's words for a query it failed to run in time, rather than one it refused: worth asking again. */
const GRAPHQL_TRANSIENT =
  /something went wrong while executing your query|timed? ?out|couldn't respond to your request in time/i;

/**
 * A GraphQL answer with errors (octokit's GraphqlResponseError: HTTP 200,
 * `errors` in the body). A field the host lacks or a query GitHub refuses is
 * a defect or a version gap: the same query fails the same way every time, so
 * it is not retried as an outage but carries GitHub's messages to whoever
 * parks it. A RATE_LIMITED error is a rate limit; a query GitHub failed to
 * run in time may be asked again.
 */
function graphqlFailure(operation: string, err: GraphqlErrorLike): GitHubError | null {
  if (err.name !== "GraphqlResponseError" || !Array.isArray(err.errors)) return null;
  const errors = err.errors as Array<{ type?: unknown; message?: unknown } | null>;
  const messages = errors.map((x) => (typeof x?.message === "string" ? x.message : JSON.stringify(x)));
  const text = messages.join("; ") || "errors without a message";
  if (errors.some((x) => x?.type === "RATE_LIMITED")) {
    const wait = rateLimitWaitMs(429, "rate limit", err.headers ?? {}) ?? 60_000;
    return new GitHubError(operation, undefined, `rate limited: ${text}`, true, { retryAfterMs: wait });
  }
  if (GRAPHQL_TRANSIENT.test(text))
    return new GitHubError(operation, undefined, `GitHub could not run the query: ${text}`, true);
  return new GitHubError(operation, undefined, `GitHub rejected the GraphQL query: ${text}`, false, {
    graphqlErrors: messages,
  });
}

/** Maps an octokit failure to a GitHubError that says what the failure means for a retry. */
export function toGitHubError(operation: string, e: unknown): GitHubError {
  const graphql = graphqlFailure(operation, e ?? {});
  if (graphql) return graphql;
  const err = e as RequestErrorLike;
  const status = typeof err.status === "number" ? err.status : undefined;
  const message = err.response?.data?.message ?? err.message ?? String(e);
  const headers = err.response?.headers ?? {};
  const limited = rateLimitWaitMs(status, message, headers);
  // The token is minted lazily on the first request; its failure is the installation's, not the call's.
  // A suspended installation's tokens minted earlier are refused the same way, call by call.
  const minting =
    /\/app\/installations\/\d+\/access_tokens/.test(err.request?.url ?? "") && status !== undefined && status < 500;
  const tokenFailure = minting || (status === 403 && /installation has been suspended/i.test(message));
  const retryable = status === undefined || status >= 500 || limited !== undefined;
  return new GitHubError(minting ? "mint installation token" : operation, status, message, retryable, {
    ...(limited !== undefined ? { retryAfterMs: limited } : {}),
    tokenFailure,
    // No answer, or a server error: the request may have been acted on.
    mayHaveSent: !tokenFailure && (status === undefined || status >= 500),
  });
}

/** Runs one call; maps failures to GitHubError. */
export async function call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toGitHubError(operation, e);
  }
}

/** Like call, but GitHub's 404 answers null. Nothing else does. */
export async function maybe<T>(operation: string, fn: () => Promise<T>): Promise<T | null> {
  try {
    return await call(operation, fn);
  } catch (e) {
    if (e instanceof GitHubError && e.status === 404) return null;
    throw e;
  }
}

/** An error's message, for logs and error rings. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The class an error ring records: `github-502`, `github-network` (no
 * answer), `github-graphql` (a query GitHub refused), `github-answer` (an
 * answer Orchestra could not use) for GitHub's failures, else `other`.
 */
export function errorClass(e: unknown, other: string): string {
  if (!(e instanceof GitHubError)) return other;
  if (e.status !== undefined) return `github-${e.status}`;
  return e.graphqlErrors ? "github-graphql" : e.retryable ? "github-network" : "github-answer";
}

/**
 * Codes of failures where no answer came (Node's sockets, undici)
 * or the database was out of reach for a moment (Prisma, SQLite).
 */
const NO_ANSWER_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
  "SQLITE_BUSY",
  "P1001", // can't reach the database server
  "P1002", // the database server timed out
  "P1008", // operations timed out
  "P1017", // the server closed the connection
  "P2024", // timed out waiting for a pooled connection
  "P2034", // write conflict or deadlock: retry the transaction
]);

/**
 * The one classifier of failures for retries (deliveries and effects): GitHub
 * 5xx, no answer, rate limits (primary and secondary, with when they lift),
 * a GraphQL query GitHub refused, or deterministic. A 403 counts as a rate limit only when GitHub says so
 * (its headers or message); a 404 or 422 never does. Anything not known to be
 * transient is deterministic: a bug retried for six hours is six hours late
 * to be seen. Several handlers failing together (AggregateError) are as
 * transient as the most transient of them: the retry runs them all again.
 */
export function failureOf(e: unknown): Failure {
  if (e instanceof AggregateError && e.errors.length > 0) {
    const all = e.errors.map(failureOf);
    const limited = all.filter((f) => f.class === "rate-limit");
    if (limited.length > 0) {
      const longest = Math.max(...limited.map((f) => f.retryAfterMs ?? 0));
      return { class: "rate-limit", ...(longest > 0 ? { retryAfterMs: longest } : {}) };
    }
    return all.find((f) => f.class !== "deterministic") ?? { class: "deterministic" };
  }
  if (e instanceof GitHubError) {
    if (e.retryAfterMs !== undefined) return { class: "rate-limit", retryAfterMs: e.retryAfterMs };
    if (e.graphqlErrors) return { class: "graphql" };
    // No status: no answer came (retryable), or one came that cannot be used (a defect, asked again in vain).
    if (e.status === undefined) return e.retryable ? { class: "network" } : { class: "deterministic" };
    return e.status >= 500 ? { class: "github-5xx" } : { class: "deterministic" };
  }
  const err = e as { name?: unknown; code?: unknown; cause?: unknown } | null;
  if (
    err &&
    (err.name === "TimeoutError" || err.name === "AbortError" || err.name === "PrismaClientInitializationError")
  )
    return { class: "network" };
  if (err && typeof err.code === "string" && NO_ANSWER_CODES.has(err.code)) return { class: "network" };
  const cause = err?.cause as { code?: unknown } | undefined;
  if (cause && typeof cause.code === "string" && NO_ANSWER_CODES.has(cause.code)) return { class: "network" };
  return { class: "deterministic" };
}
