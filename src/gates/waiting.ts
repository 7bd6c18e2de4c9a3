/**
 * Why a queued task is not being claimed: the first gate that holds it,
 * with the detail. Computed when a task is read, from the same facts the
 * claim query filters on (the repository's row, the operator's pauses, the
 * live leases, the task's backoff and blockers, the registered workers), so
 * it is never stale and never disagrees with the query.
 */
import type { Pause, Repo, Task } from "../store/generated/sqlite/client.js";
import { parseJson } from "../apply/views.js";
import { EVERYWHERE } from "./repos.js";
import type { GateQueries } from "./queries.js";

export type Gate =
  | "deliveries"
  | "paused"
  | "access"
  | "config-invalid"
  | "config-unread"
  | "breaker"
  | "blocked-by"
  | "blockers-unread"
  | "backoff"
  | "no-worker"
  | "repo-limit"
  | "org-limit";

export interface WaitingFor {
  gate: Gate;
  detail: string;
  /** When the gate opens by itself (backoff, breaker cool-down). */
  until?: string;
}

export interface GateFacts {
  now: Date;
  /** The repository's row; null: its configuration was not read yet. */
  repo: Pick<
    Repo,
    | "configProblems"
    | "paused"
    | "dispatch"
    | "maxPerRepo"
    | "maxPerOrg"
    | "breakerClass"
    | "breakerUntil"
    | "breakerRuns"
    | "breakerWhy"
    | "probeRunId"
    | "owner"
    | "access"
  > | null;
  /** The operator's pause that covers the repository, if any. */
  pause: Pick<Pause, "scope" | "reason" | "by"> | null;
  liveInRepo: number;
  liveInOrg: number;
  /** Some registered worker may claim in this repository. */
  workerCovers: boolean;
  /** The installation's webhook deliveries failed and are being recovered. */
  deliveriesFailing?: boolean;
}

type TaskGates = Pick<Task, "state" | "repo" | "backoffUntil" | "blockedBy" | "blockersAt" | "diagnostic"> & {
  installationId?: number;
};

/** The first gate that keeps a queued task from being claimed, or null (claimable, or not queued). */
export function waitingFor(task: TaskGates, f: GateFacts): WaitingFor | null {
  if (task.state !== "queued") return null;
  if (f.deliveriesFailing)
    return {
      gate: "deliveries",
      detail:
        "webhook deliveries to this installation failed and are being redelivered; " +
        "claims wait so work is not handed out on stale input",
    };
  if (f.pause)
    return {
      gate: "paused",
      detail:
        `${f.pause.scope === EVERYWHERE ? "Orchestra is" : `${task.repo} is`} ` +
        `paused by ${f.pause.by}: ${f.pause.reason}`,
    };
  const r = f.repo;
  if (!r)
    return {
      gate: "config-unread",
      detail: `${task.repo}'s .github/orchestra.yml has not been read yet; the next sweep reads it`,
    };
  if (r.access !== null)
    return {
      gate: "access",
      detail:
        r.access === "removed"
          ? `${task.repo} was removed from the App's installation; its tasks resume when it is added back`
          : "the App's installation is suspended; its tasks resume when it is unsuspended",
    };
  if (r.configProblems !== null)
    return {
      gate: "config-invalid",
      detail: `.github/orchestra.yml is invalid: ${(parseJson<string[]>(r.configProblems) ?? []).join("; ")}`,
    };
  if (r.paused) return { gate: "paused", detail: `${task.repo} is paused (paused: true in .github/orchestra.yml)` };
  if (r.breakerUntil) {
    const runs = parseJson<string[]>(r.breakerRuns) ?? [];
    if (r.breakerUntil > f.now && r.breakerWhy !== null)
      return {
        gate: "breaker",
        detail:
          `breaker open: GitHub refuses every dispatch here (${r.breakerWhy}); ` +
          "one task is dispatched as a probe after the cool-down",
        until: r.breakerUntil.toISOString(),
      };
    if (r.breakerUntil > f.now) {
      return {
        gate: "breaker",
        detail:
          `breaker open: ${runs.length} runs ended ${r.breakerClass} ` +
          `(${runs.join(", ")}); one probe run is claimed after the cool-down`,
        until: r.breakerUntil.toISOString(),
      };
    }
    if (r.probeRunId)
      return {
        gate: "breaker",
        detail: `breaker half-open: waiting on probe run ${r.probeRunId} (it tripped on ${r.breakerClass})`,
      };
  }
  const blockers = parseJson<string[]>(task.blockedBy);
  if (blockers && blockers.length > 0)
    return {
      gate: "blocked-by",
      detail: `blocked by open issue${blockers.length > 1 ? "s" : ""} ${blockers.join(", ")}`,
    };
  if (task.blockersAt === null)
    return {
      gate: "blockers-unread",
      detail: "the issues blocking it have not been read from GitHub yet; the sweep reads them",
    };
  if (task.backoffUntil && task.backoffUntil > f.now)
    return {
      gate: "backoff",
      detail: task.diagnostic ?? "backing off after a failure",
      until: task.backoffUntil.toISOString(),
    };
  if (!r.dispatch && !f.workerCovers)
    return {
      gate: "no-worker",
      detail: `no registered worker may claim in ${task.repo}; register one with repos including it (or none, for all)`,
    };
  if (f.liveInRepo >= r.maxPerRepo)
    return {
      gate: "repo-limit",
      detail: `${task.repo} has ${f.liveInRepo} of ${r.maxPerRepo} live leases (limits.maxConcurrentPerRepo)`,
    };
  if (f.liveInOrg >= r.maxPerOrg)
    return {
      gate: "org-limit",
      detail: `${r.owner} has ${f.liveInOrg} of ${r.maxPerOrg} live leases (limits.maxConcurrentPerOrg)`,
    };
  return null;
}

/**
 * Reads the facts for a list of tasks in a few queries and answers each one's gate.
 * `queries`: the gates' queries (gates/queries.ts).
 */
export async function waitingForAll(
  queries: Pick<GateQueries, "waitingFacts">,
  tasks: TaskGates[],
  now: Date,
  deliveriesWaiting: Set<number> = new Set(),
): Promise<Map<TaskGates, WaitingFor | null>> {
  const out = new Map<TaskGates, WaitingFor | null>();
  const queued = tasks.filter((t) => t.state === "queued");
  for (const t of tasks) out.set(t, null);
  if (queued.length === 0) return out;
  const repoIds = [...new Set(queued.map((t) => t.repo))];
  const { repos, pauses, live, workers } = await queries.waitingFacts(repoIds);
  const repoOf = new Map(repos.map((r) => [r.id, r]));
  const pauseOf = new Map(pauses.map((p) => [p.scope, p]));
  const liveRepo = new Map(live.map((l) => [l.repo, l._count._all]));
  const liveOwner = new Map<string, number>();
  for (const [repo, n] of liveRepo) liveOwner.set(repo.split("/")[0]!, (liveOwner.get(repo.split("/")[0]!) ?? 0) + n);
  const covered = (repo: string) =>
    workers.some((w) => w.repos === null || (parseJson<string[]>(w.repos) ?? []).includes(repo));
  for (const t of queued) {
    const owner = t.repo.split("/")[0]!;
    out.set(
      t,
      waitingFor(t, {
        now,
        repo: repoOf.get(t.repo) ?? null,
        pause: pauseOf.get(EVERYWHERE) ?? pauseOf.get(t.repo) ?? null,
        liveInRepo: liveRepo.get(t.repo) ?? 0,
        liveInOrg: liveOwner.get(owner) ?? 0,
        workerCovers: covered(t.repo),
        deliveriesFailing: t.installationId !== undefined && deliveriesWaiting.has(t.installationId),
      }),
    );
  }
  return out;
}

/** A read reused for `ms` (the claim path asks on every claim). */
export function cachedFor<T>(ms: number, clock: { now(): Date }, read: () => Promise<T>): () => Promise<T> {
  let at = -Infinity;
  let value: Promise<T> | null = null;
  return () => {
    const now = clock.now().getTime();
    if (!value || now - at >= ms) {
      at = now;
      value = read().catch((err: unknown) => {
        value = null;
        throw err;
      });
    }
    return value;
  };
}
