/**
 * `orchestra runs`: runs across tasks, newest first, from GET /api/v1/runs:
 * which worker ran which issue, how the run ended, its class and recovery,
 * and the evidence in one line (`orchestra task <id>` has it whole).
 */
import { table, when } from "./io.js";

export interface RunRow {
  id: string;
  task: { id: string; repo: string | null; issue: number | null };
  attempt: number;
  state: string;
  mode: string;
  workerId: string | null;
  workerName: string | null;
  startedAt: string;
  endedAt: string | null;
  endReason: string | null;
  prNumber: number | null;
  class: string | null;
  recovery: string | null;
  evidence: unknown;
  errors: Array<{ message?: string }>;
}

export interface RunsAnswer {
  runs: RunRow[];
  limit: number;
}

/** How long a run took (or has been running, up to `now`): 45s, 12m05s, 3h20m, 2d04h. */
export function duration(fromIso: string, toIso: string | null, now: Date): string {
  const ms = (toIso ? new Date(toIso).getTime() : now.getTime()) - new Date(fromIso).getTime();
  const s = Math.max(0, Math.round(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${pad(Math.floor((s % 86_400) / 3600))}h`;
}

/** The evidence's own one-line reason (`why`), else the run's last error, cut for a terminal. */
export function shortEvidence(r: Pick<RunRow, "evidence" | "errors">, width = 80): string {
  const why = r.evidence && typeof r.evidence === "object" ? (r.evidence as { why?: unknown }).why : undefined;
  const text = typeof why === "string" ? why : (r.errors[r.errors.length - 1]?.message ?? "");
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** The run's state, with why it ended unless that only repeats it ("exited 1 without a pull request"). */
export const outcome = (r: Pick<RunRow, "state" | "endReason">): string =>
  !r.endReason ? r.state : r.endReason.startsWith(r.state) ? r.endReason : `${r.state}: ${r.endReason}`;

export function runsText(a: RunsAnswer, now = new Date()): string {
  if (a.runs.length === 0) return "no runs\n";
  const rows = a.runs.map((r) => [
    r.id,
    r.task.repo === null ? r.task.id : `${r.task.repo}#${r.task.issue}`,
    r.mode === "dispatch" ? "(dispatch)" : (r.workerName ?? r.workerId ?? "-"),
    outcome(r),
    r.class ?? "-",
    r.recovery ?? "-",
    when(r.startedAt),
    r.endedAt ? duration(r.startedAt, r.endedAt, now) : `${duration(r.startedAt, null, now)} so far`,
    shortEvidence(r),
  ]);
  const more = a.runs.length === a.limit ? `(the newest ${a.limit}; --limit shows more)\n` : "";
  return table(["RUN", "TASK", "WORKER", "STATE", "CLASS", "RECOVERY", "STARTED", "TOOK", "EVIDENCE"], rows) + more;
}
