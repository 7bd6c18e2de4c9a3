/**
 * What the effects of a recovery report back: the pull request a publish opened, a publish the re-checked
 * evidence refused, and a branch the delete-branch recovery found with new commits and kept.
 */
import { everyState, ignore, move, NO_LEASE, unchanged, type EventRows } from "./build.js";
import { holdResume, owed } from "./recovery-moves.js";

export const prPublished: EventRows<"pr-published"> = everyState(ignore("not a task"), ignore("the task moved on"), {
  claimed: (ctx, e) => {
    const found = owed(ctx, e.runId);
    if (!found) return unchanged("the task moved on");
    return move(ctx, "review", {
      summary: `pull request #${e.pr.number} opened from the run's branch: in review`,
      task: { ...NO_LEASE, prNumber: e.pr.number, headSha: e.pr.headSha, continuation: null },
      fence: { runId: e.runId },
      run: {
        id: e.runId,
        from: [found.run.state],
        patch: { prNumber: e.pr.number, headSha: e.pr.headSha, recoveredAt: ctx.now },
      },
    });
  },
});

/** The checks turned before publishing: the work is kept and resumed (class C), never published. */
export const publishRefused: EventRows<"publish-refused"> = everyState(
  ignore("not a task"),
  ignore("the task moved on"),
  {
    claimed: (ctx, e) => {
      const found = owed(ctx, e.runId);
      if (!found) return unchanged("the task moved on");
      const why = `publishing stopped: ${e.why}`;
      return holdResume(
        ctx,
        found.task,
        found.run,
        {
          class: "debris-half-done",
          recovery: "hold-resume",
          evidence: JSON.stringify({ why, republished: false }),
          recoveredAt: ctx.now,
        },
        why,
      );
    },
  },
);

/** The branch gained commits after it was classified empty: it is kept, and the next run resumes it. */
export const branchKept: EventRows<"branch-kept"> = everyState(ignore("not a task"), ignore("nothing to resume"), {
  queued: (ctx, e) =>
    ctx.task && ctx.task.runId === null && ctx.task.continuation === null
      ? move(ctx, "queued", {
          summary: `branch kept: ${e.why}`,
          task: { continuation: { kind: "resume" }, diagnostic: `branch kept: ${e.why}` },
        })
      : unchanged("already resuming"),
});
