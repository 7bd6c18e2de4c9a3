/**
 * How Orchestra stands with GitHub (admin token): the rate limit each
 * installation had at its last response seen by this replica, and the calls
 * made per hour over the last day by every replica (the stored tally).
 */
import { requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import type { CallHours } from "../metrics/call-hours.js";
import type { RateLimitSeen } from "../metrics/registry.js";

export interface GitHubStanding {
  rateLimits: Array<{ installation: number } & RateLimitSeen>;
  callsPerHour: Array<{ hour: Date; reads: number; writes: number }>;
}

export async function githubStanding(deps: {
  rateLimits(): ReadonlyMap<number, RateLimitSeen>;
  callHours: Pick<CallHours, "lastHours">;
}): Promise<GitHubStanding> {
  return {
    rateLimits: [...deps.rateLimits()]
      .sort(([a], [b]) => a - b)
      .map(([installation, seen]) => ({ installation, ...seen })),
    callsPerHour: await deps.callHours.lastHours(24),
  };
}

export function githubRoutes(
  router: Router,
  deps: Parameters<typeof githubStanding>[0] & { adminToken: string },
): void {
  router.add("GET", "/api/v1/github", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    sendJson(res, 200, await githubStanding(deps));
  });
}
