/**
 * Where a recovery leaves the task, shared by the recoveries (recoveries.ts) and what their effects report back
 * (recovery-outcomes.ts): the run it settles, the class recorded on it, back to the queue (an attempt given back
 * after an infrastructure death, or blocked once the model budget is spent), blocked, resumed on the same branch,
 * or escalated to a human.
 */
import { texts } from "../../texts/comments.js";
import type { Verdict } from "../../outcomes/classify.js";
import type { Applied, Context, RunPatch, RunView, TaskView } from "../decision.js";
import type { EffectSpec } from "../effects.js";
import type { Continuation } from "../model.js";
import { effect, labelsOf, move, NO_LEASE } from "./build.js";

/** The run this event settles, while the task still waits on it. */
export function owed(ctx: Context, runId: string): { task: TaskView; run: RunView } | null {
  const task = ctx.task;
  const run = ctx.run;
  if (!task || task.state !== "claimed" || task.runId !== runId || !run || run.id !== runId) return null;
  if (run.state !== "exited" && run.state !== "expired" && run.state !== "revoked") return null;
  return { task, run };
}

export function recorded(ctx: Context, v: Verdict, done = true): RunPatch {
  return {
    class: v.class,
    recovery: v.recovery,
    evidence: JSON.stringify(v.evidence),
    ...(done ? { recoveredAt: ctx.now } : {}),
  };
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
export function requeue(
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

export function block(
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

export function escalate(ctx: Context, task: TaskView, run: RunView, v: Verdict): Applied {
  return block(ctx, task, run, recorded(ctx, v), `${v.class}: escalated to a human`, [
    effect("comment", `escalation:${run.id}:${v.class}`, {
      issue: task.issue,
      body: texts.escalation(run.id, run.attempt, v.class, v.evidence),
    }),
  ]);
}
