/**
 * `orchestra status`: one screen of what needs an operator, assembled from
 * the existing API calls (nothing here is computed that the API does not
 * say): the queue by repository with why tasks wait, live leases, blocked and
 * failed tasks, parked deliveries and effects, retrying deliveries, failing
 * reconcile scopes, pauses, GitHub's rate limit per installation, and the
 * replicas beating.
 */
import type { TaskRow } from "./tasks.js";
import { when } from "./io.js";

export interface StatusAnswer {
  queued: TaskRow[];
  claimed: TaskRow[];
  blocked: TaskRow[];
  failed: TaskRow[];
  deliveries: {
    summary: Record<string, number>;
    deliveries: Array<{
      deliveryId: string;
      event: string;
      action: string | null;
      state: string;
      errors: Array<{ message: string }>;
    }>;
  };
  effects: {
    counts: Record<string, number>;
    effects: Array<{ id: string; task: string | null; kind: string; errors: Array<{ message: string }> }>;
  };
  sweeps: { failing: Record<string, { since: string; runs: number; error: string; escalatedAt?: string | null }> };
  pause: { paused: Array<{ scope: string; reason: string; by: string; at: string }> };
  github: {
    rateLimits: Array<{
      installation: number;
      remaining: number;
      limit: number | null;
      resetAt: string | null;
      seenAt: string;
    }>;
    callsPerHour: Array<{ hour: string; reads: number; writes: number }>;
  };
  replicas: { self: string; replicas: Array<{ id: string; beatAgoSeconds: number; startedAt: string }> };
}

/** The API calls `status` makes, by the key of its answer. */
export const STATUS_CALLS: Record<keyof StatusAnswer, string> = {
  queued: "/api/v1/tasks?state=queued",
  claimed: "/api/v1/tasks?state=claimed",
  blocked: "/api/v1/tasks?state=blocked",
  failed: "/api/v1/tasks?state=failed",
  deliveries: "/api/v1/deliveries?state=parked&limit=20",
  effects: "/api/v1/effects?state=parked&limit=20",
  sweeps: "/api/v1/sweeps?limit=1",
  pause: "/api/v1/pause",
  github: "/api/v1/github",
  replicas: "/api/v1/replicas",
};

/** How many of the first waiting reasons of a repository's queue to show. */
const REASONS = 3;

const lastError = (errors: Array<{ message: string }>) => errors[errors.length - 1]?.message ?? "";

export function statusText(s: StatusAnswer): string {
  const lines: string[] = [];
  const byRepo = new Map<string, TaskRow[]>();
  for (const t of s.queued) byRepo.set(t.repo, [...(byRepo.get(t.repo) ?? []), t]);
  lines.push(
    `queue: ${s.queued.length} queued task(s)` +
      `${byRepo.size ? ` in ${byRepo.size} repositor${byRepo.size === 1 ? "y" : "ies"}` : ""}`,
  );
  for (const [repo, tasks] of [...byRepo].sort(([a], [b]) => a.localeCompare(b))) {
    const waiting = tasks.filter((t) => t.waitingFor);
    lines.push(`  ${repo}  ${tasks.length} queued, ${waiting.length} waiting`);
    for (const t of waiting.slice(0, REASONS))
      lines.push(`    #${t.issue} waits for ${t.waitingFor!.gate}: ${t.waitingFor!.detail}`);
    if (waiting.length > REASONS)
      lines.push(`    … ${waiting.length - REASONS} more (orchestra tasks --repo ${repo} --state queued)`);
  }
  if (s.pause.paused.length)
    lines.push(`paused: ${s.pause.paused.map((p) => `${p.scope} (by ${p.by}: ${p.reason})`).join("; ")}`);
  lines.push(`live leases: ${s.claimed.length}`);
  for (const t of s.claimed)
    lines.push(`  ${t.id}  ${t.repo}#${t.issue}  attempt ${t.attempt}  (orchestra task ${t.id} for its lease)`);
  for (const [name, tasks] of [
    ["blocked", s.blocked],
    ["failed", s.failed],
  ] as const) {
    lines.push(`${name}: ${tasks.length}`);
    for (const t of tasks) lines.push(`  ${t.id}  ${t.repo}#${t.issue}${t.diagnostic ? `  ${t.diagnostic}` : ""}`);
  }
  const summary = s.deliveries.summary;
  lines.push(
    `deliveries: ${summary["parked"] ?? 0} parked, ${summary["retrying"] ?? 0} retrying, ` +
      `${summary["pending"] ?? 0} pending`,
  );
  for (const d of s.deliveries.deliveries)
    lines.push(
      `  parked ${d.deliveryId}  ${d.event}${d.action ? `.${d.action}` : ""}  ${lastError(d.errors)}  ` +
        `(orchestra replay ${d.deliveryId})`,
    );
  lines.push(`effects: ${s.effects.counts["parked"] ?? 0} parked, ${s.effects.counts["pending"] ?? 0} pending`);
  for (const e of s.effects.effects)
    lines.push(
      `  parked ${e.id}  ${e.kind}  task=${e.task ?? "-"}  ${lastError(e.errors)}  (orchestra effects replay ${e.id})`,
    );
  const failing = Object.entries(s.sweeps.failing);
  lines.push(`failing reconcile scopes: ${failing.length}`);
  for (const [scope, f] of failing)
    lines.push(`  ${scope}  ${f.runs} run(s) since ${when(f.since)}${f.escalatedAt ? "  escalated" : ""}  ${f.error}`);
  const hour = s.github.callsPerHour.at(-1);
  lines.push(`GitHub calls this hour: ${hour ? `${hour.reads} read(s), ${hour.writes} write(s)` : "none counted"}`);
  lines.push(
    `rate limit: ${
      s.github.rateLimits.length
        ? `${s.github.rateLimits.length} installation(s)`
        : "not seen yet (no GitHub answer since the service started)"
    }`,
  );
  for (const r of s.github.rateLimits)
    lines.push(
      `  installation ${r.installation}  ${r.remaining}${r.limit === null ? "" : `/${r.limit}`} left` +
        `${r.resetAt ? `, resets ${when(r.resetAt)}` : ""}  (seen ${when(r.seenAt)})`,
    );
  lines.push(`replicas: ${s.replicas.replicas.length} beating`);
  for (const r of s.replicas.replicas)
    lines.push(
      `  ${r.id}  last beat ${r.beatAgoSeconds} s ago, up since ${when(r.startedAt)}` +
        (r.id === s.replicas.self ? "  (answered this)" : ""),
    );
  return `${lines.map((l) => l.trimEnd()).join("\n")}\n`;
}
