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

/** Maps an octokit failure to a GitHubError that says what the failure means for a retry. */
export function toGitHubError(operation: string, e: unknown): GitHubError {
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

/** The class an error ring records: `github-502`, `github-network` for GitHub's failures, else `other`. */
export function errorClass(e: unknown, other: string): string {
  return e instanceof GitHubError ? `github-${e.status ?? "network"}` : other;
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
 * or deterministic. A 403 counts as a rate limit only when GitHub says so
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
    if (e.status === undefined) return { class: "network" };
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
