/**
 * When the sweep loop counts as stale: its last success (or, before the
 * first one, the service's start) is older than ten of its intervals, and at
 * least five minutes. A stale sweep does not stop the replica from serving
 * webhooks and the API, so `/ready` stays 200 and says "degraded".
 */
export const STALE_INTERVALS = 10;
export const STALE_MIN_MS = 5 * 60_000;

export interface StaleSweep {
  sweep: string;
  lastSuccessAt: string | null;
  thresholdMs: number;
}

export function staleThresholdMs(everyMs: number): number {
  return Math.max(STALE_INTERVALS * everyMs, STALE_MIN_MS);
}

export function staleSweep(
  sweep: string,
  lastSuccess: Date | undefined,
  startedAt: Date,
  everyMs: number,
  now: Date,
): StaleSweep | null {
  const since = lastSuccess ?? startedAt;
  const thresholdMs = staleThresholdMs(everyMs);
  return now.getTime() - since.getTime() > thresholdMs
    ? { sweep, lastSuccessAt: lastSuccess?.toISOString() ?? null, thresholdMs }
    : null;
}
