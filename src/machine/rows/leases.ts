/**
 * Rows of a live lease: heartbeats renew it while they show progress; a lease
 * whose heartbeats stand still stops renewing (stalled); one that runs out
 * without an exit expires; a revoked worker loses it. A lease that ended
 * without an exit keeps the task claimed (the interlock holds) and waits
 * `limits.graceSeconds` for a late exit before its run is classified.
 */
import type { Context, Refused, RunView, TaskView } from "../decision.js";
import {
  checkLease,
  everyState,
  ignore,
  isRefusal,
  move,
  NO_LEASE,
  refused,
  underLease,
  unchanged,
  type EventRows,
} from "./build.js";
import { ENDED_LEASE, leaseUntil, usageChange } from "./runs.js";

/** When a run that ended without an exit may be classified: after the grace for a late exit. */
export function afterGrace(ctx: Context): Date {
  return new Date(ctx.now.getTime() + (ctx.config?.limits.graceSeconds ?? 120) * 1000);
}

/** The stall limit in milliseconds. */
const stallMs = (ctx: Context) => (ctx.config?.limits.stallSeconds ?? 1800) * 1000;

/**
 * The run's caps, checked at every heartbeat: its wall-clock time (limits.maxRunSeconds) and the task's model
 * spend with this heartbeat's usage (limits.maxCostUsd). Past either the lease is not renewed: it ends at its
 * expiry, which leaves the worker its time to push its work as a handoff and report the exit.
 */
function overLimit(ctx: Context, lease: { task: TaskView; run: RunView }, addedCostUsd: number): Refused | null {
  const { task, run } = lease;
  const limits = ctx.config?.limits;
  const until = task.leaseExpiresAt ? ` it ends at ${task.leaseExpiresAt.toISOString()}` : " it ends";
  const maxRun = limits?.maxRunSeconds ?? null;
  const ranMs = ctx.now.getTime() - run.startedAt.getTime();
  if (maxRun !== null && run.mode !== "dispatch" && ranMs >= maxRun * 1000)
    return refused(
      "over-time",
      `over time: the run started ${Math.floor(ranMs / 1000)} s ago and limits.maxRunSeconds is ${maxRun}; ` +
        `the lease is not renewed:${until}. Push the work as a handoff and report the exit`,
    );
  const budget = limits?.maxCostUsd ?? null;
  const spent = task.costUsd + addedCostUsd;
  if (budget !== null && spent >= budget)
    return refused(
      "over-budget",
      `over budget: the task's model spend is $${spent.toFixed(2)} of limits.maxCostUsd $${budget.toFixed(2)}; ` +
        `the lease is not renewed:${until}. Push the work as a handoff and report the exit`,
    );
  return null;
}

/**
 * A heartbeat renews the lease. Its progress (a digest of head sha,
 * worktree and step) counts only when it changed; a worker whose heartbeats
 * show no change for `limits.stallSeconds` is refused with `stalled`, and
 * whoever raised the heartbeat then ends the run (lease-stalled). Dispatched
 * workflows renew only at job boundaries and are not judged this way.
 */
export const heartbeat: EventRows<"heartbeat"> = underLease<"heartbeat">((ctx, e, lease) => {
  const { run } = lease;
  const changed = e.progress !== undefined && e.progress !== run.progress;
  const since = run.progressAt ?? run.startedAt;
  if (!changed && run.mode !== "dispatch" && ctx.now.getTime() - since.getTime() >= stallMs(ctx)) {
    return refused(
      "stalled",
      `stalled: no progress reported since ${since.toISOString()} (limits.stallSeconds ${stallMs(ctx) / 1000})`,
    );
  }
  const usage = usageChange(run, e.usage);
  const renew = e.renew !== false;
  const over = renew ? overLimit(ctx, lease, usage.task.usage?.costUsd ?? 0) : null;
  if (over) return over;
  const renewal = renew ? { leaseExpiresAt: leaseUntil(ctx, run.mode) } : {};
  return move(ctx, "claimed", {
    summary: `${renew ? "lease renewed" : "past a cap: reported, not renewed"}${changed ? ", progress reported" : ""}`,
    task: { ...renewal, ...usage.task },
    fence: { runId: e.runId, leaseEpoch: e.leaseEpoch },
    run: {
      id: e.runId,
      from: ["live"],
      patch: { ...renewal, ...usage.run, ...(changed ? { progress: e.progress!, progressAt: ctx.now } : {}) },
    },
  });
});

/** The lease of a run whose progress stood still stops here; the run is classified like an expired lease. */
export const leaseStalled: EventRows<"lease-stalled"> = everyState(ignore("not a task"), ignore("no live lease"), {
  claimed: (ctx, e) => {
    const lease = checkLease(ctx, e.runId, e.leaseEpoch);
    if (isRefusal(lease)) return unchanged(`nothing to stop: ${lease.message}`);
    const since = lease.run.progressAt ?? lease.run.startedAt;
    if (ctx.now.getTime() - since.getTime() < stallMs(ctx)) return unchanged("progress was reported meanwhile");
    return move(ctx, "claimed", {
      summary: `stalled: no progress since ${since.toISOString()}; the run is owed a class`,
      task: { ...ENDED_LEASE },
      fence: { runId: e.runId, leaseEpoch: e.leaseEpoch },
      run: {
        id: e.runId,
        from: ["live"],
        patch: {
          state: "expired",
          stalled: true,
          endedAt: ctx.now,
          endReason: `stalled: no progress since ${since.toISOString()}`,
          classifyAfter: afterGrace(ctx),
        },
      },
    });
  },
});

export const leaseExpired: EventRows<"lease-expired"> = everyState(ignore("not a task"), ignore("no live lease"), {
  claimed: (ctx, e) => {
    const lease = checkLease(ctx, e.runId, e.leaseEpoch);
    if (isRefusal(lease)) return unchanged(`nothing to expire: ${lease.message}`);
    if (!lease.task.leaseExpiresAt || lease.task.leaseExpiresAt > ctx.now)
      return unchanged("the lease was renewed meanwhile");
    return move(ctx, "claimed", {
      summary:
        "lease expired without an exit; a late exit is accepted until the run is classified or a successor claims",
      task: { ...ENDED_LEASE },
      fence: { runId: e.runId, leaseEpoch: e.leaseEpoch },
      run: {
        id: e.runId,
        from: ["live"],
        patch: {
          state: "expired",
          endedAt: ctx.now,
          endReason: "lease expired without an exit",
          classifyAfter: afterGrace(ctx),
        },
      },
    });
  },
});

export const workerRevoked: EventRows<"worker-revoked"> = everyState(ignore("not a task"), ignore("no live lease"), {
  claimed: (ctx, e) => {
    const lease = checkLease(ctx, e.runId, null);
    if (isRefusal(lease)) return unchanged(`nothing to revoke: ${lease.message}`);
    return move(ctx, "claimed", {
      summary: `worker ${e.workerName} revoked: its lease is released and the run is owed a class`,
      task: { ...ENDED_LEASE },
      fence: { runId: e.runId },
      run: {
        id: e.runId,
        from: ["live"],
        patch: {
          state: "revoked",
          endedAt: ctx.now,
          endReason: `worker ${e.workerName} was revoked`,
          classifyAfter: null,
        },
      },
    });
  },
});

/**
 * The worker gives the run back before its agent started: the task is
 * queued again at once, in its place, with no attempt used and no class (a
 * preflight failure says nothing about the task). The run ends `released`
 * with the reason; the workers room counts releases per worker.
 */
export const runReleased: EventRows<"run-released"> = underLease<"run-released">((ctx, e, { task }) =>
  move(ctx, "queued", {
    summary: `run released before its agent started (${e.reason}): queued again, no attempt used`,
    task: { ...NO_LEASE, attempt: Math.max(0, task.attempt - 1) },
    fence: { runId: e.runId, leaseEpoch: e.leaseEpoch },
    run: {
      id: e.runId,
      from: ["live"],
      patch: {
        state: "released",
        endedAt: ctx.now,
        endReason: `released before its agent started: ${e.reason}`,
        classifyAfter: null,
      },
    },
  }),
);
