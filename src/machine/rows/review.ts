/**
 * Rows of a task's pull request: opened (review), merged (done, with a
 * completion receipt binding the merge to the run that submitted it), closed
 * unmerged (blocked), and what happens to a PR in review — check failures,
 * a moving base, a reviewer asking for changes.
 */
import { texts } from "../../texts/comments.js";
import type { Applied, Context, Decision, TaskView } from "../decision.js";
import type { EventOf } from "../events.js";
import type { Continuation } from "../model.js";
import { effect, everyState, ignore, labelsOf, move, NO_LEASE, taskOf, unchanged, type EventRows } from "./build.js";

/** A PR opened from the task's branch: review, whatever the run was doing. */
function toReview(ctx: Context, e: EventOf<"pr-opened">): Applied {
  const task = taskOf(ctx);
  const run = ctx.run && ctx.run.id === task.runId ? ctx.run : null;
  const runPatch =
    run?.state === "live"
      ? { state: "review" as const, endedAt: ctx.now, endReason: `pull request #${e.pr.number} opened`, prNumber: e.pr.number, headSha: e.pr.headSha }
      : { prNumber: e.pr.number, headSha: e.pr.headSha, recoveredAt: ctx.now };
  return move(ctx, "review", {
    summary: `pull request #${e.pr.number} opened from ${e.branch}: in review`,
    task: { ...NO_LEASE, prNumber: e.pr.number },
    ...(run ? { run: { id: run.id, from: [run.state], patch: runPatch } } : {}),
  });
}

function notePr(ctx: Context, e: EventOf<"pr-opened">): Decision {
  const task = taskOf(ctx);
  if (task.prNumber !== null) return unchanged(`already linked to pull request #${task.prNumber}`);
  return move(ctx, task.state, { summary: `pull request #${e.pr.number} linked`, task: { prNumber: e.pr.number } });
}

export const prOpened: EventRows<"pr-opened"> = {
  none: ignore("a pull request Orchestra did not expect"),
  queued: toReview,
  claimed: toReview,
  review: ignore("already in review"),
  done: notePr,
  blocked: notePr,
  failed: notePr,
  cancelled: notePr,
};

function merged(ctx: Context, e: EventOf<"pr-merged">): Decision {
  const task = taskOf(ctx);
  if (task.state === "done" && ctx.hasReceipt) return unchanged("already done");
  const m = e.merge;
  const submitter = [...ctx.runs].reverse().find((r) => r.prNumber === m.prNumber) ?? null;
  const live = ctx.run && ctx.run.id === task.runId && ctx.run.state === "live" ? ctx.run : null;
  return move(ctx, "done", {
    summary: `pull request #${m.prNumber} merged: done`,
    task: { ...NO_LEASE, prNumber: m.prNumber },
    ...(live ? { run: { id: live.id, from: ["live"], patch: { state: "exited", endedAt: ctx.now, endReason: `pull request #${m.prNumber} merged` } } } : {}),
    receipt: ctx.hasReceipt ? undefined : { runId: submitter?.id ?? null, ...m },
  });
}

export const prMerged: EventRows<"pr-merged"> = everyState(ignore("not a task"), merged);

export const prClosed: EventRows<"pr-closed"> = everyState(ignore("not a task"), ignore("not this task's pull request in review"), {
  review: (ctx, e) => {
    const task = taskOf(ctx);
    if (task.prNumber !== e.pr.number) return unchanged("another pull request");
    return move(ctx, "blocked", {
      summary: `pull request #${e.pr.number} closed without merging: blocked`,
      effects: [effect("comment", `pr-closed:${task.id}:${e.pr.number}`, { issue: task.issue, body: texts.prClosed(e.pr.number, labelsOf(ctx)) })],
    });
  },
});

/** Back to an agent with a continuation on the same branch and PR, unless the attempts are spent. */
function continueOrBlock(ctx: Context, task: TaskView, continuation: Continuation, why: string): Applied {
  const maxAttempts = ctx.config?.limits.maxAttempts ?? 3;
  if (task.attempt >= maxAttempts) {
    const evidence = { why: `${why}, and ${task.attempt} attempts are spent`, pr: task.prNumber };
    return move(ctx, "blocked", {
      summary: `${why}; attempts spent: blocked`,
      effects: [effect("comment", `escalation:${task.id}:${continuation.kind}:${task.attempt}`, { issue: task.issue, body: texts.escalation(task.runId ?? "(none)", task.attempt, continuation.kind, evidence, labelsOf(ctx)) })],
    });
  }
  return move(ctx, "queued", { summary: `${why}: continuation ${continuation.kind}`, task: { continuation } });
}

/** The event is about this task's PR in review. */
const inReview = (ctx: Context, pr: number) => ctx.task?.state === "review" && ctx.task.prNumber === pr;

export const checkFailed: EventRows<"check-failed"> = everyState(ignore("not a task"), ignore("not in review"), {
  review: (ctx, e) => {
    if (!inReview(ctx, e.pr.number)) return unchanged("another pull request");
    const task = taskOf(ctx);
    const v = e.verdict;
    switch (v.recovery) {
      case "rerun-failed-jobs": {
        const used = Number(v.evidence["rerunsUsed"] ?? 0);
        return unchanged(
          `infrastructure failure on ${e.pr.headSha.slice(0, 12)}: rerun ${used + 1}`,
          e.reruns.map((r) =>
            "workflowRunId" in r
              ? effect("rerun-failed-jobs", `rerun:${e.pr.number}:${e.pr.headSha}:${r.workflowRunId}:${used}`, { pr: e.pr.number, headSha: e.pr.headSha, workflowRunId: r.workflowRunId })
              : effect("rerequest-check-suite", `rerun:${e.pr.number}:${e.pr.headSha}:suite-${r.checkSuiteId}:${used}`, { pr: e.pr.number, headSha: e.pr.headSha, checkSuiteId: r.checkSuiteId }),
          ),
        );
      }
      case "continue-fix-checks":
        return continueOrBlock(ctx, task, { kind: "fix-checks", prNumber: e.pr.number }, `checks failed on pull request #${e.pr.number}`);
      case "escalate":
        return move(ctx, "blocked", {
          summary: `${v.class} on pull request #${e.pr.number}: escalated`,
          effects: [effect("comment", `escalation:pr${e.pr.number}:${e.pr.headSha}:${v.class}`, { issue: task.issue, body: texts.escalation(task.runId ?? "(none)", task.attempt, v.class, v.evidence, labelsOf(ctx)) })],
        });
      default:
        return unchanged(`nothing to do for ${v.class}`);
    }
  },
});

export const baseMoved: EventRows<"base-moved"> = everyState(ignore("not a task"), ignore("not in review"), {
  review: (ctx, e) => {
    if (!inReview(ctx, e.pr.number)) return unchanged("another pull request");
    if (e.mergeable === "behind") {
      return unchanged(`pull request #${e.pr.number} is behind its base: updating the branch`, [
        effect("update-branch", `update-branch:${e.pr.number}:${e.pr.headSha}`, { pr: e.pr.number, expectedHeadSha: e.pr.headSha }),
      ]);
    }
    return continueOrBlock(ctx, taskOf(ctx), { kind: "rebase", prNumber: e.pr.number }, `pull request #${e.pr.number} conflicts with its base`);
  },
});

export const reviewSubmitted: EventRows<"review-submitted"> = everyState(ignore("not a task"), ignore("not in review"), {
  review: (ctx, e) => {
    if (!inReview(ctx, e.pr.number)) return unchanged("another pull request");
    if (e.review !== "changes_requested") return unchanged(`review ${e.review} by ${e.author} recorded`);
    return continueOrBlock(ctx, taskOf(ctx), { kind: "changes-requested", prNumber: e.pr.number }, `${e.author} requested changes`);
  },
});
