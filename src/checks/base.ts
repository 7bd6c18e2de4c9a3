/**
 * The base branch moved under open task PRs (a `push` to it). One GraphQL
 * query reads the mergeability of every open PR into that base (100 per
 * query); `UNKNOWN` — GitHub still computing — is asked again a bounded
 * number of times. A conflicting task PR goes back to its agent with a
 * `rebase` continuation (same branch, same PR); a PR that is only behind gets
 * GitHub's update-branch when `updateBranch` says so — by default only the
 * one next in line that is clean, green and not waiting on a review, so a
 * push does not restart CI on every open PR.
 */
import type { Logger } from "pino";
import { repoRef, type GitHub, type PullMergeability } from "../github/port.js";
import type { Tasks } from "../apply/tasks.js";
import type { ConfigResult, RepoConfig } from "../config/repo.js";
import type { ChecksQueries } from "./queries.js";
import { setTimeout as sleep } from "node:timers/promises";

export type BaseGitHub = Pick<GitHub, "openPullsInto">;

/** How often mergeability still UNKNOWN is read again, and how long to wait between reads. */
export const UNKNOWN_RETRIES = 2;

export type BaseAction = { pr: PullMergeability; mergeable: "behind" | "conflicting" };

/** Whether a PR only behind its base may get update-branch now (pure). */
export function readyToUpdate(p: PullMergeability): boolean {
  return (
    p.mergeState === "BEHIND" &&
    !p.isDraft &&
    p.checks === "SUCCESS" &&
    p.reviewDecision !== "CHANGES_REQUESTED" &&
    p.reviewDecision !== "REVIEW_REQUIRED"
  );
}

/**
 * What a base push means for the task PRs into it (pure): conflicting ones
 * are rebased by their agents; behind ones are updated per `updateBranch`
 * (`ready`: the first ready one, oldest PR first; `always`: every behind
 * one; `never`: none).
 */
export function baseActions(pulls: PullMergeability[], updateBranch: RepoConfig["updateBranch"]): BaseAction[] {
  const ordered = [...pulls].sort((a, b) => a.number - b.number);
  const out: BaseAction[] = ordered
    .filter((p) => p.mergeable === "CONFLICTING" || p.mergeState === "DIRTY")
    .map((pr) => ({ pr, mergeable: "conflicting" as const }));
  const behind = ordered.filter((p) => p.mergeable !== "CONFLICTING" && p.mergeState === "BEHIND");
  if (updateBranch === "always") out.push(...behind.map((pr) => ({ pr, mergeable: "behind" as const })));
  if (updateBranch === "ready") {
    const next = behind.find(readyToUpdate);
    if (next) out.push({ pr: next, mergeable: "behind" });
  }
  return out;
}

export interface BaseMovesDeps {
  queries: Pick<ChecksQueries, "inReview">;
  tasks: Tasks;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  log: Logger;
  /** Waits before mergeability still UNKNOWN is read again (tests pass a shorter one). */
  wait?: (ms: number) => Promise<void>;
  unknownDelayMs?: number;
}

export class BaseMoves {
  constructor(readonly deps: BaseMovesDeps) {}

  /** A push to `branch` of `repo`; answers how many task PRs were acted on. */
  async onPush(github: BaseGitHub, installationId: number, repo: string, branch: string): Promise<number> {
    // No task PR in review here: no GitHub call at all.
    const tasks = await this.deps.queries.inReview(repo);
    if (tasks.length === 0) return 0;
    const taskOf = new Map(tasks.map((t) => [t.prNumber!, t.id]));
    const cfg = await this.deps.configs.get(installationId, repo);
    if (!cfg.ok) return 0;
    const r = repoRef(repo);
    let pulls = (await github.openPullsInto(r, branch)).filter((p) => taskOf.has(p.number) && p.headRepo === repo);
    // GitHub computes mergeability after a push; ask again, a bounded number of times.
    for (let i = 0; i < UNKNOWN_RETRIES && pulls.some((p) => p.mergeable === "UNKNOWN"); i++) {
      await (this.deps.wait ?? sleep)(this.deps.unknownDelayMs ?? 2_000);
      const again = new Map((await github.openPullsInto(r, branch)).map((p) => [p.number, p]));
      pulls = pulls.map((p) => (p.mergeable === "UNKNOWN" ? (again.get(p.number) ?? p) : p));
    }
    const unknown = pulls.filter((p) => p.mergeable === "UNKNOWN").map((p) => p.number);
    if (unknown.length)
      this.deps.log.info(
        { repo, base: branch, prs: unknown },
        "mergeability still unknown after re-reading; the next push or reconcile looks again",
      );
    let acted = 0;
    for (const a of baseActions(pulls, cfg.config.updateBranch)) {
      const r2 = await this.deps.tasks.raise(
        { taskId: taskOf.get(a.pr.number)! },
        {
          kind: "base-moved",
          pr: { number: a.pr.number, headSha: a.pr.headSha },
          mergeable: a.mergeable,
          baseSha: a.pr.baseSha,
        },
      );
      if (r2.outcome === "applied" || r2.outcome === "unchanged") acted++;
    }
    return acted;
  }
}
