/**
 * Rows of a worker's questions. Asking posts the question on the issue once;
 * with `blocks: "run"` the run stops and the task is blocked until an answer,
 * a met condition or the expiry; with `blocks: "nothing"` the run goes on
 * and the answer reaches it in a heartbeat. A question is answered once.
 */
import { randomUUID } from "node:crypto";
import { texts } from "../../texts/comments.js";
import type { Context, Decision, NewDecision } from "../decision.js";
import type { EventOf } from "../events.js";
import {
  effect,
  everyState,
  ignore,
  labelsOf,
  move,
  NO_LEASE,
  taskOf,
  underLease,
  unchanged,
  type EventRows,
} from "./build.js";
import { questionDecision } from "./recoveries.js";
import { correct } from "./corrections.js";

export const decisionRequested: EventRows<"decision-requested"> = underLease<"decision-requested">(
  (ctx, e, { task, run }) => {
    const asked = {
      ...questionDecision(ctx, run.id, e.question),
      id: e.decisionId,
      source: `request:${e.decisionId}`,
      subject: e.subject ?? null,
      ...(e.condition ? { condition: e.condition } : {}),
      ...(e.awaits ? { awaits: e.awaits } : {}),
    };
    const ask = effect("comment", `question:${e.decisionId}`, {
      issue: task.issue,
      body: texts.question(run.attempt, e.question, labelsOf(ctx)),
    });
    if (e.blocks === "nothing") return unchanged("question recorded; the run goes on", [ask], [asked]);
    return {
      ...move(ctx, "blocked", {
        summary: "the agent asked a question and stopped: blocked",
        task: { ...NO_LEASE },
        fence: { runId: run.id, leaseEpoch: e.leaseEpoch },
        run: {
          id: run.id,
          from: ["live"],
          patch: {
            state: "exited",
            endedAt: ctx.now,
            endReason: "asked a question",
            class: "question",
            recovery: "block-question",
            evidence: JSON.stringify({ question: e.question, why: "the worker asked a human" }),
            recoveredAt: ctx.now,
          },
        },
        effects: [ask],
      }),
      decisions: [asked],
    };
  },
);

/**
 * The answer, keyed by the comment that gave it (one comment is one decision, whatever it turned out
 * to be), else by its question; `answering` records the question answered once either way.
 */
function answerDecision(
  ctx: Context,
  questionId: string,
  author: string,
  body: string,
  commentId?: number,
): NewDecision {
  return {
    id: randomUUID(),
    runId: ctx.task?.runId ?? null,
    kind: "answer",
    subject: `answer:${questionId}`,
    body,
    author,
    source: commentId === undefined ? `answer:${questionId}` : `comment:${commentId}`,
  };
}

/** The answer goes to whoever waits: a blocked task resumes with it; a live run gets it in a heartbeat. */
function answered(
  ctx: Context,
  questionId: string,
  author: string,
  body: string,
  why: string,
  commentId?: number,
): Decision {
  const task = taskOf(ctx);
  const answer = answerDecision(ctx, questionId, author, body, commentId);
  if (task.state === "blocked") {
    return move(ctx, "queued", {
      summary: `${why}: resumed`,
      task: { continuation: { kind: "resume", reason: why }, queuedAt: ctx.now },
      decisions: [answer],
      answering: questionId,
    });
  }
  return unchanged(`${why}: the live run gets it in its next heartbeat`, [], [answer], questionId);
}

/**
 * A comment that answers a question no task waits on any more (the task moved on between reading
 * and deciding) is not lost: it is the correction it would have been.
 */
const notWaiting = (ctx: Context, e: EventOf<"question-answered">): Decision =>
  e.commentId === undefined
    ? unchanged("no question waits on this task")
    : correct(ctx, { kind: "correction", author: e.author, commentId: e.commentId, body: e.answer, on: e.on });

const answer = (ctx: Context, e: EventOf<"question-answered">): Decision =>
  answered(ctx, e.decisionId, e.author, e.answer, `question answered by ${e.author}`, e.commentId);

export const questionAnswered: EventRows<"question-answered"> = everyState(ignore("not a task"), notWaiting, {
  claimed: answer,
  blocked: answer,
  done: ignore("the task is finished"),
  cancelled: ignore("the task is finished"),
});

export const conditionMet: EventRows<"condition-met"> = everyState(
  ignore("not a task"),
  ignore("no question waits on this task"),
  {
    claimed: (ctx, e) =>
      answered(ctx, e.decisionId, "orchestra", `condition met: ${e.condition}`, `condition ${e.condition} met`),
    blocked: (ctx, e) =>
      answered(ctx, e.decisionId, "orchestra", `condition met: ${e.condition}`, `condition ${e.condition} met`),
  },
);

const expire = (ctx: Context, e: EventOf<"question-expired">): Decision =>
  unchanged(
    "question expired unanswered",
    [
      effect("comment", `question-expired:${e.decisionId}`, {
        issue: taskOf(ctx).issue,
        body: texts.questionExpired(e.question, labelsOf(ctx)),
      }),
    ],
    undefined,
    e.decisionId,
  );

export const questionExpired: EventRows<"question-expired"> = everyState(
  ignore("not a task"),
  ignore("no question waits on this task"),
  { claimed: expire, blocked: expire },
);
