/**
 * Rows of runs and leases: a claim (by a worker or a dispatched workflow)
 * starts run N+1 under a new lease epoch; heartbeats renew it; an exit, an
 * expired lease or a revoked worker ends it. A run that ends without a PR
 * keeps the task `claimed` (the interlock holds) until its class is recorded.
 */
import { createHash } from "node:crypto";
import { texts } from "../../texts/comments.js";
import type { Context, RunPatch, TaskPatch, TaskView } from "../decision.js";
import type { EventOf, Usage } from "../events.js";
import { dispatchBackoffMs } from "../model.js";
import { effect, everyState, ignore, move, NO_LEASE, refused, taskOf, unchanged, type EventRows } from "./build.js";

/** A run that ended keeps the task claimed (run id kept) while its class is owed. */
export const ENDED_LEASE = { leaseEpoch: null, leaseExpiresAt: null, workerId: null } as const;

/**
 * A lease runs for the repository's `limits.leaseSeconds` from now (a
 * dispatched workflow's for `dispatch.leaseSeconds`: it renews only at job
 * boundaries).
 */
export function leaseUntil(ctx: Context, mode: string): Date {
  const seconds =
    mode === "dispatch" && ctx.config?.dispatch
      ? ctx.config.dispatch.leaseSeconds
      : (ctx.config?.limits.leaseSeconds ?? 300);
  return new Date(ctx.now.getTime() + seconds * 1000);
}

/** Usage is each run's running total: the latest report wins, and the task gains the difference. */
export function usageChange(
  run: { inputTokens: number; outputTokens: number; costUsd: number },
  usage: Usage | undefined,
): { run: RunPatch; task: TaskPatch } {
  if (!usage) return { run: {}, task: {} };
  const next = {
    inputTokens: Math.max(run.inputTokens, usage.inputTokens),
    outputTokens: Math.max(run.outputTokens, usage.outputTokens),
    costUsd: Math.max(run.costUsd, usage.costUsd),
  };
  return {
    run: next,
    task: {
      usage: {
        inputTokens: next.inputTokens - run.inputTokens,
        outputTokens: next.outputTokens - run.outputTokens,
        costUsd: next.costUsd - run.costUsd,
      },
    },
  };
}

const notQueued = (_ctx: Context, e: EventOf<"claim">) =>
  refused("not-queued", `not claimable: the task is not queued (${e.mode} claim)`);

export const claim: EventRows<"claim"> = {
  ...everyState<"claim">(() => refused("not-queued", "no such task"), notQueued),
  queued: (ctx, e) => {
    const task = taskOf(ctx);
    const config = ctx.config;
    if (!config)
      return refused(
        "config-invalid",
        "the repository's .github/orchestra.yml is invalid; nothing is claimed there until it is fixed",
      );
    if (e.mode === "worker" && config.dispatch)
      return refused("dispatch-mode", "the repository runs agents through workflow dispatch");
    if (e.mode === "dispatch" && !config.dispatch) return refused("illegal", "the repository is not in dispatch mode");
    if (task.backoffUntil && task.backoffUntil > ctx.now)
      return refused("backing-off", `backing off until ${task.backoffUntil.toISOString()}`);
    const attempt = task.attempt + 1;
    if (config.paused) return refused("paused", "the repository is paused (paused: true in .github/orchestra.yml)");
    if (task.blockedBy && task.blockedBy.length > 0)
      return refused("blocked", `blocked by ${task.blockedBy.join(", ")}`);
    if (task.blockersAt === null) return refused("blocked", "its blockers have not been read from GitHub yet");
    const leaseExpiresAt = leaseUntil(ctx, e.mode);
    const effects =
      e.mode === "dispatch" && config.dispatch
        ? [
            effect(
              "dispatch",
              `dispatch:${e.runId}`,
              {
                workflow: config.dispatch.workflow,
                ref: config.dispatch.ref,
                inputs: {
                  task: task.id,
                  run: e.runId,
                  attempt: String(attempt),
                  lease_epoch: e.leaseEpoch,
                  branch: task.branch,
                  continuation: task.continuation ? JSON.stringify(task.continuation) : "",
                },
              },
              e.runId,
            ),
          ]
        : [];
    return move(ctx, "claimed", {
      summary:
        `claimed by ${e.mode === "dispatch" ? "a dispatched workflow" : `worker ${e.workerId}`}: ` +
        `attempt ${attempt}`,
      task: { attempt, runId: e.runId, leaseEpoch: e.leaseEpoch, leaseExpiresAt, workerId: e.workerId },
      newRun: {
        id: e.runId,
        attempt,
        workerId: e.workerId,
        mode: e.mode,
        leaseEpoch: e.leaseEpoch,
        leaseExpiresAt,
        branch: task.branch,
        continuation: task.continuation,
        // A dispatched workflow has the job's own GITHUB_TOKEN: only a worker is handed tokens.
        ...(e.mode === "worker" && config.credentials === "broker" ? { credentials: "broker" as const } : {}),
      },
      effects,
    });
  },
};

/** The dispatched run this event is about, while it is still the task's live run. */
function dispatchedRun(ctx: Context, runId: string) {
  const task = ctx.task;
  const run = ctx.run;
  if (!task || task.state !== "claimed" || task.runId !== runId || !run || run.id !== runId || run.state !== "live")
    return null;
  return { task, run };
}

export const dispatched: EventRows<"dispatched"> = everyState(ignore("not a task"), ignore("the run already ended"), {
  claimed: (ctx, e) => {
    const found = dispatchedRun(ctx, e.runId);
    if (!found) return unchanged("the run already ended");
    if (found.run.workflowRunId !== null && e.workflowRunId !== null && found.run.workflowRunId !== e.workflowRunId) {
      return unchanged(`already linked to Actions run ${found.run.workflowRunId}`);
    }
    if (
      found.run.workflowRunId !== null &&
      found.run.workflowRunId === e.workflowRunId &&
      found.task.backoffCount === 0 &&
      found.task.diagnostic === null
    )
      return unchanged("already linked");
    return move(ctx, "claimed", {
      summary: `workflow dispatched${e.workflowRunId ? ` as Actions run ${e.workflowRunId}` : ""}`,
      task: { backoffCount: 0, backoffUntil: null, diagnostic: null },
      run: { id: e.runId, from: ["live"], patch: e.workflowRunId ? { workflowRunId: BigInt(e.workflowRunId) } : {} },
    });
  },
});

/**
 * GitHub refused to start the workflow: the run never started, so the task
 * goes back unassigned with no attempt charged, one diagnostic per distinct
 * error, and a growing backoff (never a retry storm).
 */
export const dispatchRefused: EventRows<"dispatch-refused"> = everyState(
  ignore("not a task"),
  ignore("the run already ended"),
  {
    claimed: (ctx, e) => {
      const found = dispatchedRun(ctx, e.runId);
      if (!found) return unchanged("the run already ended");
      const { task } = found;
      if (e.scope === "repository") return repositoryRefused(ctx, e, task);
      const count = task.backoffCount + 1;
      const until = new Date(ctx.now.getTime() + dispatchBackoffMs(count));
      const dispatch = ctx.config?.dispatch;
      const digest = createHash("sha256")
        .update(e.why.replace(/\d{3,}/g, "#"))
        .digest("hex")
        .slice(0, 12);
      return move(ctx, "queued", {
        summary: `dispatch refused; backing off until ${until.toISOString()}, no attempt counted`,
        task: { ...NO_LEASE, attempt: task.attempt - 1, backoffCount: count, backoffUntil: until, diagnostic: e.why },
        fence: { runId: e.runId },
        run: abortedRun(ctx, e),
        effects: [
          effect("comment", `dispatch-refused:${task.id}:${digest}`, {
            issue: task.issue,
            body: texts.dispatchRefused(e.why, dispatch?.workflow ?? "(workflow)", dispatch?.ref ?? "(ref)"),
          }),
        ],
      });
    },
  },
);

/** The run a refused dispatch ends: it never started. */
const abortedRun = (ctx: Context, e: EventOf<"dispatch-refused">) => ({
  id: e.runId,
  from: ["live" as const],
  patch: {
    state: "aborted" as const,
    endedAt: ctx.now,
    endReason: "run never started",
    error: { class: "preparation", message: e.why },
  },
});

/**
 * GitHub refuses every dispatch in the repository: its breaker (opened by the
 * raiser in the same transaction) holds all of its queued tasks, so this one
 * goes back with no attempt counted, no backoff of its own and no comment —
 * unless this refusal opened the breaker, which says so once, here.
 */
function repositoryRefused(ctx: Context, e: EventOf<"dispatch-refused">, task: TaskView) {
  const dispatch = ctx.config?.dispatch;
  const opened = e.breaker?.opened ? e.breaker.until : null;
  return move(ctx, "queued", {
    summary:
      `dispatch refused for the whole repository${opened ? `: breaker open until ${opened.toISOString()}` : ""}; ` +
      "no attempt counted",
    task: { ...NO_LEASE, attempt: task.attempt - 1, diagnostic: e.why },
    fence: { runId: e.runId },
    run: abortedRun(ctx, e),
    effects: opened
      ? [
          effect("comment", `dispatch-breaker:${ctx.subject.repo}:${opened.toISOString()}`, {
            issue: task.issue,
            body: texts.dispatchBreaker(
              ctx.subject.repo,
              e.why,
              dispatch?.workflow ?? "(workflow)",
              dispatch?.ref ?? "(ref)",
              opened,
            ),
          }),
        ]
      : [],
  });
}

export const sweepFailed: EventRows<"sweep-failed"> = everyState(
  ignore("not a task"),
  ignore("only queued tasks are swept this way"),
  {
    queued: (ctx, e) =>
      move(ctx, "queued", {
        summary: `sweep failed on this task; not before ${e.retryAt.toISOString()}`,
        task: { backoffUntil: e.retryAt, diagnostic: e.why },
      }),
  },
);
