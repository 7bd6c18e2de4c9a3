/**
 * Operator view of the inbox: what was received, what failed and why, how
 * many are retrying (a GitHub outage shows here first) and how many were
 * parked, and a replay for parked deliveries once their cause is fixed.
 */
import type { Inbox } from "../inbox/store.js";
import { LISTED_STATES } from "../inbox/view.js";
import { HttpError, listQuery, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";

const STATES = new Set<string>(LISTED_STATES);

export function deliveryRoutes(
  router: Router,
  deps: { inbox: Inbox; adminToken: string; clock: { now(): Date }; poke(): void },
): void {
  router.add("GET", "/api/v1/deliveries", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const { state, limit } = listQuery(query, STATES);
    const [deliveries, { counts, summary }] = await Promise.all([
      deps.inbox.list({ state, limit }),
      deps.inbox.tally(),
    ]);
    sendJson(res, 200, { summary, counts, deliveries });
  });

  router.add("POST", "/api/v1/deliveries/:id/replay", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const id = params["id"]!;
    if (!(await deps.inbox.replay(id, deps.clock.now()))) {
      throw new HttpError(
        409,
        `delivery ${id} is not parked (or does not exist); only parked deliveries can be replayed`,
      );
    }
    deps.poke();
    sendJson(res, 200, { delivery: id, state: "pending" });
  });
}
