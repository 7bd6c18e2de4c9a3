/**
 * Rows of pushes to a task's branch: the head Orchestra follows moves (and
 * sign-offs given for an older head go stale); a forced push that drops
 * commits is escalated, since no mechanical recovery can judge lost work.
 */
import { texts } from "../../texts/comments.js";
import type { Context, Decision } from "../decision.js";
import type { EventOf } from "../events.js";
import { effect, everyState, ignore, move, NO_LEASE, taskOf, unchanged, type EventRows } from "./build.js";

/** A push to the task's branch: the head Orchestra follows (and sign-offs are checked against) moves. */
export const branchPushed: EventRows<"branch-pushed"> = everyState(ignore("not a task"), (ctx, e) => {
  const task = taskOf(ctx);
  if (task.branch !== e.branch || task.headSha === e.headSha) return unchanged("already at this head");
  if (task.state === "done" || task.state === "cancelled") return unchanged("the task is finished");
  return move(ctx, task.state, {
    summary: `${e.branch} moved to ${e.headSha.slice(0, 12)}`,
    task: { headSha: e.headSha },
  });
});

/**
 * A forced push to the task's branch dropped commits that were on it: work
 * someone pushed may be lost, which no mechanical recovery can judge. A task
 * waiting in review or in the queue is escalated; a live run is warned.
 */
export const branchRewritten: EventRows<"branch-rewritten"> = everyState(
  ignore("not a task"),
  ignore("the task is not waiting on its branch"),
  {
    queued: (ctx, e) => escalateRewrite(ctx, e, true),
    review: (ctx, e) => escalateRewrite(ctx, e, true),
    claimed: (ctx, e) => escalateRewrite(ctx, e, false),
  },
);

function escalateRewrite(ctx: Context, e: EventOf<"branch-rewritten">, block: boolean): Decision {
  const task = taskOf(ctx);
  const evidence = {
    why: `${e.pusher} force-pushed ${e.branch}, dropping ${e.dropped} commit(s)`,
    before: e.before,
    after: e.after,
    dropped: e.dropped,
  };
  const comment = effect("comment", `rewritten:${task.id}:${e.after}`, {
    issue: task.issue,
    body: texts.escalation(task.runId ?? "(none)", task.attempt, "branch-rewritten", evidence),
  });
  if (!block) return unchanged(evidence.why, [comment]);
  return move(ctx, "blocked", { summary: `${evidence.why}: escalated`, task: { ...NO_LEASE }, effects: [comment] });
}
