/**
 * Rows of work that cannot go on by itself: a run's recovery that can never
 * finish (its facts cannot be gathered, its pull request cannot be opened)
 * escalates instead of holding the task `claimed` — and one of the
 * repository's concurrent slots — forever; and a repository the App cannot
 * reach for now (its installation suspended, the repository removed from
 * it) pauses its tasks instead of cancelling them.
 */
import { texts } from "../../texts/comments.js";
import type { Context, Decision } from "../decision.js";
import type { EventOf } from "../events.js";
import { effect, everyState, ignore, labelsOf, move, NO_LEASE, taskOf, unchanged, type EventRows } from "./build.js";

/**
 * Blocked with the diagnostic and one comment (keyed by run and stage: the
 * same failure reported twice is one comment). The branch is kept; the run's
 * error ring says what failed.
 */
function stuck(ctx: Context, e: EventOf<"recovery-stuck">): Decision {
  const task = taskOf(ctx);
  const run = ctx.run;
  if (task.runId !== e.runId || !run || run.id !== e.runId) return unchanged("the task moved on");
  if (run.state !== "exited" && run.state !== "expired" && run.state !== "revoked")
    return unchanged(`run ${run.id} is ${run.state}: nothing is owed for it`);
  const what = e.stage === "publish" ? "its pull request could not be opened" : "its facts could not be gathered";
  return move(ctx, "blocked", {
    summary: `run ${run.id}'s recovery cannot finish (${what}): blocked`,
    task: { ...NO_LEASE, diagnostic: `${what}: ${e.why}` },
    fence: { runId: run.id },
    run: { id: run.id, from: [run.state], patch: { error: { class: "stuck", message: `${what}: ${e.why}` } } },
    effects: [
      effect("comment", `stuck:${run.id}:${e.stage}`, {
        issue: task.issue,
        body: texts.recoveryStuck(e.stage, run.id, run.branch, e.why, labelsOf(ctx)),
      }),
    ],
  });
}

export const recoveryStuck: EventRows<"recovery-stuck"> = everyState(
  ignore("not a task"),
  ignore("the task moved on"),
  { claimed: stuck },
);

/** The diagnostic a paused task carries while the App cannot reach its repository. */
export const ACCESS_PAUSED = "paused: ";

/**
 * The App cannot reach the repository for now. A queued task keeps its
 * place (the claim query holds it: `waitingFor: access`). A claimed one goes
 * back to the queue: a live run there can neither push nor open its pull
 * request, so its lease is revoked (its worker hears `revoked` at its next
 * heartbeat), and a run owed a class cannot be classified from GitHub; the
 * attempt is given back and the next run resumes the branch. Every open task
 * shows why in its diagnostic.
 */
function pause(ctx: Context, e: EventOf<"access-lost">): Decision {
  const task = taskOf(ctx);
  const diagnostic = `${ACCESS_PAUSED}${e.why}`;
  if (task.state !== "claimed") {
    if (task.diagnostic === diagnostic) return unchanged("already paused");
    return move(ctx, task.state, { summary: `paused: ${e.why}`, task: { diagnostic } });
  }
  const run = ctx.run && ctx.run.id === task.runId ? ctx.run : null;
  const live = run?.state === "live";
  const owed = run && (run.state === "exited" || run.state === "expired" || run.state === "revoked");
  const patch = live
    ? { state: "revoked" as const, endedAt: ctx.now, endReason: e.why }
    : { error: { class: "access", message: `not classified: ${e.why}` } };
  return move(ctx, "queued", {
    summary: `paused: ${e.why}; back in the queue, no attempt counted`,
    task: {
      ...NO_LEASE,
      attempt: Math.max(0, task.attempt - 1),
      continuation: { kind: "resume", reason: `the previous run was stopped: ${e.why}` },
      diagnostic,
    },
    ...(run && (live || owed) ? { fence: { runId: run.id }, run: { id: run.id, from: [run.state], patch } } : {}),
  });
}

export const accessLost: EventRows<"access-lost"> = everyState(ignore("not a task"), pause, {
  done: ignore("the task is finished"),
  cancelled: ignore("the task is finished"),
});

/** Reachable again: the pause's diagnostic goes; queued tasks are claimable as soon as the gate lifts. */
const resume = (ctx: Context, e: EventOf<"access-restored">): Decision => {
  const task = taskOf(ctx);
  if (!task.diagnostic?.startsWith(ACCESS_PAUSED)) return unchanged("not paused for access");
  return move(ctx, task.state, { summary: `resumed: ${e.why}`, task: { diagnostic: null } });
};

export const accessRestored: EventRows<"access-restored"> = everyState(ignore("not a task"), resume, {
  done: ignore("the task is finished"),
  cancelled: ignore("the task is finished"),
});
