/** Pull requests and reviews: the issues they close, merging, and what GitHub says of their mergeability. */
import { crossHead, headRepoOf } from "../forks.js";
import { reviewDecision, type NewReviewComment } from "../pull-reads.js";
import type { FakeState } from "../state.js";
import { ActionState } from "./actions.js";
import type { Repo } from "./repo.js";
import type { Mergeable, MergeStateStatus, Pull, Review } from "./types.js";

/** `fixes #12`, `Closes owner/repo#12` — GitHub's closing keywords. */
const CLOSING_RE = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:([\w.-]+\/[\w.-]+))?#(\d+)\b/gi;

export class PullState extends ActionState {
  /**
   * A pull request into `repoName`. `head` is a branch of it, created one
   * commit ahead of the base when missing; with `headRepo` (a fork in its
   * network, see addFork) it is that fork's branch, which must exist.
   */
  addPull(
    this: FakeState,
    repoName: string,
    opts: {
      head: string;
      headRepo?: string;
      base?: string;
      title?: string;
      body?: string | null;
      user?: string;
      draft?: boolean;
      number?: number;
      labels?: string[];
      conflicting?: boolean;
      state?: "open" | "closed";
    },
  ): Pull {
    const repo = this.repo(repoName);
    const base = opts.base ?? repo.defaultBranch;
    if (!repo.branches.has(base)) throw new Error(`fake GitHub: no base branch ${base}`);
    const headRepo = opts.headRepo ? crossHead(this, repo, opts.headRepo, opts.head) : repo;
    if (!headRepo.branches.has(opts.head)) this.addBranch(repoName, opts.head, { from: base, aheadBy: 1 });
    const issue = this.addIssue(repoName, {
      number: opts.number,
      title: opts.title ?? `Pull request from ${opts.head}`,
      body: opts.body ?? null,
      user: opts.user,
      labels: opts.labels,
      state: opts.state,
    });
    issue.isPull = true;
    issue.stateReason = null;
    const pr: Pull = {
      number: issue.number,
      id: this.nextId(),
      headRef: opts.head,
      ...(headRepo !== repo ? { headRepo: headRepo.fullName } : {}),
      headSha: headRepo.branches.get(opts.head)!,
      baseRef: base,
      draft: opts.draft ?? false,
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      maintainerCanModify: false,
      conflicting: opts.conflicting ?? false,
      mergeableOverride: null,
      mergeStateOverride: null,
      linkedIssues: [],
    };
    repo.pulls.set(pr.number, pr);
    // GitHub keeps each pull request's head as refs/pull/N/head (fetchable, as actions/checkout does)
    repo.git?.setRef(`refs/pull/${pr.number}/head`, pr.headSha);
    return pr;
  }

  pull(repoName: string, number: number): Pull {
    const p = this.repo(repoName).pulls.get(number);
    if (!p) throw new Error(`fake GitHub: no pull request ${repoName}#${number}`);
    return p;
  }

  setPullConflicting(repoName: string, number: number, conflicting = true): void {
    this.pull(repoName, number).conflicting = conflicting;
  }

  addReview(
    repoName: string,
    pullNumber: number,
    opts: { user: string; state: Review["state"]; body?: string; commitId?: string; comments?: NewReviewComment[] },
  ): Review {
    const repo = this.repo(repoName);
    const pr = this.pull(repoName, pullNumber);
    const r: Review = {
      id: this.nextId(),
      pullNumber,
      user: this.user(opts.user).login,
      state: opts.state,
      body: opts.body ?? "",
      commitId: opts.commitId ?? pr.headSha,
      submittedAt: this.now(),
    };
    repo.reviews.push(r);
    for (const c of opts.comments ?? []) {
      repo.reviewComments.push({
        id: this.nextId(),
        reviewId: r.id,
        pullNumber,
        path: c.path,
        line: c.line,
        originalLine: c.line ?? c.originalLine ?? 1,
        body: c.body,
        user: r.user,
        commitId: r.commitId,
        createdAt: r.submittedAt,
      });
    }
    return r;
  }

  /** Pull requests into `branch` need an approving review (branch protection): reviewDecision REVIEW_REQUIRED, merge state BLOCKED. */
  requireReviews(repoName: string, branch: string, required = true): void {
    const repo = this.repo(repoName);
    if (required) repo.reviewsRequired.add(branch);
    else repo.reviewsRequired.delete(branch);
  }

  /** Link a PR to an issue it closes (GitHub's "Development" sidebar). */
  linkPullToIssue(repoName: string, pullNumber: number, issueNumber: number): void {
    const pr = this.pull(repoName, pullNumber);
    if (!pr.linkedIssues.includes(issueNumber)) pr.linkedIssues.push(issueNumber);
  }

  /**
   * Issues this PR closes when merged: closing keywords in its body, plus
   * manual links. `#n` names an issue of the repository the PR is opened
   * into, also when its head is a fork's branch.
   */
  closingIssues(repo: Repo, pr: Pull): number[] {
    const out = new Set(pr.linkedIssues);
    // GitHub only honours closing keywords for PRs into the default branch
    if (pr.baseRef === repo.defaultBranch) {
      const body = repo.issues.get(pr.number)?.body ?? "";
      for (const m of body.matchAll(CLOSING_RE)) {
        if (m[1] && m[1].toLowerCase() !== repo.fullName.toLowerCase()) continue;
        const n = Number(m[2]);
        const target = repo.issues.get(n);
        if (target && !target.isPull) out.add(n);
      }
    }
    return [...out];
  }

  /** PRs that would close this issue (GraphQL `closedByPullRequestsReferences`). */
  closingPulls(repo: Repo, issueNumber: number): Pull[] {
    return [...repo.pulls.values()].filter((pr) => this.closingIssues(repo, pr).includes(issueNumber));
  }

  /**
   * Merge a PR: a merge commit (or squash commit) on the base, the PR closed
   * as merged, and issues it references with closing keywords closed when the
   * base is the default branch.
   */
  mergePull(
    this: FakeState,
    repoName: string,
    number: number,
    opts: { by?: string; method?: "merge" | "squash" | "rebase"; message?: string } = {},
  ): string {
    const repo = this.repo(repoName);
    const pr = this.pull(repoName, number);
    const issue = repo.issues.get(number)!;
    if (pr.merged) throw new Error(`fake GitHub: ${repoName}#${number} is already merged`);
    const baseSha = repo.branches.get(pr.baseRef);
    if (!baseSha) throw new Error(`fake GitHub: base branch ${pr.baseRef} is gone`);
    const method = opts.method ?? "merge";
    const parents = method === "merge" ? [baseSha, pr.headSha] : [baseSha];
    const message =
      opts.message ?? `Merge pull request #${number} from ${headRepoOf(this, repo, pr).owner}/${pr.headRef}`;
    const by = this.user(opts.by ?? repo.owner).login;
    const c = repo.git
      ? this.git.mergeCommit(repo, repo.git, method, baseSha, pr.headSha, message, by)
      : this.commit(repo, parents, message, by);
    this.moveBranch(repo, pr.baseRef, c.sha);
    const now = this.now();
    pr.merged = true;
    pr.mergedAt = now;
    pr.mergedBy = by;
    pr.mergeCommitSha = c.sha;
    this.setIssueState(issue, "closed", by, null);
    issue.stateReason = null;
    if (repo.deleteBranchOnMerge && headRepoOf(this, repo, pr) === repo && repo.branches.get(pr.headRef) === pr.headSha)
      repo.branches.delete(pr.headRef);
    if (pr.baseRef === repo.defaultBranch) {
      for (const n of this.closingIssues(repo, pr)) {
        const target = repo.issues.get(n);
        if (target && target.state === "open") this.setIssueState(target, "closed", by, "completed");
      }
    }
    return c.sha;
  }

  pullMergeable(repo: Repo, pr: Pull): Mergeable {
    const issue = repo.issues.get(pr.number);
    if (pr.mergeableOverride) return pr.mergeableOverride;
    if (pr.merged || issue?.state === "closed") return "UNKNOWN";
    return this.pullConflicting(repo, pr) ? "CONFLICTING" : "MERGEABLE";
  }

  /** The head cannot merge cleanly into the base: as a test set it, or as git finds it for a git-backed repository. */
  pullConflicting(repo: Repo, pr: Pull): boolean {
    const baseSha = repo.branches.get(pr.baseRef);
    if (pr.conflicting || !repo.git || !baseSha) return pr.conflicting;
    return repo.git.conflictsBetween(baseSha, pr.headSha) !== null;
  }

  pullMergeState(repo: Repo, pr: Pull): MergeStateStatus {
    if (pr.mergeStateOverride) return pr.mergeStateOverride;
    const m = this.pullMergeable(repo, pr);
    if (m === "UNKNOWN") return "UNKNOWN";
    if (m === "CONFLICTING") return "DIRTY";
    if (pr.draft) return "DRAFT";
    const baseSha = repo.branches.get(pr.baseRef);
    if (baseSha && this.compare(repo, pr.headSha, baseSha).aheadBy > 0) return "BEHIND";
    if (repo.reviewsRequired.has(pr.baseRef) && reviewDecision(repo, pr) !== "APPROVED") return "BLOCKED";
    const runs = this.latestCheckRuns(repo, pr.headSha);
    if (runs.some((r) => r.status !== "completed")) return "UNSTABLE";
    if (runs.some((r) => r.conclusion && !["success", "neutral", "skipped"].includes(r.conclusion))) return "UNSTABLE";
    return "CLEAN";
  }
}
