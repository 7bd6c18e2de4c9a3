/** Database rows as the plain views the machine reads. */
import type { RunView, TaskView } from "../machine/decision.js";
import type { Continuation, RunState, TaskState } from "../machine/model.js";
import type { Run, Task } from "../store/generated/sqlite/client.js";
import { dateOf } from "../store/sql.js";
import { textOf } from "../texts/value.js";

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
    headSha: t.headSha,
    runId: t.runId,
    leaseEpoch: t.leaseEpoch,
    leaseExpiresAt: t.leaseExpiresAt,
    workerId: t.workerId,
    label: t.label,
    backoffUntil: t.backoffUntil,
    backoffCount: t.backoffCount,
    diagnostic: t.diagnostic,
    blockedBy: parseJson<string[]>(t.blockedBy),
    blockersAt: t.blockersAt,
    freeRequeues: t.freeRequeues,
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
    progress: r.progress,
    progressAt: r.progressAt,
    stalled: r.stalled,
    ...(r.credentials === "broker" ? { credentials: "broker" as const } : {}),
    reported: r.report !== null,
  };
}

const num = (v: unknown) => Number(v);
const text = (v: unknown) => (v === null || v === undefined ? null : textOf(v));

/** A `Task` row read with plain SQL (`SELECT * FROM "Task"`), typed as the client types it. */
export function taskFromSql(r: Record<string, unknown>): Task {
  return {
    id: String(r["id"]),
    installationId: num(r["installationId"]),
    repo: String(r["repo"]),
    repoId: r["repoId"] === null || r["repoId"] === undefined ? null : num(r["repoId"]),
    issue: num(r["issue"]),
    title: String(r["title"]),
    body: String(r["body"]),
    state: String(r["state"]),
    attempt: num(r["attempt"]),
    priority: num(r["priority"]),
    queuedAt: dateOf(r["queuedAt"])!,
    branch: String(r["branch"]),
    continuation: text(r["continuation"]),
    prNumber: r["prNumber"] === null ? null : num(r["prNumber"]),
    headSha: text(r["headSha"]),
    runId: text(r["runId"]),
    leaseEpoch: text(r["leaseEpoch"]),
    leaseExpiresAt: dateOf(r["leaseExpiresAt"]),
    workerId: text(r["workerId"]),
    label: text(r["label"]),
    backoffUntil: dateOf(r["backoffUntil"]),
    backoffCount: num(r["backoffCount"]),
    diagnostic: text(r["diagnostic"]),
    blockedBy: text(r["blockedBy"]),
    blockersAt: dateOf(r["blockersAt"]),
    freeRequeues: num(r["freeRequeues"]),
    inputTokens: num(r["inputTokens"]),
    outputTokens: num(r["outputTokens"]),
    costUsd: num(r["costUsd"]),
    version: num(r["version"]),
    createdAt: dateOf(r["createdAt"])!,
    updatedAt: dateOf(r["updatedAt"])!,
  };
}
