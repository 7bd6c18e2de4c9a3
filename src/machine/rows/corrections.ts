/**
 * Rows of a trusted comment that is not a command (nor the answer to the
 * question its task is blocked on). It is never lost, and what acts on it
 * depends on what the task is doing: a live run gets it at its next
 * heartbeat; a task in review goes back to its agent with a
 * `changes-requested` continuation on the same branch and PR carrying it; a
 * queued task carries it into its next claim (inside the continuation, when
 * there is one); a blocked or failed task records it, and the reply says
 * what would act on it. One comment is one decision, keyed by its id:
 * delivered again or edited, it never sends the task back a second time.
 */
import { createHash } from "node:crypto";
import { texts } from "../../texts/comments.js";
import type { Applied, Context, Decision, NewDecision, TaskView } from "../decision.js";
import type { EventOf } from "../events.js";
import type { ContinuationComment } from "../model.js";
import { effect, everyState, ignore, labelsOf, move, taskOf, unchanged, type EventRows } from "./build.js";
import { continueOrBlock, withComment, withEditedComment } from "./continuations.js";
import { decision, react } from "./human.js";

type Correction = EventOf<"correction">;

const commentOf = (e: Correction, decisionId: string): ContinuationComment => ({
  id: e.commentId,
  decisionId,
  author: e.author,
  body: e.body,
  on: e.on ?? "issue",
});

/** Where the comment was written, as people name it. */
const where = (task: TaskView, e: Correction) =>
  e.on === "pull" && task.prNumber !== null ? `pull request #${task.prNumber}` : `issue #${task.issue}`;

/** The reply goes where the comment was: on the PR for a PR comment. */
function reply(task: TaskView, e: Correction, body: string) {
  const issue = e.on === "pull" && task.prNumber !== null ? task.prNumber : task.issue;
  return effect("comment", `correction-reply:${e.commentId}`, { issue, body });
}

/** In review: back to the agent on the same branch and PR, the comment in the continuation. */
function sendBack(ctx: Context, task: TaskView, e: Correction, recorded: NewDecision): Applied {
  const on = where(task, e);
  const back = continueOrBlock(
    ctx,
    task,
    {
      kind: "changes-requested",
      ...(task.prNumber !== null ? { prNumber: task.prNumber } : {}),
      ...(task.headSha !== null ? { headSha: task.headSha } : {}),
      reason: `${e.author} commented on ${on}; push to the same branch, the pull request is reused`,
      comments: [commentOf(e, recorded.id)],
    },
    `${e.author} commented on ${on}`,
  );
  // Taken: 👀, and 🚀 when it went back to an agent (not when the attempts were spent).
  const taken = [react(e.commentId, "eyes"), ...(back.to === "queued" ? [react(e.commentId, "rocket")] : [])];
  return { ...back, effects: [...back.effects, ...taken] };
}

/** Queued: the next claim carries it; a continuation waiting there carries it too. */
function ridesNextClaim(ctx: Context, task: TaskView, e: Correction, recorded: NewDecision): Decision {
  const effects = [react(e.commentId, "eyes"), reply(task, e, texts.correctionRecorded("queued", labelsOf(ctx)))];
  const c = task.continuation;
  const joined = c ? withComment(c, commentOf(e, recorded.id)) : null;
  if (!c || !joined || joined === c)
    return unchanged(`correction from ${e.author} recorded: the next claim carries it`, effects, [recorded]);
  return move(ctx, "queued", {
    summary: `correction from ${e.author} joins the queued ${c.kind} continuation`,
    task: { continuation: joined },
    decisions: [recorded],
    effects,
  });
}

/** An edit of one no run has been handed yet replaces it (the original stays as history). */
function edit(ctx: Context, task: TaskView, e: Correction): Decision {
  const digest = createHash("sha256").update(e.body).digest("hex").slice(0, 12);
  const replaced: NewDecision = {
    ...decision(e, "correction", null, e.body),
    runId: task.runId,
    source: `comment:${e.commentId}:edit:${digest}`,
    supersedes: { source: `comment:${e.commentId}` },
  };
  const c = task.state === "queued" ? task.continuation : null;
  const edited = c ? withEditedComment(c, e.commentId, e.body, replaced.id) : null;
  if (!c || !edited || edited === c) return unchanged(`correction from ${e.author} edited`, [], [replaced]);
  return move(ctx, "queued", {
    summary: `correction from ${e.author} edited in the queued continuation`,
    task: { continuation: edited },
    decisions: [replaced],
  });
}

export function correct(ctx: Context, e: Correction): Decision {
  const task = taskOf(ctx);
  if (e.edited) return edit(ctx, task, e);
  if (e.recorded) return unchanged(`comment ${e.commentId} is recorded already`);
  const recorded: NewDecision = { ...decision(e, "correction", null, e.body), runId: task.runId };
  switch (task.state) {
    case "review":
      return { ...sendBack(ctx, task, e, recorded), decisions: [recorded] };
    case "queued":
      return ridesNextClaim(ctx, task, e, recorded);
    case "blocked":
    case "failed":
      return unchanged(
        `correction from ${e.author} recorded: the task is ${task.state}`,
        [react(e.commentId, "eyes"), reply(task, e, texts.correctionRecorded(task.state, labelsOf(ctx)))],
        [recorded],
      );
    default:
      // A live run gets it in its next heartbeat; a run that just ended leaves it to the next claim.
      return unchanged(`correction from ${e.author} recorded`, [react(e.commentId, "eyes")], [recorded]);
  }
}

export const correction: EventRows<"correction"> = everyState(ignore("not a task"), correct, {
  done: ignore("the task is finished"),
  cancelled: ignore("the task is finished"),
});
