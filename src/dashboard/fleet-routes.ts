/** The fleet overview, and replaying the parked rows it lists: a parked row goes back to its queue. */
import { HttpError, type Router } from "../http/router.js";
import { overviewPage } from "./overview.js";
import { fleetOverview } from "../views/fleet.js";
import { callSeries, runsByClass } from "../views/activity.js";
import { githubStanding } from "../metrics/standing.js";
import { backTo } from "./respond.js";
import type { Guards } from "./guard.js";
import type { DashboardDeps } from "./deps.js";

const HOURS = 24;

export function fleetRoutes(router: Router, deps: DashboardDeps, { page, action }: Guards): void {
  router.add(
    "GET",
    "/dashboard",
    page(async (_r, ctx) => {
      const [fleet, runs, github, deliveries, effects, failing] = await Promise.all([
        fleetOverview(deps),
        runsByClass(deps.views, ctx.now, HOURS),
        githubStanding(deps),
        deps.inbox.tally().then((t) => t.summary),
        deps.outbox.counts(),
        deps.streaks.current(),
      ]);
      return overviewPage(ctx, {
        fleet,
        runs,
        calls: callSeries(github.callsPerHour),
        health: { deliveries, effects, github, failing, host: deps.host() },
      });
    }),
  );

  // Replays: a parked row goes back to its queue, as the API's replay does.
  const replays = [
    {
      path: "deliveries",
      what: "Delivery",
      replay: (id: string) => deps.inbox.replay(id, deps.clock.now()),
      poke: deps.pokeInbox,
    },
    {
      path: "effects",
      what: "Effect",
      replay: (id: string) => deps.outbox.replay(id, deps.clock.now()),
      poke: deps.pokeEffects,
    },
  ];
  for (const { path, what, replay, poke } of replays) {
    router.add(
      "POST",
      `/dashboard/${path}/:id/replay`,
      action(async (r) => {
        const id = r.params["id"]!;
        if (!(await replay(id)))
          throw new HttpError(
            409,
            `${what} ${id} is not parked (or does not exist); only parked ${path} can be replayed.`,
          );
        poke();
        return { to: backTo(r.req), notice: `${what} ${id} is queued again.` };
      }),
    );
  }
}
