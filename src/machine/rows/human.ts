/**
 * Rows of human input (trust is judged by whoever raises these events) and
 * of reconciliation. Commands move tasks or are refused with a reply that
 * says why and what would work; corrections and sign-offs become decisions.
 */
import { randomUUID } from "node:crypto";
import { texts } from "../../texts/comments.js";
import type { Applied, Context, Decision, NewDecision } from "../decision.js";
import type { CommandName, EventOf } from "../events.js";
import type { State, TaskState } from "../model.js";
import { effect, everyState, ignore, labelEffect, labelsOf, move, NO_LEASE, refused, taskOf, underLease, unchanged, type EventRows } from "./build.js";
import { questionDecision } from "./recoveries.js";

const react = (commentId: number, content: "rocket" | "confused" | "eyes") => effect("reaction", `reaction:${commentId}:${content}`, { commentId, content });

/** What each command accepts, and what to say when it does not apply. */
const ACCEPTS: Record<Exclude<CommandName, "status">, { from: readonly State[]; instead: string }> = {
  retry: { from: ["failed", "blocked"], instead: "`orchestra retry` re-queues a failed or blocked task; use `orchestra status` to see where this one is." },
  resume: { from: ["failed", "blocked"], instead: "`orchestra resume` continues a blocked or failed task on its branch." },
  hold: { from: ["queued", "claimed", "review"], instead: "`orchestra hold` stops queued, running or in-review work; `orchestra retry` or `orchestra resume` start it again." },
  cancel: { from: ["queued", "claimed", "review", "blocked", "failed"], instead: "a finished task needs no cancel; add the queue label to start it again." },
  verify: { from: ["queued", "claimed", "review", "blocked", "failed", "done"], instead: "`orchestra verify <phase-id>` signs off a phase of a task Orchestra manages." },
};

function refuse(ctx: Context, e: EventOf<"command">, why: string, instead: string): Decision {
  return refused("illegal", why, [react(e.commentId, "confused"), effect("comment", `command-reply:${e.commentId}`, { issue: ctx.subject.issue, body: texts.commandRefused(e.command, why, instead) })]);
}

/** Ends a live run because a person stopped the task. */
function revokeLive(ctx: Context, why: string): Pick<Applied, "run"> {
  const task = taskOf(ctx);
  const run = ctx.run && ctx.run.id === task.runId && ctx.run.state === "live" ? ctx.run : null;
  return run ? { run: { id: run.id, from: ["live"], patch: { state: "revoked", endedAt: ctx.now, endReason: why } } } : {};
}

function statusLines(ctx: Context): string[] {
  const task = ctx.task;
  if (!task) return ["not an Orchestra task: add the queue label to hand it to an agent"];
  const last = [...ctx.runs].reverse().find((r) => r.class !== null);
  return [
    `state: ${task.state} (attempt ${task.attempt})`,
    task.runId && task.leaseExpiresAt ? `live run ${task.runId}, lease until ${task.leaseExpiresAt.toISOString()}` : "no live run",
    ...(last ? [`last class: ${last.class} → ${last.recovery}`] : []),
    ...(task.prNumber ? [`pull request #${task.prNumber}`] : []),
    ...(task.diagnostic ? [`diagnostic: ${task.diagnostic}`] : []),
  ];
}

function command(ctx: Context, e: EventOf<"command">): Decision {
  const state: State = ctx.task?.state ?? "none";
  if (e.command === "status") {
    return unchanged("status reported", [react(e.commentId, "eyes"), effect("comment", `command-reply:${e.commentId}`, { issue: ctx.subject.issue, body: texts.status(statusLines(ctx)) })]);
  }
  const rule = ACCEPTS[e.command];
  if (!rule.from.includes(state)) {
    return refuse(ctx, e, state === "none" ? "this issue is not an Orchestra task" : `the task is ${state}`, rule.instead);
  }
  const done = [react(e.commentId, "rocket")];
  switch (e.command) {
    case "retry":
    case "resume":
      return move(ctx, "queued", {
        summary: `${e.command} by ${e.author}: attempts reset`,
        task: { attempt: 0, queuedAt: ctx.now, continuation: e.command === "resume" ? { kind: "resume" } : null, backoffUntil: null, backoffCount: 0, diagnostic: null },
        decisions: [decision(e, "correction", null, `orchestra ${e.command}`)],
        effects: done,
      });
    case "hold":
    case "cancel": {
      const to: TaskState = e.command === "hold" ? "blocked" : "cancelled";
      return move(ctx, to, { summary: `${e.command} by ${e.author}`, task: { ...NO_LEASE }, ...revokeLive(ctx, `${e.command} by ${e.author}`), effects: done });
    }
    case "verify":
      if (!e.phase) return refuse(ctx, e, "a phase id is missing", "Write `orchestra verify <phase-id>`, e.g. `orchestra verify phase-2`.");
      return unchanged(`verify:${e.phase} recorded`, done, [decision(e, "verify", `verify:${e.phase}`, `orchestra verify ${e.phase}`)]);
  }
}

function decision(e: { author: string; commentId: number }, kind: NewDecision["kind"], subject: string | null, body: string): NewDecision {
  return { id: randomUUID(), runId: null, kind, subject, body, author: e.author, source: `comment:${e.commentId}` };
}

export const commandRows: EventRows<"command"> = everyState(command, command);

const correct = (ctx: Context, e: EventOf<"correction">): Decision =>
  unchanged(`correction from ${e.author} recorded`, [react(e.commentId, "eyes")], [{ ...decision(e, "correction", null, e.body), runId: taskOf(ctx).runId }]);

export const correction: EventRows<"correction"> = everyState(ignore("not a task"), correct, {
  done: ignore("the task is finished"),
  cancelled: ignore("the task is finished"),
});

export const decisionRequested: EventRows<"decision-requested"> = underLease<"decision-requested">((ctx, e, { task, run }) => {
  const asked = { ...questionDecision(ctx, run.id, e.question), id: e.decisionId, source: `request:${e.decisionId}`, ...(e.condition ? { condition: e.condition } : {}) };
  const ask = effect("comment", `question:${e.decisionId}`, { issue: task.issue, body: texts.question(run.attempt, e.question, labelsOf(ctx)) });
  if (e.blocks === "nothing") return unchanged("question recorded; the run goes on", [ask], [asked]);
  return {
    ...move(ctx, "blocked", {
      summary: "the agent asked a question and stopped: blocked",
      task: { ...NO_LEASE },
      fence: { runId: run.id, leaseEpoch: e.leaseEpoch },
      run: { id: run.id, from: ["live"], patch: { state: "exited", endedAt: ctx.now, endReason: "asked a question", class: "question", recovery: "block-question", evidence: JSON.stringify({ question: e.question, why: "the worker asked a human" }), recoveredAt: ctx.now } },
      effects: [ask],
    }),
    decisions: [asked],
  };
});

const resumeBlocked = (why: string) => (ctx: Context) => move(ctx, "queued", { summary: why, task: { continuation: { kind: "resume" }, queuedAt: ctx.now } });

export const questionAnswered: EventRows<"question-answered"> = everyState(ignore("not a task"), ignore("no question waits on this task"), {
  blocked: (ctx, e) => resumeBlocked(`question answered by ${e.author}: resumed`)(ctx),
});

export const conditionMet: EventRows<"condition-met"> = everyState(ignore("not a task"), ignore("no question waits on this task"), {
  blocked: (ctx, e) => resumeBlocked(`condition ${e.condition} met: resumed`)(ctx),
});

export const questionExpired: EventRows<"question-expired"> = everyState(ignore("not a task"), ignore("no question waits on this task"), {
  blocked: (ctx, e) => unchanged("question expired unanswered", [effect("comment", `question-expired:${e.decisionId}`, { issue: taskOf(ctx).issue, body: texts.questionExpired(e.question, labelsOf(ctx)) })]),
});

/** Labels on GitHub that disagree with the task: its truth is written back. */
const restore = (ctx: Context, e: EventOf<"drift">): Decision => {
  const task = taskOf(ctx);
  const want = task.label;
  const wrong = e.labels.filter((l) => l !== want);
  if (wrong.length === 0 && (want === null || e.labels.includes(want))) return unchanged("labels already match");
  return unchanged(`labels on GitHub (${e.labels.join(", ") || "none"}) restored to ${want ?? "none"}`, [{ ...labelEffect(ctx, task.id, task.version, want), key: `drift:${task.id}:v${task.version}:${e.labels.join(",")}` }]);
};

export const drift: EventRows<"drift"> = everyState(ignore("not a task"), restore);
