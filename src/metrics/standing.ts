/**
 * How Orchestra stands with GitHub: the rate limit each installation had at
 * its last response seen by this replica, and the calls made per hour over
 * the last day by every replica (the stored tally).
 */
import type { CallHours } from "./call-hours.js";
import type { RateLimitSeen } from "./registry.js";

export interface GitHubStanding {
  rateLimits: Array<{ installation: number } & RateLimitSeen>;
  callsPerHour: Array<{ hour: Date; reads: number; writes: number }>;
}

export interface StandingDeps {
  rateLimits: () => ReadonlyMap<number, RateLimitSeen>;
  callHours: Pick<CallHours, "lastHours">;
}

export async function githubStanding(deps: StandingDeps): Promise<GitHubStanding> {
  return {
    rateLimits: [...deps.rateLimits()]
      .sort(([a], [b]) => a - b)
      .map(([installation, seen]) => ({ installation, ...seen })),
    callsPerHour: await deps.callHours.lastHours(24),
  };
}
