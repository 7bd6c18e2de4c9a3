/**
 * Agent branches nobody owns. A branch under the repository's branchPrefix
 * with no task that ran on it, no pull request of any state, and no commit
 * for `staleDays` is listed for the operator, with why. Nothing here deletes:
 * such a branch may hold the only copy of an agent's work (commits no pull
 * request has), and only a person can tell whether it is worth keeping.
 * Merged task branches are deleted by the `delete-merged-branch` effect.
 */
import type { ReconcileQueries } from "./queries.js";
import { repoRef, type BranchListing, type GitHubFor } from "../github/port.js";
import type { ConfigResult } from "../config/repo.js";

export interface BranchReport {
  name: string;
  sha: string;
  committedAt: string | null;
  task: string | null;
  pullRequests: number;
  stale: boolean;
  why: string;
}

/** The pure part: one branch's verdict. */
export function branchVerdict(
  b: BranchListing,
  task: string | null,
  now: Date,
  staleDays: number,
): { stale: boolean; why: string } {
  if (task) return { stale: false, why: `task ${task} ran on it` };
  if (b.pullRequests > 0)
    return { stale: false, why: `${b.pullRequests === 1 ? "a pull request uses" : "pull requests use"} it` };
  if (b.committedAt === null) return { stale: false, why: "its last commit's date is unknown" };
  const days = (now.getTime() - b.committedAt.getTime()) / 86_400_000;
  if (days < staleDays) return { stale: false, why: `last commit ${Math.floor(days)} day(s) ago` };
  return {
    stale: true,
    why:
      `no task, no pull request, last commit ${Math.floor(days)} days ago; ` +
      `review and delete it by hand if its commits are not needed`,
  };
}

export class StaleBranches {
  constructor(
    readonly deps: {
      queries: Pick<ReconcileQueries, "repoInstallation" | "taskInstallation" | "runsOnBranches" | "tasksIn">;
      githubFor: GitHubFor;
      configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
      clock: { now(): Date };
    },
  ) {}

  /** Null when Orchestra does not know the repository (no installation to ask with). */
  async list(repo: string, staleDays: number): Promise<{ prefix: string; branches: BranchReport[] } | null> {
    const { queries } = this.deps;
    const row = await queries.repoInstallation(repo);
    const installationId = row?.installationId ?? (await queries.taskInstallation(repo))?.installationId;
    if (installationId === undefined) return null;
    const cfg = await this.deps.configs.get(installationId, repo);
    const prefix = cfg.ok ? cfg.config.branchPrefix : "agent/";
    const gh = await this.deps.githubFor(installationId);
    const listing = await gh.branchesWithPrefix(repoRef(repo), prefix);
    const runs = await queries.runsOnBranches(listing.map((b) => b.name));
    const here = new Set(
      (
        await queries.tasksIn(
          repo,
          runs.map((r) => r.taskId),
        )
      ).map((t) => t.id),
    );
    const owner = new Map(runs.filter((r) => here.has(r.taskId)).map((r) => [r.branch, r.taskId]));
    const now = this.deps.clock.now();
    return {
      prefix,
      branches: listing.map((b) => {
        const task = owner.get(b.name) ?? null;
        return {
          name: b.name,
          sha: b.sha,
          committedAt: b.committedAt?.toISOString() ?? null,
          task,
          pullRequests: b.pullRequests,
          ...branchVerdict(b, task, now, staleDays),
        };
      }),
    };
  }
}
