// What a fleet run comes to, in the figures users feel: tasks per hour per installation, GitHub calls per
// task by route, how far the interlock label trails its claim, how long the labels take to converge after
// the last merge, and double claims (must be 0).
import type { RecordedRequest } from "../../test/fake-github/http.js";
import type { ScenarioRaw } from "./scenario.js";
import { backlogRequests } from "./backlog.js";

const ISSUE_PATH = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)(\/labels(\/.*)?)?$/;

export interface Summary {
  name: string;
  replicas: number;
  tasks: number;
  workers: number;
  /** GitHub writes waiting in the outbox when the issues were queued; their requests are not counted per task. */
  backlog: number;
  /** How long the stand-in agent worked on each task. */
  agentSeconds: number;
  tasksPerHourPerInstallation: number;
  claimsPerSecond: number;
  /** REST and GraphQL calls (what GitHub's rate limits count), per task. */
  callsPerTask: number;
  callsPerTaskByRoute: Record<string, number>;
  /** git fetches and pushes over smart HTTP, per task (not counted against the API's rate limit). */
  gitPerTask: Record<string, number>;
  /**
   * From a task's first claim to the first label write that stops GitHub saying it is queued (the owner's
   * label on, or the queue label off); a task whose labels never said so counts until the labels converged.
   */
  interlockLagMs: { p50: number; p99: number; max: number };
  /** Tasks whose claim was never told on GitHub before they were done. */
  interlockNeverWritten: number;
  labelsConvergedAfterLastMergeMs: number;
  /** From the last merge until no GitHub write was pending (the backlog's included). */
  outboxDrainedAfterLastMergeMs: number;
  doubleClaims: number;
  restartReadyMs: number | null;
  /** How long after the kill another replica released what the killed one held (its beat stood still). */
  takeover: ScenarioRaw["takeover"];
  violations: number;
}

const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

type LabelWrite = { issue: number; adds: string[]; removes: string[]; set: boolean };

/** GraphQL label swaps (labels on, others off, named by node ids, issue `i` in `$issue<i>`), read by name. */
function swapWrites(r: RecordedRequest, nodes: ScenarioRaw["nodes"]): LabelWrite[] {
  if (r.graphql?.operationName !== "SwapLabels") return [];
  const v = r.graphql.variables;
  const names = (ids: unknown) => (Array.isArray(ids) ? ids.map((id) => nodes.labels[String(id)] ?? String(id)) : []);
  const writes: LabelWrite[] = [];
  for (let i = 0; typeof v[`issue${i}`] === "string"; i++) {
    const issue = nodes.issues[v[`issue${i}`] as string];
    if (issue !== undefined)
      writes.push({ issue, adds: names(v[`add${i}`]), removes: names(v[`remove${i}`]), set: false });
  }
  return writes;
}

/** What a request does to issues' labels: one write for a REST call, one per swap for a GraphQL one. */
export function labelWrites(r: RecordedRequest, nodes: ScenarioRaw["nodes"]): LabelWrite[] {
  if (r.path === "/graphql") return swapWrites(r, nodes);
  const w = restWrite(r);
  return w ? [w] : [];
}

function restWrite(r: RecordedRequest): LabelWrite | null {
  const m = ISSUE_PATH.exec(r.path);
  if (!m || r.method === "GET") return null;
  const body = r.body as { labels?: unknown } | unknown[] | null;
  const labels = Array.isArray(body) ? body : Array.isArray(body?.labels) ? body.labels : null;
  if (!m[2] && !labels) return null;
  const names = (labels ?? []).map((l) => (typeof l === "string" ? l : String((l as { name?: unknown }).name)));
  if (r.method === "DELETE")
    return { issue: Number(m[1]), adds: [], removes: m[3] ? [decodeURIComponent(m[3].slice(1))] : [], set: false };
  return { issue: Number(m[1]), adds: names, removes: [], set: r.method === "PUT" || !m[2] };
}

/** Whether GitHub stops saying "queued" with this write: the owner's label goes on, or the queue label comes off. */
const tellsOwnership = (w: LabelWrite): boolean =>
  w.adds.includes("agent:in-progress") ||
  w.adds.includes("agent:review") ||
  w.removes.includes("agent:queued") ||
  (w.set && !w.adds.includes("agent:queued"));

export function summarize(raw: ScenarioRaw): Summary {
  const n = raw.config.tasks;
  const lastMerge = Math.max(...raw.merges);
  const isGit = (r: RecordedRequest) => r.operationId?.startsWith("git:") === true;
  const backlog = backlogRequests(raw.requests);
  const api = raw.requests.filter((r) => !isGit(r) && !backlog.has(r));
  const perTask = (rs: RecordedRequest[]): Record<string, number> => {
    const byRoute: Record<string, number> = {};
    for (const r of rs) {
      const key = r.route ?? r.operationId ?? `${r.method} ${r.path}`;
      byRoute[key] = (byRoute[key] ?? 0) + 1;
    }
    return Object.fromEntries(
      Object.entries(byRoute)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, Math.round((v / n) * 100) / 100]),
    );
  };
  const interlock = new Map<number, number>();
  let lastLabelWrite = 0;
  for (const r of raw.requests)
    for (const w of labelWrites(r, raw.nodes)) {
      lastLabelWrite = Math.max(lastLabelWrite, r.at);
      const claimed = raw.claims.get(w.issue);
      if (claimed !== undefined && r.at >= claimed && tellsOwnership(w) && !interlock.has(w.issue))
        interlock.set(w.issue, r.at);
    }
  const lags: number[] = [];
  for (const [issue, claimed] of raw.claims) {
    // A claim whose labels never told GitHub (the task was done first) trails until the labels converged.
    lags.push(Math.max(0, (interlock.get(issue) ?? raw.labelsConvergedAt) - claimed));
  }
  const claims = [...raw.claims.values()];
  const claimSpan = (Math.max(...claims) - Math.min(...claims)) / 1000;
  return {
    name: raw.config.name,
    replicas: raw.config.replicas,
    tasks: n,
    workers: raw.config.workers,
    backlog: raw.config.backlog,
    agentSeconds: raw.config.agentSeconds,
    tasksPerHourPerInstallation: Math.round(n / ((lastMerge - raw.queuedAt) / 3_600_000)),
    claimsPerSecond: claimSpan > 0 ? Math.round((claims.length / claimSpan) * 100) / 100 : NaN,
    callsPerTask: Math.round((api.length / n) * 10) / 10,
    callsPerTaskByRoute: perTask(api),
    gitPerTask: perTask(raw.requests.filter(isGit)),
    interlockLagMs: { p50: quantile(lags, 0.5), p99: quantile(lags, 0.99), max: Math.max(...lags) },
    interlockNeverWritten: [...raw.claims.keys()].filter((i) => !interlock.has(i)).length,
    labelsConvergedAfterLastMergeMs: Math.max(0, Math.max(lastLabelWrite, raw.labelsConvergedAt) - lastMerge),
    outboxDrainedAfterLastMergeMs: Math.max(0, raw.convergedAt - lastMerge),
    doubleClaims: raw.doubleClaims.length,
    restartReadyMs: raw.restartReadyMs,
    takeover: raw.takeover,
    violations: raw.violations.length,
  };
}

/** One line per scenario, then the routes of the first one. */
export function render(summaries: Summary[]): string {
  const lines = summaries.map(
    (s) =>
      `${s.name.padEnd(9)} ${s.replicas} replica(s) ${s.tasks} tasks ${s.workers} workers` +
      (s.agentSeconds ? ` (agents ${s.agentSeconds} s a task)` : "") +
      (s.backlog ? ` behind ${s.backlog} pending writes` : "") +
      ": " +
      `${s.tasksPerHourPerInstallation} tasks/h/installation, ${s.claimsPerSecond} claims/s, ` +
      `${s.callsPerTask} GitHub calls/task, interlock label lag p50 ${s.interlockLagMs.p50} ms ` +
      `p99 ${s.interlockLagMs.p99} ms (${s.interlockNeverWritten} claims never on GitHub), labels converged ${(s.labelsConvergedAfterLastMergeMs / 1000).toFixed(1)} s ` +
      `after the last merge (outbox drained after ${(s.outboxDrainedAfterLastMergeMs / 1000).toFixed(1)} s), ` +
      `${s.doubleClaims} double claims` +
      (s.restartReadyMs === null ? "" : `, killed replica ready again in ${s.restartReadyMs} ms`) +
      (s.takeover
        ? `, what it held released ${s.takeover.afterKillMs} ms after the kill ` +
          `(${s.takeover.deliveries} deliveries, ${s.takeover.effects} effects)`
        : s.restartReadyMs === null
          ? ""
          : ", nothing it held was released (it held nothing, or its leases ran out first)") +
      (s.violations ? `, ${s.violations} requests outside GitHub's description` : ""),
  );
  for (const s of summaries) {
    lines.push("", `${s.name}: GitHub calls per task by route`);
    for (const [route, v] of Object.entries(s.callsPerTaskByRoute)) lines.push(`  ${String(v).padStart(6)}  ${route}`);
    const git = Object.entries(s.gitPerTask).map(([op, v]) => `${v} ${op.slice(4)}`);
    lines.push(`  git over HTTP per task (not rate-limited): ${git.join(", ") || "none"}`);
  }
  return lines.join("\n");
}
