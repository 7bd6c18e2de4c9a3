/**
 * A run that ended without a PR gets one class; these rows perform the one
 * recovery that class names, as a transition and its effects. The class is
 * recorded in the same transaction as the task's move, and the GitHub writes
 * follow from the outbox — those that destroy or publish anything re-check
 * their evidence on GitHub right before acting (see effects/guards). What
 * those effects report back is recovery-outcomes.ts.
 */
import { randomUUID } from "node:crypto";
import { texts } from "../../texts/comments.js";
import type { Verdict } from "../../outcomes/classify.js";
import type { Context, Decision, RunView } from "../decision.js";
import type { EventOf } from "../events.js";
import { afterFailedRun, neverStarted, QUESTION_TTL_MS } from "../model.js";
import { effect, everyState, ignore, labelsOf, move, NO_LEASE, unchanged, type EventRows } from "./build.js";
import { textOf } from "../../texts/value.js";
import { block, escalate, freeRequeue, holdResume, owed, recorded, requeue } from "./recovery-moves.js";

/** The branch head the verdict saw, when it saw a branch. */
const headOf = (v: Verdict): string | null =>
  (v.evidence["branch"] as { headSha?: string } | null | undefined)?.headSha ?? null;

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
