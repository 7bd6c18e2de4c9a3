/**
 * Sending a task in review back to an agent: a continuation on the same
 * branch and PR, unless the attempts are spent (then blocked, with one
 * comment). And what joins a continuation that no run has claimed yet: a
 * trusted comment, a review asking for changes — the run that claims it gets
 * all of them, never one run each.
 */
import { texts } from "../../texts/comments.js";
import type { Applied, Context, TaskView } from "../decision.js";
import type { EventOf } from "../events.js";
import { CONTINUATION_COMMENTS, type Continuation, type ContinuationComment } from "../model.js";
import { effect, move } from "./build.js";

/** Back to an agent with a continuation on the same branch and PR, unless the attempts are spent. */
export function continueOrBlock(ctx: Context, task: TaskView, continuation: Continuation, why: string): Applied {
  const maxAttempts = ctx.config?.limits.maxAttempts ?? 3;
  if (task.attempt >= maxAttempts) {
    const evidence = { why: `${why}, and ${task.attempt} attempts are spent`, pr: task.prNumber };
    return move(ctx, "blocked", {
      summary: `${why}; attempts spent: blocked`,
      effects: [
        effect("comment", `escalation:${task.id}:${continuation.kind}:${task.attempt}`, {
          issue: task.issue,
          body: texts.escalation(task.runId ?? "(none)", task.attempt, continuation.kind, evidence),
        }),
      ],
    });
  }
  return move(ctx, "queued", {
    summary: `${why}: continuation ${continuation.kind}`,
    task: { continuation, queuedAt: ctx.now },
  });
}

/** The continuation with one more comment (once per comment id; past the bound, only counted). */
export function withComment(c: Continuation, comment: ContinuationComment): Continuation {
  const comments = c.comments ?? [];
  if (comments.some((x) => x.id === comment.id)) return c;
  if (comments.length >= CONTINUATION_COMMENTS) return { ...c, moreComments: (c.moreComments ?? 0) + 1 };
  return { ...c, comments: [...comments, comment] };
}

/** The continuation with an edited comment's new text, when it carries that comment. */
export function withEditedComment(c: Continuation, commentId: number, body: string, decisionId: string): Continuation {
  const comments = c.comments ?? [];
  if (!comments.some((x) => x.id === commentId)) return c;
  return { ...c, comments: comments.map((x) => (x.id === commentId ? { ...x, body, decisionId } : x)) };
}

/**
 * The continuation with a review asking for changes (once per review id): a
 * second review before the claim adds its text and inline comments to the first.
 */
export function withReview(c: Continuation, e: EventOf<"review-submitted">): Continuation {
  const prev = c.review;
  if (prev?.ids?.includes(e.reviewId)) return c;
  if (!prev) return { ...c, review: { author: e.author, body: e.body, comments: e.comments, ids: [e.reviewId] } };
  const authors = prev.author.split(", ");
  return {
    ...c,
    review: {
      author: authors.includes(e.author) ? prev.author : `${prev.author}, ${e.author}`,
      body: [prev.body, e.body].filter((b) => b.trim() !== "").join("\n\n"),
      comments: [...prev.comments, ...e.comments],
      ids: [...(prev.ids ?? []), e.reviewId],
    },
  };
}
