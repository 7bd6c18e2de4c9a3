/**
 * `orchestra pause | unpause | sweeps | branches`: the service-wide switches
 * and what the sweeps found, over POST /api/v1/pause, GET /api/v1/sweeps and
 * GET /api/v1/branches.
 */
import { table, when } from "./io.js";

export interface PauseAnswer {
  scope: string;
  paused: boolean;
  changed: boolean;
  all: Array<{ scope: string; reason: string; by: string; at: string }>;
}

export function pauseText(a: PauseAnswer): string {
  const what = a.scope === "all" ? "Orchestra (every repository)" : a.scope;
  const head = a.paused
    ? `${what} ${a.changed ? "paused" : "was already paused"}: ` +
      `nothing new is claimed or dispatched there; reconcile and classification go on`
    : `${what} ${a.changed ? "resumed" : "was not paused"}`;
  const rest = a.all.length
    ? a.all.map((p) => `  ${p.scope}  since ${when(p.at)}  by ${p.by}: ${p.reason}`)
    : ["  nothing is paused"];
  return `${head}\npaused now:\n${rest.join("\n")}\n`;
}

export interface SweepsAnswer {
  failing: Record<string, { since: string; runs: number; error: string; escalatedAt?: string | null }>;
  reports: Array<{ kind: string; at: string; installationId: number | null; counts: Record<string, number> }>;
}

export function sweepsText(a: SweepsAnswer): string {
  const failing = Object.entries(a.failing);
  const lines = [failing.length ? `failing: ${failing.length} scope(s)` : "failing: none"];
  for (const [scope, f] of failing)
    lines.push(
      `  ${scope}  ${f.runs} run(s) since ${when(f.since)}` +
        `${f.escalatedAt ? `  escalated ${when(f.escalatedAt)}` : ""}  ${f.error}`,
    );
  if (a.reports.length === 0) return `${lines.join("\n")}\nno sweep reports yet\n`;
  const counts = (c: Record<string, number>) =>
    Object.entries(c)
      .filter(([, v]) => v !== 0)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ") || "nothing to do";
  return `${lines.join("\n")}\n${table(
    ["AT", "KIND", "INSTALLATION", "COUNTS"],
    a.reports.map((r) => [
      when(r.at),
      r.kind,
      r.installationId === null ? "-" : String(r.installationId),
      counts(r.counts),
    ]),
  )}`;
}

export interface BranchesAnswer {
  repo: string;
  staleDays: number;
  prefix: string;
  stale: number;
  branches: Array<{
    name: string;
    sha: string;
    committedAt: string | null;
    task: string | null;
    pullRequests: number;
    stale: boolean;
    why: string;
  }>;
}

export function branchesText(a: BranchesAnswer): string {
  const head =
    `${a.repo}: ${a.branches.length} branch(es) under ${a.prefix}, ${a.stale} stale ` +
    `(older than ${a.staleDays} days; listed, never deleted)\n`;
  if (a.branches.length === 0) return head;
  return (
    head +
    table(
      ["BRANCH", "SHA", "COMMITTED", "TASK", "PRS", "STALE", "WHY"],
      a.branches.map((b) => [
        b.name,
        b.sha.slice(0, 7),
        when(b.committedAt),
        b.task ?? "-",
        String(b.pullRequests),
        b.stale ? "yes" : "no",
        b.why,
      ]),
    )
  );
}
