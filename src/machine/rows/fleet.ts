/**
 * The fleet issue asked to catch up without a task change behind it: by the
 * periodic reconcile, or because the issue was deleted, transferred or
 * reopened. Raised for the repository (issue 0, never a task). Nothing
 * changes but the window's debounced fleet-issue effect, and only in a
 * repository that opted in.
 */
import { fleetEffect } from "../fleet.js";
import { everyState, unchanged, type EventRows, type Row } from "./build.js";

const refresh: Row<"fleet-refresh"> = (ctx, e) =>
  ctx.config?.fleetIssue
    ? unchanged(`fleet issue refreshed: ${e.why}`, [fleetEffect(ctx.subject.repo, ctx.now, ctx.fleetDebounceMs)])
    : unchanged("fleetIssue is off in this repository");

export const fleetRefresh: EventRows<"fleet-refresh"> = everyState(refresh, refresh);
