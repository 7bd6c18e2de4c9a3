/** The port's pull requests: reading, opening and updating them, and their reviews (port.ts composes it all). */
import type { RepoRef } from "./repo-ref.js";

export interface PullInfo {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  merged: boolean;
  mergeCommitSha: string | null;
  headRef: string;
  headSha: string;
  headRepo: string | null;
  baseRef: string;
  url: string;
  author: string;
}

/** A review's inline comment. */
export interface ReviewCommentInfo {
  path: string;
  line: number | null;
  body: string;
  author: string;
}

/** An open pull request as a push to its base sees it: what decides update-branch, rebase or nothing. */
export interface PullMergeability {
  number: number;
  headRef: string;
  headSha: string;
  /** owner/repo of the head; differs from the base repository for a fork. */
  headRepo: string | null;
  baseRef: string;
  baseSha: string;
  isDraft: boolean;
  mergeable: "MERGEABLE" | "CONFLICTING" | "UNKNOWN";
  /** GitHub's mergeStateStatus: BEHIND, BLOCKED, CLEAN, DIRTY, DRAFT, HAS_HOOKS, UNKNOWN, UNSTABLE. */
  mergeState: string;
  /** APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED, or null when no review is required. */
  reviewDecision: string | null;
  /** The head commit's check rollup: SUCCESS, FAILURE, PENDING, ERROR, EXPECTED, or null when it has none. */
  checks: string | null;
}

export interface PullsPort {
  getPull(r: RepoRef, number: number): Promise<PullInfo | null>;
  /** Pull requests whose head is `branch` in this repository. */
  pullsForBranch(r: RepoRef, branch: string, state?: "open" | "closed" | "all"): Promise<PullInfo[]>;
  createPull(r: RepoRef, pr: { title: string; body: string; head: string; base: string }): Promise<PullInfo>;
  /** Merges the base into the PR branch (GitHub's "Update branch"). */
  updatePullBranch(r: RepoRef, number: number, expectedHeadSha?: string): Promise<void>;
  /**
   * Pull requests whose head is this commit (GitHub's commits/{sha}/pulls:
   * found also when a payload lists none, as for forks).
   */
  pullsForCommit(r: RepoRef, sha: string): Promise<PullInfo[]>;
  /** A review's inline comments (every page). */
  reviewComments(r: RepoRef, pull: number, reviewId: number): Promise<ReviewCommentInfo[]>;
  /**
   * Open pull requests into `base` with their mergeability, merge
   * state, review decision and checks: one GraphQL query per 100.
   */
  openPullsInto(r: RepoRef, base: string): Promise<PullMergeability[]>;
}
