/**
 * `orchestra tasks` and `orchestra task <id>`: the queue and one task's
 * history (runs with their class, recovery and evidence; decisions; GitHub
 * writes; cost), from GET /api/v1/tasks and GET /api/v1/tasks/:id.
 */
import { table, when } from "./io.js";

export interface WaitingFor {
  gate: string;
  detail: string;
  until?: string;
}

export interface TaskRow {
  id: string;
  repo: string;
  issue: number;
  state: string;
  attempt: number;
  prNumber: number | null;
  diagnostic: string | null;
  waitingFor?: WaitingFor;
}

export function tasksText(tasks: TaskRow[]): string {
  if (tasks.length === 0) return "no tasks\n";
  const rows = tasks.map((t) => [
    t.id,
    `${t.repo}#${t.issue}`,
    t.state,
    String(t.attempt),
    t.prNumber === null ? "-" : `#${t.prNumber}`,
    t.waitingFor ? `waiting: ${t.waitingFor.gate}: ${t.waitingFor.detail}` : (t.diagnostic ?? ""),
  ]);
  return table(["ID", "ISSUE", "STATE", "ATTEMPT", "PR", "WHY"], rows);
}

interface Run {
  id: string;
  attempt: number;
  state: string;
  workerId: string | null;
  startedAt: string;
  endedAt: string | null;
  endReason: string | null;
  class: string | null;
  recovery: string | null;
  evidence: unknown;
  errors: Array<{ message?: string }> | null;
}

export interface TaskAnswer {
  task: {
    id: string;
    repo: string;
    issue: number;
    title: string | null;
    state: string;
    attempt: number;
    branch: string | null;
    prNumber: number | null;
    diagnostic: string | null;
    lease: { runId: string; leaseEpoch: string; leaseExpiresAt: string; workerId: string | null } | null;
    waitingFor?: WaitingFor;
    queuedAt: string;
  };
  runs: Run[];
  decisions: Array<{
    id: string;
    kind: string;
    subject: string | null;
    author: string;
    createdAt: string;
    supersededAt?: string;
    stale?: boolean;
  }>;
  effects: Array<{ id: string; kind: string; state: string; attempts: number; note: string | null }>;
  cost: {
    githubCalls: number;
    githubReads: number;
    githubWrites: number;
    attempts: number;
    runs: number;
    wallSeconds: number;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
  };
}

/** One evidence value on one line, long ones cut: the JSON form has it whole. */
const brief = (value: unknown): string => {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
};

export function taskText(a: TaskAnswer): string {
  const t = a.task;
  const lines = [
    `task ${t.id}  ${t.repo}#${t.issue}${t.title ? `  ${t.title}` : ""}`,
    `state ${t.state}  attempt ${t.attempt}  branch ${t.branch ?? "-"}  ` +
      `PR ${t.prNumber === null ? "-" : `#${t.prNumber}`}  queued ${when(t.queuedAt)}`,
  ];
  if (t.lease)
    lines.push(
      `lease: run ${t.lease.runId}  worker ${t.lease.workerId ?? "-"}  expires ${when(t.lease.leaseExpiresAt)}`,
    );
  if (t.waitingFor)
    lines.push(
      `waiting for ${t.waitingFor.gate}: ${t.waitingFor.detail}` +
        `${t.waitingFor.until ? ` (until ${when(t.waitingFor.until)})` : ""}`,
    );
  if (t.diagnostic) lines.push(`diagnostic: ${t.diagnostic}`);
  lines.push("", `runs (${a.runs.length}):`);
  for (const r of a.runs) {
    lines.push(
      `  #${r.attempt} ${r.id}  ${r.state}  worker ${r.workerId ?? "-"}  ${when(r.startedAt)} → ${when(r.endedAt)}` +
        `${r.endReason ? `  ended: ${r.endReason}` : ""}`,
    );
    if (r.class) lines.push(`     class ${r.class} → recovery ${r.recovery ?? "-"}`);
    if (r.evidence && typeof r.evidence === "object")
      for (const [k, v] of Object.entries(r.evidence as Record<string, unknown>))
        lines.push(`       ${k}: ${brief(v)}`);
    const last = r.errors?.[r.errors.length - 1]?.message;
    if (last) lines.push(`     last error: ${last}`);
  }
  lines.push("", `decisions (${a.decisions.length}):`);
  for (const d of a.decisions)
    lines.push(
      `  ${when(d.createdAt)}  ${d.kind}  by ${d.author}${d.subject ? `  ${d.subject}` : ""}` +
        `${d.supersededAt ? "  (superseded)" : d.stale ? "  (stale)" : ""}`,
    );
  lines.push("", `effects (${a.effects.length}):`);
  for (const e of a.effects)
    lines.push(`  ${e.id}  ${e.kind}  ${e.state}  attempts=${e.attempts}${e.note ? `  ${e.note}` : ""}`);
  const c = a.cost;
  lines.push(
    "",
    `cost: ${c.runs} run(s), ${c.attempts} attempt(s), ${c.wallSeconds} s wall, ` +
      `GitHub calls ${c.githubCalls} (${c.githubReads} reads, ${c.githubWrites} writes), ` +
      `tokens ${c.inputTokens} in / ${c.outputTokens} out, $${c.costUsd}`,
  );
  return `${lines.join("\n")}\n`;
}
