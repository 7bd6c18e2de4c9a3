/**
 * One task as an operator reads it: its runs (class, recovery, evidence,
 * error ring), decisions and receipts, effects, and what it cost. The JSON
 * API and the dashboard's task page both render this.
 */
import type { Run } from "../store/generated/sqlite/client.js";
import { parseRing } from "../store/error-ring.js";
import type { Outbox } from "../effects/outbox.js";
import type { Ledger } from "../cost/ledger.js";
import { UNRECEIPTED_FLAG } from "../claims/decisions.js";
import type { ViewsQueries } from "./queries.js";
import { neverStarted } from "../machine/model.js";

export interface TaskReadDeps {
  views: Pick<ViewsQueries, "task" | "runsOf" | "decisionsOf" | "receiptOf" | "deliveriesOf" | "waitingOf">;
  outbox: Outbox;
  ledger: Ledger;
  clock: { now(): Date };
  deliveriesWaiting?: () => Promise<Set<number>>;
}

export const parseJsonText = (text: string | null): unknown => (text === null ? null : (JSON.parse(text) as unknown));

/** A run row as the API shows it. */
export function runJson(r: Run) {
  return {
    id: r.id,
    attempt: r.attempt,
    state: r.state,
    mode: r.mode,
    workerId: r.workerId,
    leaseEpoch: r.leaseEpoch,
    leaseExpiresAt: r.leaseExpiresAt,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    endReason: r.endReason,
    /** What the worker reported at its exit; null before one. */
    report: parseJsonText(r.report) as Record<string, unknown> | null,
    progress: parseJsonText(r.progress),
    progressAt: r.progressAt,
    prNumber: r.prNumber,
    class: r.class,
    recovery: r.recovery,
    evidence: parseJsonText(r.evidence) as Record<string, unknown> | null,
    usage: { inputTokens: r.inputTokens, outputTokens: r.outputTokens, costUsd: r.costUsd },
    errors: parseRing(r.errors),
  };
}

export type RunJson = ReturnType<typeof runJson>;

/** The task with everything behind it; null when there is no such task. */
export async function taskDetail(deps: TaskReadDeps, id: string) {
  const { views } = deps;
  const task = await views.task(id);
  if (!task) return null;
  const [runs, decisions, receipt, effects, calls, waiting] = await Promise.all([
    views.runsOf(task.id),
    views.decisionsOf(task.id),
    views.receiptOf(task.id),
    deps.outbox.list({ taskId: task.id, limit: 1000 }),
    deps.ledger.of(task.id),
    deps.deliveriesWaiting
      ? deps.deliveriesWaiting().then((w) => views.waitingOf([task], deps.clock.now(), w))
      : views.waitingOf([task], deps.clock.now()),
  ]);
  const handed = decisions.length ? await views.deliveriesOf(decisions.map((d) => d.id)) : [];
  const waitingFor = waiting.get(task) ?? null;
  const now = deps.clock.now().getTime();
  const started = runs.filter((r) => !neverStarted(r.state));
  return {
    task: {
      id: task.id,
      repo: task.repo,
      issue: task.issue,
      title: task.title,
      state: task.state,
      attempt: task.attempt,
      branch: task.branch,
      prNumber: task.prNumber,
      continuation: parseJsonText(task.continuation),
      lease: task.leaseEpoch
        ? {
            runId: task.runId,
            leaseEpoch: task.leaseEpoch,
            leaseExpiresAt: task.leaseExpiresAt,
            workerId: task.workerId,
          }
        : null,
      label: task.label,
      diagnostic: task.diagnostic,
      backoffUntil: task.backoffUntil,
      blockedBy: parseJsonText(task.blockedBy),
      ...(waitingFor ? { waitingFor } : {}),
      queuedAt: task.queuedAt,
      version: task.version,
    },
    runs: runs.map(runJson),
    decisions: decisions.map((d) => {
      const to = handed.filter((h) => h.decisionId === d.id);
      return {
        id: d.id,
        kind: d.kind,
        subject: d.subject,
        body: d.body,
        author: d.author,
        createdAt: d.createdAt,
        ...(d.headSha ? { headSha: d.headSha, stale: task.headSha !== null && task.headSha !== d.headSha } : {}),
        ...(d.supersededAt ? { supersededAt: d.supersededAt } : {}),
        ...(d.kind === "question" ? { condition: d.condition, expiresAt: d.expiresAt, answeredAt: d.answeredAt } : {}),
        deliveries: to.map((h) => ({ runId: h.runId, count: h.count, firstAt: h.firstAt, receiptAt: h.receiptAt })),
        // Handed out again and again and never receipted: the agent may not be reading it.
        unreceipted: to.some((h) => h.receiptAt === null && h.count >= UNRECEIPTED_FLAG),
      };
    }),
    effects,
    cost: {
      githubCalls: calls.githubReads + calls.githubWrites,
      githubReads: calls.githubReads,
      githubWrites: calls.githubWrites,
      attempts: task.attempt,
      runs: started.length,
      wallSeconds: Math.round(
        started.reduce((sum, r) => sum + ((r.endedAt?.getTime() ?? now) - r.startedAt.getTime()), 0) / 1000,
      ),
      inputTokens: task.inputTokens,
      outputTokens: task.outputTokens,
      costUsd: Math.round(task.costUsd * 1e6) / 1e6,
    },
    receipt,
  };
}

export type TaskDetail = NonNullable<Awaited<ReturnType<typeof taskDetail>>>;
