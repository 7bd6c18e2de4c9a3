/**
 * When a failed delivery or effect is tried again, and when it is given up.
 * One schedule for both: a webhook handler and an outbox write that fail
 * because GitHub is down must outlast the outage (hours), while a failure
 * that asking again will not fix (a 404, a 422, a bug) is parked after a few
 * quick attempts so that an operator sees it the same morning.
 */

/** What a failure means for a retry; `failureOf` (github/errors.ts) is the one classifier. */
export type FailureClass =
  /** GitHub answered 5xx. */
  | "github-5xx"
  /** No answer: timeout, connection refused or reset, DNS; also a database that could not be reached. */
  | "network"
  /** GitHub's primary (quota) or secondary (abuse) rate limit. */
  | "rate-limit"
  /** A 4xx other than a rate limit, a validation error, a programming error: retrying will not fix it. */
  | "deterministic"
  /**
   * GitHub answered a GraphQL query with errors (a field the host lacks, a
   * query it refuses): a defect or a version gap. Deterministic; the outbox
   * parks it at once.
   */
  | "graphql";

export interface Failure {
  class: FailureClass;
  /** How long GitHub said to wait (retry-after, x-ratelimit-reset); honoured when longer than the backoff. */
  retryAfterMs?: number;
}

export interface RetryPolicy {
  /** Attempts before a deterministic failure is parked. */
  maxAttempts: number;
  /** Backoff: base doubling per attempt, ±25% jitter, never above capMs. */
  baseMs: number;
  capMs: number;
  /** How long transient failures are retried, counted from the first failure, before parking (default 6 h). */
  windowMs: number;
}

const HOUR_MS = 3_600_000;
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseMs: 2_000, capMs: 10 * 60_000, windowMs: 6 * HOUR_MS };

export type RetryDecision =
  | { retryAt: Date; firstFailedAt: Date }
  /** `why` says which class of failure, how long and how often it was tried; the caller adds what to do. */
  | { park: true; why: string; firstFailedAt: Date };

export interface RetryInput {
  failure: Failure;
  /** Attempts made so far, the one that just failed included. */
  attempts: number;
  /** Start of the failure window: the first failure since the last success or replay (null: this one). */
  firstFailedAt: Date | null;
  now: Date;
  policy: RetryPolicy;
  random?: () => number;
}

const isTransient = (c: FailureClass): boolean => c !== "deterministic" && c !== "graphql";

/**
 * Delay after `attempts` failed attempts: base doubling, jitter of ±25% so
 * that deliveries which failed together (GitHub down) do not return as one
 * burst, and never above the cap, jitter included: during a long outage the
 * attempts stay at most capMs apart.
 */
export function backoffMs(
  attempts: number,
  policy: Pick<RetryPolicy, "baseMs" | "capMs">,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.min(policy.capMs, Math.round(exp * (0.75 + 0.5 * random())));
}

const DESCRIBED: Record<FailureClass, string> = {
  "github-5xx": "GitHub server errors (5xx)",
  network: "no answer (timeouts or network errors)",
  "rate-limit": "GitHub rate limits",
  deterministic:
    "a failure that retrying does not fix (a 4xx other than a rate limit, a validation or programming error)",
  graphql:
    "a GraphQL query GitHub refused (a field this host lacks, or a query it does not accept): " +
    "a defect or a version gap, which retrying does not fix",
};

/** "6 h 2 min", "14 min", "40 s": how long something was tried, for people. */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
}

/**
 * Retry at a time, or park with the reason. Transient failures retry until
 * `windowMs` has passed since the first failure (so an outage shorter than
 * the window is outlasted: the attempt that fails after the window parks);
 * deterministic ones park once `maxAttempts` attempts were made.
 */
export function retryDecision(input: RetryInput): RetryDecision {
  const { failure, attempts, now, policy } = input;
  const firstFailedAt = input.firstFailedAt && input.firstFailedAt <= now ? input.firstFailedAt : now;
  const tried = now.getTime() - firstFailedAt.getTime();
  const plural = attempts === 1 ? "attempt" : "attempts";
  if (!isTransient(failure.class)) {
    if (attempts >= policy.maxAttempts) {
      return {
        park: true,
        firstFailedAt,
        why: `${DESCRIBED[failure.class]}: ${attempts} ${plural} over ${durationText(tried)}`,
      };
    }
  } else if (tried >= policy.windowMs) {
    return {
      park: true,
      firstFailedAt,
      why:
        `${DESCRIBED[failure.class]} for ${durationText(tried)}: ${attempts} ${plural}, ` +
        `and the retry window is ${durationText(policy.windowMs)}`,
    };
  }
  let at = now.getTime() + backoffMs(attempts, policy, input.random);
  if (failure.retryAfterMs !== undefined) at = Math.max(at, now.getTime() + failure.retryAfterMs);
  return { retryAt: new Date(at), firstFailedAt };
}
