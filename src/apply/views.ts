/** Database rows as the plain views the machine reads. */
import type { RunView, TaskView } from "../machine/decision.js";
import type { Continuation, RunState, TaskState } from "../machine/model.js";
import type { Run, Task } from "../store/generated/sqlite/client.js";

export function parseJson<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

export function taskView(t: Task): TaskView {
  return {
    id: t.id,
    installationId: t.installationId,
    repo: t.repo,
    issue: t.issue,
    title: t.title,
    body: t.body,
    state: t.state as TaskState,
    attempt: t.attempt,
    priority: t.priority,
    branch: t.branch,
    continuation: parseJson<Continuation>(t.continuation),
    prNumber: t.prNumber,
    runId: t.runId,
    leaseEpoch: t.leaseEpoch,
    leaseExpiresAt: t.leaseExpiresAt,
    workerId: t.workerId,
    label: t.label,
    backoffUntil: t.backoffUntil,
    backoffCount: t.backoffCount,
    diagnostic: t.diagnostic,
    costUsd: t.costUsd,
    version: t.version,
  };
}

export function runView(r: Run): RunView {
  return {
    id: r.id,
    attempt: r.attempt,
    state: r.state as RunState,
    mode: r.mode,
    leaseEpoch: r.leaseEpoch,
    leaseExpiresAt: r.leaseExpiresAt,
    branch: r.branch,
    prNumber: r.prNumber,
    class: r.class,
    recovery: r.recovery,
    endReason: r.endReason,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    costUsd: r.costUsd,
    workflowRunId: r.workflowRunId === null ? null : Number(r.workflowRunId),
  };
}
