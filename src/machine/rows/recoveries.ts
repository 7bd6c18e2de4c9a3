/**
 * A run that ended without a PR gets one class; these rows perform the one
 * recovery that class names, as a transition and its effects. The class is
 * recorded in the same transaction as the task's move, and the GitHub writes
 * follow from the outbox — those that destroy or publish anything re-check
 * their evidence on GitHub right before acting (see effects/guards).
 */
import { randomUUID } from "node:crypto";
import { texts } from "../../texts/comments.js";
import type { Verdict } from "../../outcomes/classify.js";
import type { Applied, Context, Decision, RunPatch, RunView, TaskView } from "../decision.js";
import type { EffectSpec } from "../effects.js";
import type { EventOf } from "../events.js";
import { afterFailedRun, neverStarted, QUESTION_TTL_MS, type Continuation } from "../model.js";
import { effect, everyState, ignore, labelsOf, move, NO_LEASE, unchanged, type EventRows } from "./build.js";
import { textOf } from "../../texts/value.js";

/** The run this event settles, while the task still waits on it. */
function owed(ctx: Context, runId: string): { task: TaskView; run: RunView } | null {
  const task = ctx.task;
  const run = ctx.run;
  if (!task || task.state !== "claimed" || task.runId !== runId || !run || run.id !== runId) return null;
  if (run.state !== "exited" && run.state !== "expired" && run.state !== "revoked") return null;
  return { task, run };
}

/** The branch head the verdict saw, when it saw a branch. */
const headOf = (v: Verdict): string | null =>
  (v.evidence["branch"] as { headSha?: string } | null | undefined)?.headSha ?? null;

function recorded(ctx: Context, v: Verdict, done = true): RunPatch {
  return {
    class: v.class,
    recovery: v.recovery,
    evidence: JSON.stringify(v.evidence),
    ...(done ? { recoveredAt: ctx.now } : {}),
  };
}

/** The attempt history for the "attempts spent" comment, with this run's class overlaid. */
function historyLines(ctx: Context, run: RunView, klass: string): string[] {
  return ctx.runs
    .filter((r) => !neverStarted(r.state))
    .map((r) => {
      const c = r.id === run.id ? klass : r.class;
      const endedAt = r.endedAt ?? (r.id === run.id ? ctx.now : null);
      return (
        `- attempt ${r.attempt}: ${r.endReason ?? r.state}` +
        `${c ? ` — ${c}` : ""}${endedAt ? ` (${endedAt.toISOString()})` : ""}`
      );
    });
}

/**
 * A run that died of a run-level infrastructure failure (provider down,
 * runner lost, workflow cancelled or never started) does not use up an
 * attempt, within the task's own budget of such deaths. The patch gives the
 * attempt back; null when the attempt counts.
 */
export function freeRequeue(
  ctx: Context,
  task: TaskView,
  v: Verdict,
): { attempt: number; freeRequeues: number; note: string } | null {
  const death = v.evidence["infraDeath"];
  if (typeof death !== "string") return null;
  const budget = ctx.config?.limits.infraRequeues ?? 3;
  if (task.freeRequeues >= budget) return null;
  return {
    attempt: Math.max(0, task.attempt - 1),
    freeRequeues: task.freeRequeues + 1,
    note: `not charged: ${death} (${task.freeRequeues + 1} of ${budget})`,
  };
}

/**
 * Back to the queue for another attempt — unless the task's model budget is
 * spent, which escalates once instead of burning more of it.
 */
function requeue(
  ctx: Context,
  task: TaskView,
  run: RunView,
  runPatch: RunPatch,
  summary: string,
  continuation: Continuation | null,
  effects: EffectSpec[],
  free: ReturnType<typeof freeRequeue> = null,
): Applied {
  const budget = ctx.config?.limits.maxCostUsd ?? null;
  const base = { fence: { runId: run.id }, run: { id: run.id, from: [run.state], patch: runPatch } };
  if (budget !== null && task.costUsd >= budget) {
    return move(ctx, "blocked", {
      ...base,
      summary: `${summary}; model budget spent ($${task.costUsd.toFixed(2)} of $${budget.toFixed(2)}): blocked`,
      task: { ...NO_LEASE, continuation },
      effects: [
        ...effects,
        effect("comment", `budget:${run.id}`, {
          issue: task.issue,
          body: texts.budgetSpent(task.costUsd, budget, ctx.runs.length, labelsOf(ctx)),
        }),
      ],
    });
  }
  const uncharged = free ? { attempt: free.attempt, freeRequeues: free.freeRequeues } : {};
  return move(ctx, "queued", {
    ...base,
    summary: free ? `${summary} (${free.note})` : summary,
    task: { ...NO_LEASE, continuation, ...uncharged },
    effects,
  });
}

function block(
  ctx: Context,
  task: TaskView,
  run: RunView,
  runPatch: RunPatch,
  summary: string,
  effects: EffectSpec[],
  continuation: Continuation | null = null,
): Applied {
  return move(ctx, "blocked", {
    summary,
    task: { ...NO_LEASE, continuation },
    fence: { runId: run.id },
    run: { id: run.id, from: [run.state], patch: runPatch },
    effects,
  });
}

/** Class C: never delete. Resume on the same branch while attempts remain, then block with one comment. */
export function holdResume(
  ctx: Context,
  task: TaskView,
  run: RunView,
  runPatch: RunPatch,
  why: string,
  free: ReturnType<typeof freeRequeue> = null,
): Applied {
  const maxAttempts = ctx.config?.limits.maxAttempts ?? 3;
  if (task.attempt >= maxAttempts && !free) {
    return block(ctx, task, run, runPatch, `half-done work kept; ${task.attempt} attempts spent: blocked`, [
      effect("comment", `blocked-half-done:${task.id}:${task.attempt}`, {
        issue: task.issue,
        body: texts.blockedHalfDone(task.attempt, run.branch, why, labelsOf(ctx)),
      }),
    ]);
  }
  return requeue(
    ctx,
    task,
    run,
    runPatch,
    "half-done work kept; resumed on the same branch",
    { kind: "resume" },
    [],
    free,
  );
}

function escalate(ctx: Context, task: TaskView, run: RunView, v: Verdict): Applied {
  return block(ctx, task, run, recorded(ctx, v), `${v.class}: escalated to a human`, [
    effect("comment", `escalation:${run.id}:${v.class}`, {
      issue: task.issue,
      body: texts.escalation(run.id, run.attempt, v.class, v.evidence),
    }),
  ]);
}

function settleClass(ctx: Context, e: EventOf<"run-classified">): Decision {
  const found = owed(ctx, e.runId);
  if (!found) return unchanged("the task moved on: nothing is owed for this run");
  const { task, run } = found;
  if (run.class !== null) return unchanged(`already classified ${run.class}: one class per run`);
  const v = e.verdict;
  switch (v.recovery) {
    case "settle": {
      if (!e.merge) return unchanged("a merged class needs the merge facts");
      return move(ctx, "done", {
        summary: `pull request #${e.merge.prNumber} is merged: done`,
        task: { ...NO_LEASE, prNumber: e.merge.prNumber },
        fence: { runId: run.id },
        run: {
          id: run.id,
          from: [run.state],
          patch: { ...recorded(ctx, v), prNumber: e.merge.prNumber, headSha: e.merge.headSha },
        },
        receipt: ctx.hasReceipt ? undefined : { runId: run.id, ...e.merge },
      });
    }
    case "delete-branch-requeue": {
      const free = freeRequeue(ctx, task, v);
      const next = free ? "queued" : afterFailedRun(task.attempt, ctx.config?.limits.maxAttempts ?? 3);
      // Positive evidence is checked again by the effect, right before the delete.
      const del = effect(
        "delete-branch",
        `delete-branch:${run.id}`,
        { branch: run.branch, attempt: task.attempt },
        run.id,
      );
      if (next === "failed") {
        return move(ctx, "failed", {
          summary: `${v.class}: ${task.attempt} attempts spent: failed`,
          task: { ...NO_LEASE, continuation: null },
          fence: { runId: run.id },
          run: { id: run.id, from: [run.state], patch: recorded(ctx, v) },
          effects: [
            del,
            effect("comment", `failed:${task.id}:${task.attempt}`, {
              issue: task.issue,
              body: texts.attemptsSpent(task.attempt, historyLines(ctx, run, v.class), labelsOf(ctx)),
            }),
          ],
        });
      }
      return requeue(
        ctx,
        task,
        run,
        recorded(ctx, v),
        `${v.class}: empty branch removed, re-queued`,
        null,
        [del],
        free,
      );
    }
    case "publish":
      // The task stays claimed until the PR exists (pr-published) or the
      // re-verification refuses it (publish-refused).
      return move(ctx, "claimed", {
        summary: `${v.class}: publishing the branch as a pull request`,
        fence: { runId: run.id },
        run: { id: run.id, from: [run.state], patch: recorded(ctx, v, false) },
        effects: [
          effect(
            "create-pull",
            `publish:${run.id}`,
            {
              branch: run.branch,
              title: task.title,
              issue: task.issue,
              body: texts.publishedPull(task.issue, run.id, run.attempt, headOf(v)),
            },
            run.id,
          ),
        ],
      });
    case "hold-resume":
      return holdResume(
        ctx,
        task,
        run,
        recorded(ctx, v),
        textOf(v.evidence["why"] ?? "see the run's evidence"),
        freeRequeue(ctx, task, v),
      );
    case "block-question": {
      const question = textOf(v.evidence["question"] ?? "");
      const blocked = block(ctx, task, run, recorded(ctx, v), "the agent asked a question: blocked", [
        effect("comment", `escalation:${run.id}:question`, {
          issue: task.issue,
          body: texts.question(run.attempt, question, labelsOf(ctx)),
        }),
      ]);
      return { ...blocked, decisions: [questionDecision(ctx, run.id, question)] };
    }
    default:
      return escalate(ctx, task, run, v);
  }
}

export const runClassified: EventRows<"run-classified"> = everyState(ignore("not a task"), settleClass);

/** The question a block-question recovery records (a decision row, deduplicated by run). */
export function questionDecision(ctx: Context, runId: string, question: string) {
  return {
    id: randomUUID(),
    runId,
    kind: "question" as const,
    subject: null,
    body: question,
    author: `run:${runId}`,
    source: `question:${runId}`,
    expiresAt: new Date(ctx.now.getTime() + QUESTION_TTL_MS),
  };
}

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
