/**
 * Reconciliation wired as one room: missed deliveries (read as the App
 * itself), drift repair on its schedule with its failure streaks, and the
 * stale-branch listing. The entry only calls this.
 */
import type { Logger } from "pino";
import type { ProbotOctokit } from "probot";
import type { ReconcileQueries } from "./queries.js";
import type { GitHubFor } from "../github/port.js";
import type { Tasks } from "../apply/tasks.js";
import type { ConfigResult } from "../config/repo.js";
import type { PermissionCache } from "../trust/permissions.js";
import { octokitAppHooks, octokitAppInstallations } from "../github/app-hooks.js";
import { MissedDeliveries } from "./deliveries.js";
import { Reconciler, type ReconcileDeps } from "./drift.js";
import { ReconcileSchedule } from "./schedule.js";
import { FailureStreaks } from "./failing.js";
import { StaleBranches } from "./branches.js";
import type { FleetIssues } from "../fleet/issues.js";

export interface ReconcileRoomDeps {
  queries: ReconcileQueries;
  tasks: Tasks;
  githubFor: GitHubFor;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  permissions: PermissionCache;
  /** An octokit authenticated as the App (its JWT), for its delivery log and installations. */
  appAuth: () => Promise<InstanceType<typeof ProbotOctokit>>;
  /** The fleet issues: refreshed by each reconcile, never queued as tasks. */
  fleet?: Pick<FleetIssues, "isFleetIssue">;
  /** What deliveries said of issues' labels: forgotten where reconcile finds drift. */
  seen?: ReconcileDeps["seen"];
  dryRun: boolean;
  clock: { now(): Date };
  log: Logger;
  reconcileEveryMs?: number;
  /** Redeliveries asked of GitHub per missed-deliveries sweep (default 50). */
  redeliveriesPerSweep?: number;
  afterLabelsRead?: ReconcileDeps["afterLabelsRead"];
}

export function reconcileRoom(d: ReconcileRoomDeps) {
  const { queries, clock, log } = d;
  const deliveries = new MissedDeliveries({
    queries,
    hooks: octokitAppHooks(d.appAuth),
    clock,
    log,
    dryRun: d.dryRun,
    ...(d.redeliveriesPerSweep ? { limits: { redeliveries: d.redeliveriesPerSweep } } : {}),
  });
  const streaks = new FailureStreaks(queries, clock, log);
  const reconciler = new Reconciler({
    queries,
    tasks: d.tasks,
    githubFor: d.githubFor,
    configs: d.configs,
    permissions: d.permissions,
    installations: octokitAppInstallations(d.appAuth),
    clock,
    log,
    streaks,
    dryRun: d.dryRun,
    ...(d.fleet ? { fleet: d.fleet } : {}),
    ...(d.seen ? { seen: d.seen } : {}),
    ...(d.afterLabelsRead ? { afterLabelsRead: d.afterLabelsRead } : {}),
  });
  const schedule = new ReconcileSchedule(reconciler, clock, d.reconcileEveryMs ?? 5 * 60_000);
  const branches = new StaleBranches({ queries, githubFor: d.githubFor, configs: d.configs, clock });
  return { deliveries, streaks, reconciler, schedule, branches };
}
