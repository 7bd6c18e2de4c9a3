/**
 * Operator view of the effects outbox: what Orchestra did, will do, would
 * have done (dry run), and what it gave up on (parked, with the error ring),
 * and a replay for parked effects once their cause is fixed.
 */
import { HttpError, listQuery, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import { EFFECT_STATES, type Outbox } from "../effects/outbox.js";
import type { ApiQueries } from "./queries.js";

const STATES = new Set<string>(EFFECT_STATES);

export function effectRoutes(
  router: Router,
  deps: {
    outbox: Outbox;
    queries: Pick<ApiQueries, "effectState">;
    adminToken: string;
    clock: { now(): Date };
    poke(): void;
  },
): void {
  router.add("GET", "/api/v1/effects", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const { state, limit } = listQuery(query, STATES);
    const taskId = query.get("task") ?? undefined;
    const [effects, counts] = await Promise.all([
      deps.outbox.list({ ...(state ? { state } : {}), ...(taskId ? { taskId } : {}), limit }),
      deps.outbox.counts(),
    ]);
    sendJson(res, 200, { counts, effects });
  });

  router.add("POST", "/api/v1/effects/:id/replay", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const id = params["id"]!;
    if (!(await deps.outbox.replay(id, deps.clock.now()))) {
      const found = await deps.queries.effectState(id);
      if (!found) throw new HttpError(404, `no effect ${id}; list them with orchestra effects --state parked`);
      throw new HttpError(409, `effect ${id} is ${found.state}, not parked; only parked effects can be replayed`);
    }
    deps.poke();
    sendJson(res, 200, { effect: id, state: "pending" });
  });
}
