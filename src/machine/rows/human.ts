/**
 * Rows of human input (trust is judged by whoever raises these events) and
 * of reconciliation. Commands move tasks or are refused with a reply that
 * says why and what would work; sign-offs become decisions (corrections:
 * corrections.ts); a run's receipt for one is acknowledged on the comment.
 */
import { randomUUID } from "node:crypto";
import { texts } from "../../texts/comments.js";
import type { Applied, Context, Decision, NewDecision } from "../decision.js";
import type { CommandName, EventOf } from "../events.js";
import type { State, TaskState } from "../model.js";
import {
  effect,
  everyState,
  ignore,
  labelEffect,
  labelsOf,
  move,
  NO_LEASE,
  refused,
  taskOf,
  unchanged,
  type EventRows,
} from "./build.js";
import { stateLabelsOf } from "../model.js";

export const react = (commentId: number, content: "rocket" | "confused" | "eyes" | "+1") =>
  effect("reaction", `reaction:${commentId}:${content}`, { commentId, content });

/** What each command accepts, and what to say when it does not apply. */
const ACCEPTS: Record<Exclude<CommandName, "status" | "help">, { from: readonly State[]; instead: string }> = {
  retry: {
    from: ["failed", "blocked"],
    instead:
      "`orchestra retry` re-queues a failed or blocked task with a fresh " +
      "attempt budget; use `orchestra status` to see where this one is.",
  },
  resume: {
    from: ["failed", "blocked"],
    instead: "`orchestra resume` continues a blocked or failed task on its branch.",
  },
  hold: {
    from: ["queued", "claimed", "review"],
    instead:
      "`orchestra hold` stops queued, running or in-review work; " +
      "`orchestra retry` or `orchestra resume` start it again.",
  },
  cancel: {
    from: ["queued", "claimed", "review", "blocked", "failed"],
    instead: "a finished task needs no cancel; add the queue label to start it again.",
  },
  verify: {
    from: ["queued", "claimed", "review", "blocked", "failed", "done"],
    instead: "`orchestra verify <phase-id>` signs off a phase of a task Orchestra manages.",
  },
};

function refuse(ctx: Context, e: EventOf<"command">, why: string, instead: string): Decision {
  if (e.commentId === null) return refused("illegal", `${why}: ${instead}`);
  return refused("illegal", why, [
    react(e.commentId, "confused"),
    effect("comment", `command-reply:${e.commentId}`, {
      issue: ctx.subject.issue,
      body: texts.commandRefused(e.command, why, instead),
    }),
  ]);
}

/** Ends a live run because a person stopped the task. */
function revokeLive(ctx: Context, why: string): Pick<Applied, "run"> {
  const task = taskOf(ctx);
  const run = ctx.run && ctx.run.id === task.runId && ctx.run.state === "live" ? ctx.run : null;
  return run
    ? { run: { id: run.id, from: ["live"], patch: { state: "revoked", endedAt: ctx.now, endReason: why } } }
    : {};
}

function statusLines(ctx: Context): string[] {
  const task = ctx.task;
  if (!task) return ["not an Orchestra task: add the queue label to hand it to an agent"];
  const last = [...ctx.runs].reverse().find((r) => r.class !== null);
  return [
    `state: ${task.state} (attempt ${task.attempt})`,
    task.runId && task.leaseExpiresAt
      ? `live run ${task.runId}, lease until ${task.leaseExpiresAt.toISOString()}`
      : "no live run",
    ...(last ? [`last class: ${last.class} → ${last.recovery}`] : []),
    ...(task.prNumber ? [`pull request #${task.prNumber}`] : []),
    ...(task.diagnostic ? [`diagnostic: ${task.diagnostic}`] : []),
  ];
}

/** Received, then done: 👀 and 🚀. */
const accepted = (e: EventOf<"command">) =>
  e.commentId === null ? [] : [react(e.commentId, "eyes"), react(e.commentId, "rocket")];

function command(ctx: Context, e: EventOf<"command">): Decision {
  const state: State = ctx.task?.state ?? "none";
  if (e.problem) return refuse(ctx, e, e.problem, "Write `orchestra help` for the commands and their forms.");
  if (e.command === "status" || e.command === "help") {
    const body = e.command === "help" ? (e.help ?? "") : texts.status(statusLines(ctx));
    if (e.commentId === null) return unchanged(`${e.command} answered`);
    return unchanged(`${e.command} answered`, [
      ...accepted(e),
      effect("comment", `command-reply:${e.commentId}`, { issue: ctx.subject.issue, body }),
    ]);
  }
  const rule = ACCEPTS[e.command];
  if (!rule.from.includes(state))
    return refuse(
      ctx,
      e,
      state === "none" ? "this issue is not an Orchestra task" : `the task is ${state}`,
      rule.instead,
    );
  switch (e.command) {
    case "retry":
    case "resume":
      return move(ctx, "queued", {
        summary: `${e.command} by ${e.author}: attempts reset`,
        task: {
          attempt: 0,
          freeRequeues: 0,
          queuedAt: ctx.now,
          continuation: e.command === "resume" ? { kind: "resume" } : null,
          backoffUntil: null,
          backoffCount: 0,
          diagnostic: null,
        },
        decisions: [decision(e, "correction", null, `orchestra ${e.command}`)],
        effects: accepted(e),
      });
    case "hold":
    case "cancel": {
      const to: TaskState = e.command === "hold" ? "blocked" : "cancelled";
      return move(ctx, to, {
        summary: `${e.command} by ${e.author}`,
        task: { ...NO_LEASE },
        ...revokeLive(ctx, `${e.command} by ${e.author}`),
        effects: accepted(e),
      });
    }
    case "verify": {
      if (!e.phase)
        return refuse(
          ctx,
          e,
          "a phase id is missing",
          "Write `orchestra verify <phase-id>`, e.g. `orchestra verify phase-2`.",
        );
      const subject = `verify:${e.phase}`;
      const signOff = {
        ...decision(e, "verify", subject, `orchestra verify ${e.phase}`),
        headSha: e.headSha ?? null,
        supersedes: { subject },
      };
      return unchanged(`${subject} recorded${e.headSha ? ` at ${e.headSha.slice(0, 12)}` : ""}`, accepted(e), [
        signOff,
      ]);
    }
  }
}

export function decision(
  e: { author: string; commentId: number | null },
  kind: NewDecision["kind"],
  subject: string | null,
  body: string,
): NewDecision {
  const id = randomUUID();
  return {
    id,
    runId: null,
    kind,
    subject,
    body,
    author: e.author,
    source: e.commentId === null ? `operator:${id}` : `comment:${e.commentId}`,
  };
}

export const commandRows: EventRows<"command"> = everyState(command, command);

/** A run receipted a decision: the comment it came from says so (👍; GitHub has no ✅ reaction). */
export const decisionReceipted: EventRows<"decision-receipted"> = everyState(ignore("not a task"), (_ctx, e) =>
  e.commentId === null
    ? unchanged("receipt recorded")
    : unchanged(`decision ${e.decisionId} receipted by run ${e.runId}`, [react(e.commentId, "+1")]),
);

/**
 * Labels on GitHub that disagree with the task: the task's truth is written
 * back, with one comment per change that says how to change a task instead
 * (a hand-edited state label is restored, never adopted: commands are the
 * way to steer). The queue label is the exception — adding it is handled as
 * queueing when it happens.
 */
const restore = (ctx: Context, e: EventOf<"drift">): Decision => {
  const task = taskOf(ctx);
  const want = task.label;
  const wrong = e.labels.filter((l) => l !== want);
  if (wrong.length === 0 && (want === null || e.labels.includes(want))) return unchanged("labels already match");
  const key = `drift:${task.id}:v${task.version}:${e.labels.join(",")}`;
  const explain = effect("comment", `drift-explained:${task.id}:v${task.version}`, {
    issue: task.issue,
    body: texts.driftRestored(e.labels, want, task.state),
  });
  const open = task.state !== "done" && task.state !== "cancelled";
  return unchanged(`labels on GitHub (${e.labels.join(", ") || "none"}) restored to ${want ?? "none"}`, [
    { ...labelEffect(ctx, task.id, task.version, want), key },
    ...(open ? [explain] : []),
  ]);
};

/**
 * An issue Orchestra has no task for carries agent:* labels (a closed one, or a label with nothing behind it): they go.
 */
const clear = (ctx: Context, e: EventOf<"drift">): Decision => {
  const labels = labelsOf(ctx);
  const stray = e.labels.filter((l) => stateLabelsOf(labels).includes(l));
  if (stray.length === 0) return unchanged("no agent labels");
  return unchanged(`agent labels with no task removed: ${stray.join(", ")}`, [
    effect("label", `drift:none:${ctx.subject.repo}#${ctx.subject.issue}:${stray.join(",")}`, {
      issue: ctx.subject.issue,
      label: null,
      others: stray,
    }),
  ]);
};

export const drift: EventRows<"drift"> = everyState(clear, restore);

/** A failed parent whose sub-issues are all closed is done: the label goes, with one comment proposing to close it. */
export const subIssuesClosed: EventRows<"sub-issues-closed"> = everyState(
  ignore("not a task"),
  ignore("only a failed parent is superseded"),
  {
    failed: (ctx, e) =>
      move(ctx, "done", {
        summary: `superseded: its sub-issues ${e.subIssues.join(", ")} are all closed`,
        effects: [
          effect("comment", `superseded:${taskOf(ctx).id}`, {
            issue: taskOf(ctx).issue,
            body: texts.superseded(e.subIssues),
          }),
        ],
      }),
  },
);

/** The App lost access: work there stops (history kept), a live lease is revoked. */
export const installationRemoved: EventRows<"installation-removed"> = everyState(ignore("not a task"), (ctx, e) => {
  const task = taskOf(ctx);
  if (task.state === "done" || task.state === "cancelled") return unchanged("already finished");
  return move(ctx, "cancelled", { summary: `cancelled: ${e.why}`, task: { ...NO_LEASE }, ...revokeLive(ctx, e.why) });
});
