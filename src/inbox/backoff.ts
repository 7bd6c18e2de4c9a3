/** Retry policy for a failing delivery: exponential, capped, with jitter. */
export interface RetryPolicy {
  /** Attempts before a delivery is parked. */
  maxAttempts: number;
  baseMs: number;
  capMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseMs: 2_000, capMs: 10 * 60_000 };

/**
 * Delay before attempt `attempts + 1`, or null when the delivery is to be
 * parked. Jitter spreads retries of many deliveries that failed together
 * (GitHub down) so they do not return as one burst.
 */
export function nextDelay(attempts: number, policy: RetryPolicy, random: () => number = Math.random): number | null {
  if (attempts >= policy.maxAttempts) return null;
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exp * (0.75 + 0.5 * random()));
}
