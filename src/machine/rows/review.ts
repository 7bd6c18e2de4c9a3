/**
 * Rows of a task's pull request: opened (review), merged (done, with a
 * completion receipt binding the merge to the run that submitted it), closed
 * unmerged (blocked), and what happens to a PR in review — check failures,
 * a moving base, a reviewer asking for changes (branch pushes: branches.ts).
 */
import { texts } from "../../texts/comments.js";
import type { Applied, Context, Decision } from "../decision.js";
import type { EventOf } from "../events.js";
import { randomUUID } from "node:crypto";
import {
  checkRunEffect,
  effect,
  everyState,
  ignore,
  move,
  NO_LEASE,
  taskOf,
  unchanged,
  type EventRows,
} from "./build.js";
import { textOf } from "../../texts/value.js";
import { continueOrBlock, withReview } from "./continuations.js";

/** A PR opened from the task's branch: review, whatever the run was doing. */
function toReview(ctx: Context, e: EventOf<"pr-opened">): Applied {
  const task = taskOf(ctx);
  const run = ctx.run && ctx.run.id === task.runId ? ctx.run : null;
  const runPatch =
    run?.state === "live"
      ? {
          state: "review" as const,
          endedAt: ctx.now,
          endReason: `pull request #${e.pr.number} opened`,
          prNumber: e.pr.number,
          headSha: e.pr.headSha,
        }
      : { prNumber: e.pr.number, headSha: e.pr.headSha, recoveredAt: ctx.now };
  return move(ctx, "review", {
    summary: `pull request #${e.pr.number} opened from ${e.branch}: in review`,
    task: { ...NO_LEASE, prNumber: e.pr.number, headSha: e.pr.headSha, continuation: null },
    ...(run ? { run: { id: run.id, from: [run.state], patch: runPatch } } : {}),
  });
}

function notePr(ctx: Context, e: EventOf<"pr-opened">): Decision {
  const task = taskOf(ctx);
  if (task.prNumber !== null) return unchanged(`already linked to pull request #${task.prNumber}`);
  return move(ctx, task.state, {
    summary: `pull request #${e.pr.number} linked`,
    task: { prNumber: e.pr.number, headSha: e.pr.headSha },
  });
}

/** A draft from a live run's branch is the agent's work in progress: linked, and the run goes on. */
function draftOrReview(ctx: Context, e: EventOf<"pr-opened">): Decision {
  const task = taskOf(ctx);
  const live = ctx.run && ctx.run.id === task.runId && ctx.run.state === "live";
  if (!e.draft || !live) return toReview(ctx, e);
  if (task.prNumber === e.pr.number) return unchanged(`draft pull request #${e.pr.number} already linked`);
  return move(ctx, "claimed", {
    summary: `draft pull request #${e.pr.number} linked; the run goes on until it exits or the draft is ready`,
    task: { prNumber: e.pr.number, headSha: e.pr.headSha },
  });
}

export const prOpened: EventRows<"pr-opened"> = {
  none: ignore("a pull request Orchestra did not expect"),
  queued: toReview,
  claimed: draftOrReview,
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
  // The task's branch has done its job; the executor deletes it only while it is still at the merged head, and
  // not at all where GitHub's delivery of the merge says the repository deletes merged branches itself.
  const branch = m.deletesBranch ? null : (submitter?.branch ?? null);
  return move(ctx, "done", {
    summary: `pull request #${m.prNumber} merged: done`,
    ...(branch
      ? {
          effects: [
            effect("delete-merged-branch", `delete-merged-branch:${task.id}:${m.prNumber}`, {
              branch,
              pr: m.prNumber,
              headSha: m.headSha,
            }),
          ],
        }
      : {}),
    task: { ...NO_LEASE, prNumber: m.prNumber },
    ...(live
      ? {
          run: {
            id: live.id,
            from: ["live"],
            patch: { state: "exited", endedAt: ctx.now, endReason: `pull request #${m.prNumber} merged` },
          },
        }
      : {}),
    receipt: ctx.hasReceipt ? undefined : { runId: submitter?.id ?? null, ...m },
  });
}

export const prMerged: EventRows<"pr-merged"> = everyState(ignore("not a task"), merged);

export const prClosed: EventRows<"pr-closed"> = everyState(
  ignore("not a task"),
  ignore("not this task's pull request in review"),
  {
    review: (ctx, e) => {
      const task = taskOf(ctx);
      if (task.prNumber !== e.pr.number) return unchanged("another pull request");
      return move(ctx, "blocked", {
        summary: `pull request #${e.pr.number} closed without merging: blocked`,
        effects: [
          effect("comment", `pr-closed:${task.id}:${e.pr.number}`, {
            issue: task.issue,
            body: texts.prClosed(e.pr.number),
          }),
        ],
      });
    },
  },
);

/** The event is about this task's PR in review. */
const inReview = (ctx: Context, pr: number) => ctx.task?.state === "review" && ctx.task.prNumber === pr;

/** The PR's head moved (a push to its branch): the check run follows the new head. */
export const prSynchronized: EventRows<"pr-synchronized"> = everyState(ignore("not a task"), (ctx, e) => {
  const task = taskOf(ctx);
  if (task.prNumber !== e.pr.number) return unchanged("another pull request");
  if (task.headSha === e.pr.headSha) return unchanged("already at this head");
  if (task.state === "done" || task.state === "cancelled") return unchanged("the task is finished");
  return move(ctx, task.state, {
    summary: `pull request #${e.pr.number} head moved to ${e.pr.headSha.slice(0, 12)}`,
    task: { headSha: e.pr.headSha },
  });
});

export const checkFailed: EventRows<"check-failed"> = everyState(ignore("not a task"), ignore("not in review"), {
  review: (ctx, e) => {
    if (!inReview(ctx, e.pr.number)) return unchanged("another pull request");
    const task = taskOf(ctx);
    if (task.headSha !== null && task.headSha !== e.pr.headSha)
      return unchanged(`${e.pr.headSha.slice(0, 12)} is no longer the head of pull request #${e.pr.number}`);
    const v = e.verdict;
    switch (v.recovery) {
      case "rerun-failed-jobs": {
        const used = Number(v.evidence["rerunsUsed"] ?? 0);
        const key = (target: string) => `rerun:${e.pr.number}:${e.pr.headSha}:${target}:${e.failureKey}`;
        return unchanged(
          `infrastructure failure on ${e.pr.headSha.slice(0, 12)}: ` +
            `rerun ${used + 1} of ${textOf(v.evidence["rerunBudget"] ?? "?")}`,
          [
            ...e.reruns.map((r) =>
              "workflowRunId" in r
                ? effect("rerun-failed-jobs", key(`run-${r.workflowRunId}`), {
                    pr: e.pr.number,
                    headSha: e.pr.headSha,
                    workflowRunId: r.workflowRunId,
                  })
                : effect("rerequest-check-suite", key(`suite-${r.checkSuiteId}`), {
                    pr: e.pr.number,
                    headSha: e.pr.headSha,
                    checkSuiteId: r.checkSuiteId,
                  }),
            ),
            checkRunEffect(task.id, `rerun-${e.failureKey}`, e.pr.number, e.pr.headSha),
          ],
        );
      }
      case "continue-fix-checks": {
        const names = e.failing.map((c) => c.name).join(", ");
        return continueOrBlock(
          ctx,
          task,
          {
            kind: "fix-checks",
            prNumber: e.pr.number,
            headSha: e.pr.headSha,
            // A hang (timed out again on the same commit) says so: the agent looks for the hang, not a flake.
            reason: v.evidence["timeouts"]
              ? `checks failed on pull request #${e.pr.number}: ${textOf(v.evidence["why"])}`
              : `checks failed on pull request #${e.pr.number}: ${names}`,
            checks: e.failing,
          },
          `checks failed on pull request #${e.pr.number} (${names})`,
        );
      }
      case "escalate":
        return move(ctx, "blocked", {
          summary: `${v.class} on pull request #${e.pr.number}: escalated`,
          effects: [
            effect("comment", `escalation:pr${e.pr.number}:${e.pr.headSha}:${v.class}`, {
              issue: task.issue,
              body: texts.escalation(task.runId ?? "(none)", task.attempt, v.class, v.evidence),
            }),
          ],
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
        effect("update-branch", `update-branch:${e.pr.number}:${e.pr.headSha}`, {
          pr: e.pr.number,
          expectedHeadSha: e.pr.headSha,
        }),
      ]);
    }
    const reason =
      `pull request #${e.pr.number} conflicts with its base (now at ${e.baseSha.slice(0, 12)}): ` +
      `rebase it onto the base and push without force`;
    return continueOrBlock(
      ctx,
      taskOf(ctx),
      { kind: "rebase", prNumber: e.pr.number, headSha: e.pr.headSha, baseSha: e.baseSha, reason },
      `pull request #${e.pr.number} conflicts with its base`,
    );
  },
});

export const reviewSubmitted: EventRows<"review-submitted"> = everyState(
  ignore("not a task"),
  ignore("not in review"),
  {
    review: (ctx, e) => {
      if (!inReview(ctx, e.pr.number)) return unchanged("another pull request");
      const task = taskOf(ctx);
      if (e.review === "approved") {
        return unchanged(
          `approved by ${e.author}`,
          [],
          [
            {
              id: randomUUID(),
              runId: null,
              kind: "approval",
              subject: `pr:${e.pr.number}`,
              body: e.body || "approved",
              author: e.author,
              source: `review:${e.reviewId}`,
            },
          ],
        );
      }
      if (e.review !== "changes_requested") return unchanged(`review ${e.review} by ${e.author} noted`);
      return continueOrBlock(
        ctx,
        task,
        {
          kind: "changes-requested",
          prNumber: e.pr.number,
          headSha: e.pr.headSha,
          reason:
            `${e.author} requested changes on pull request #${e.pr.number}; ` +
            `push to the same branch, the pull request is reused`,
          review: { author: e.author, body: e.body, comments: e.comments, ids: [e.reviewId] },
        },
        `${e.author} requested changes`,
      );
    },
    // Sent back already (a comment, another review) and not claimed yet: the review joins what the run gets.
    queued: (ctx, e) => {
      const task = taskOf(ctx);
      const c = task.continuation;
      if (e.review !== "changes_requested" || !c || c.prNumber !== e.pr.number) return unchanged("not in review");
      const joined = withReview(c, e);
      if (joined === c) return unchanged(`review ${e.reviewId} already joined the continuation`);
      return move(ctx, "queued", {
        summary: `${e.author} requested changes: joins the queued ${c.kind} continuation`,
        task: { continuation: joined },
      });
    },
  },
);
