/**
 * The one way capability code reaches GitHub. Methods ask for what a capability
 * needs in domain terms; the adapter (octokit.ts, with its issue half in
 * octokit-issues.ts) is the only code that knows octokit. Absence is answered
 * only on GitHub's own 404 (or its 410 for a deleted issue); every other
 * failure throws a GitHubError, so a 502 is never mistaken for "no such
 * branch".
 */

import type { HostVersion } from "./hosts.js";

export type { HostVersion } from "./hosts.js";

export interface RepoRef {
  owner: string;
  repo: string;
}

/** `owner/repo` as the port's repository reference. */
export function repoRef(fullName: string): RepoRef {
  const [owner, repo] = fullName.split("/") as [string, string];
  return { owner, repo };
}

export type Permission = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface IssueInfo {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  author: string;
  isPullRequest: boolean;
}

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

export interface BranchInfo {
  name: string;
  sha: string;
}

export interface MergedBranchFacts {
  sha: string;
  deletesMergedBranches: boolean;
  openPull: number | null;
}

export interface Comparison {
  status: "ahead" | "behind" | "diverged" | "identical";
  aheadBy: number;
  behindBy: number;
  headSha: string;
}

export interface CheckRunInfo {
  id: number;
  name: string;
  headSha: string;
  status: string;
  conclusion: string | null;
  output: { title?: string; summary?: string; text?: string };
  checkSuiteId: number | null;
  /** The Actions run behind this check, when it came from a workflow job. */
  workflowRunId: number | null;
  /**
   * The pull requests GitHub matches to the check's suite: open ones of this
   * repository whose head branch is the suite's. Empty for a suite of a
   * fork's branch, whatever its sha.
   */
  pullRequests: number[];
}

/** An issue that blocks another (GitHub's issue dependencies, "blocked by"). */
export interface BlockerInfo {
  /** `owner/repo`: a blocker may live in another repository. */
  repo: string;
  number: number;
  state: "open" | "closed";
}

export interface CommentInfo {
  id: number;
  body: string;
  author: string;
  url: string;
}

export interface NewCheckRun {
  name: string;
  headSha: string;
  status: "queued" | "in_progress" | "completed";
  conclusion?: "success" | "failure" | "neutral" | "action_required" | "cancelled" | "skipped" | "timed_out";
  title: string;
  summary: string;
}

export type Reaction = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";

export interface WorkflowRunInfo {
  id: number;
  /** The run's title (`run-name:`), where a dispatch names its Orchestra run. */
  displayTitle: string;
  status: string;
  createdAt: string;
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

/** An issue carrying one of the labels asked for, as the reconcile sweep reads it. */
export interface BranchListing {
  name: string;
  sha: string;
  committedAt: Date | null;
  /** Pull requests from this branch, open, closed or merged. */
  pullRequests: number;
}

export interface LabelledIssue {
  number: number;
  state: "open" | "closed";
  isPullRequest: false;
  title: string;
  body: string;
  labels: string[];
  /** Who last added each of the labels asked for, and when (from the issue's timeline). */
  labelledBy: Array<{
    label: string;
    actor: string;
    actorType: "User" | "Bot" | "Organization" | "Mannequin" | "EnterpriseUserAccount";
    at: string;
  }>;
  /** Its sub-issues, open or closed (the first 50), and how many it has in all. */
  subIssues: Array<{ repo: string; number: number; state: "open" | "closed" }>;
  subIssuesTotal: number;
}

export interface GitHub {
  /** null when the issue does not exist (404) or was deleted (410). */
  getIssue(r: RepoRef, number: number): Promise<IssueInfo | null>;
  /** Opens an issue as the App. */
  createIssue(r: RepoRef, issue: { title: string; body: string }): Promise<IssueInfo>;
  /** Replaces an issue's body; null when the issue does not exist (404) or was deleted (410). */
  updateIssueBody(r: RepoRef, number: number, body: string): Promise<IssueInfo | null>;
  /**
   * Issues (not pull requests) opened by `creator`, newest first, open
   * and closed unless asked: at most `pages` pages of 100 (default 5).
   */
  issuesCreatedBy(
    r: RepoRef,
    creator: string,
    opts?: { state?: "open" | "closed" | "all"; pages?: number },
  ): Promise<IssueInfo[]>;
  /** The issue's labels; null when the issue does not exist (any more). */
  issueLabels(r: RepoRef, number: number): Promise<string[] | null>;
  /** Adds labels (creating missing repo labels, as GitHub does) and answers the issue's labels after. Idempotent. */
  addLabels(r: RepoRef, number: number, labels: string[]): Promise<string[]>;
  /**
   * Removes a label and answers the issue's labels after it; null when GitHub answered that the label was not on
   * the issue (or there is no issue): success too, but nothing said of the other labels. Idempotent.
   */
  removeLabel(r: RepoRef, number: number, label: string): Promise<string[] | null>;
  createComment(r: RepoRef, number: number, body: string): Promise<CommentInfo>;
  listComments(r: RepoRef, number: number, opts?: { since?: Date; perPage?: number }): Promise<CommentInfo[]>;
  addReaction(r: RepoRef, commentId: number, content: Reaction): Promise<void>;
  /**
   * Every issue the issue is blocked by, open or closed (all
   * pages). Throws on a missing issue, like every other failure, and on a
   * host without issue dependencies (a 404 for an issue that exists; see
   * features.ts, which tells the two apart).
   */
  blockedBy(r: RepoRef, issue: number): Promise<BlockerInfo[]>;
  /** The host's release (GET /meta): GHES's `installed_version`, null on api.github.com and GHEC. */
  hostVersion(): Promise<HostVersion>;

  getPull(r: RepoRef, number: number): Promise<PullInfo | null>;
  /** Pull requests whose head is `branch` in this repository. */
  pullsForBranch(r: RepoRef, branch: string, state?: "open" | "closed" | "all"): Promise<PullInfo[]>;
  createPull(r: RepoRef, pr: { title: string; body: string; head: string; base: string }): Promise<PullInfo>;
  /** Merges the base into the PR branch (GitHub's "Update branch"). */
  updatePullBranch(r: RepoRef, number: number, expectedHeadSha?: string): Promise<void>;

  defaultBranch(r: RepoRef): Promise<string>;
  /**
   * What deleting a merged pull request's branch needs, in one call (GraphQL): the branch's head, whether the
   * repository deletes merged head branches itself ("Automatically delete head branches"), and an open pull request
   * from the branch. Null when the branch is gone.
   */
  mergedBranch(r: RepoRef, branch: string): Promise<MergedBranchFacts | null>;
  /**
   * Branches whose names start with `prefix` (one GraphQL query per 100):
   * head commit, its date, and pull requests of any state from each.
   */
  branchesWithPrefix(r: RepoRef, prefix: string): Promise<BranchListing[]>;
  getBranch(r: RepoRef, branch: string): Promise<BranchInfo | null>;
  /** Deletes a branch; false when it was already gone. */
  deleteBranch(r: RepoRef, branch: string): Promise<boolean>;
  /** null when base or head does not exist. */
  compare(r: RepoRef, base: string, head: string): Promise<Comparison | null>;

  /**
   * Pull requests whose head is this commit (GitHub's commits/{sha}/pulls:
   * found also when a payload lists none, as for forks).
   */
  pullsForCommit(r: RepoRef, sha: string): Promise<PullInfo[]>;
  /** A review's inline comments (every page). */
  reviewComments(r: RepoRef, pull: number, reviewId: number): Promise<ReviewCommentInfo[]>;
  /**
   * Issues (not PRs) of the repository carrying any of `labels`, open and
   * closed, with their labels, who added the asked-for labels, and their
   * sub-issues: one GraphQL query per 100 issues (all pages).
   */
  issuesLabelled(r: RepoRef, labels: string[]): Promise<LabelledIssue[]>;
  /** The repositories the installation may access ("owner/repo", all pages). */
  installationRepos(): Promise<string[]>;
  /**
   * Open pull requests into `base` with their mergeability, merge
   * state, review decision and checks: one GraphQL query per 100.
   */
  openPullsInto(r: RepoRef, base: string): Promise<PullMergeability[]>;

  /** The latest check run of each name on the ref (all pages); with `all`, every attempt of each (reruns too). */
  checkRunsForRef(r: RepoRef, ref: string, opts?: { all?: boolean }): Promise<CheckRunInfo[]>;
  /**
   * The last `lines` lines of an Actions job's log (a check run's id is its
   * job's id), read from at most the log's last LOG_TAIL_MAX_BYTES bytes (a
   * range request); null when GitHub keeps none (404, 410).
   */
  jobLogTail(r: RepoRef, jobId: number, lines: number): Promise<string | null>;
  /** Creates the check run; its id. */
  createCheckRun(r: RepoRef, run: NewCheckRun): Promise<number>;
  updateCheckRun(r: RepoRef, checkRunId: number, run: Omit<NewCheckRun, "name" | "headSha">): Promise<void>;
  rerequestCheckSuite(r: RepoRef, checkSuiteId: number): Promise<void>;
  rerunFailedJobs(r: RepoRef, workflowRunId: number): Promise<void>;
  /** Triggers workflow_dispatch; the Actions run id when GitHub reports it (newer GitHub), else null. */
  dispatchWorkflow(
    r: RepoRef,
    workflow: string,
    ref: string,
    inputs: Record<string, string>,
  ): Promise<{ workflowRunId: number | null }>;
  /**
   * Runs of a workflow started by workflow_dispatch since a time,
   * newest first (to find a dispatch whose answer was lost).
   */
  dispatchedRuns(r: RepoRef, workflow: string, since: Date): Promise<WorkflowRunInfo[]>;

  /** The user's permission on the repository (`role_name` reduced to the five levels). */
  permission(r: RepoRef, username: string): Promise<Permission>;

  /** A YAML config file from the repo, with the org's `.github` repository as defaults; null when neither has it. */
  readConfig(r: RepoRef, path: string): Promise<unknown>;

  /**
   * Revokes an installation token, authenticated with that token itself
   * (`DELETE /installation/token`). "unknown" when GitHub no longer accepts
   * it (401: expired or already revoked; 404): nothing is left to revoke.
   */
  revokeToken(token: string): Promise<"revoked" | "unknown">;
}

/** What a run's worker may do with its token: push and open its PR, read its issue. Nothing else. */
export const RUN_TOKEN_PERMISSIONS: Readonly<Record<string, "read" | "write">> = {
  contents: "write",
  pull_requests: "write",
  issues: "read",
};

/** An installation token minted for one run's worker. */
export interface RunToken {
  token: string;
  expiresAt: Date;
  /** As GitHub granted them. */
  permissions: Record<string, string>;
  /** `owner/repo` of each repository it reaches, as GitHub answered. */
  repositories: string[];
}

/**
 * Installation tokens for runs, minted as the App (its JWT):
 * `POST /app/installations/{installation_id}/access_tokens` narrowed to
 * one repository and RUN_TOKEN_PERMISSIONS. An answer that reaches more
 * than asked is refused (GitHubError), never handed on.
 */
export interface InstallationTokens {
  mint(installationId: number, r: RepoRef): Promise<RunToken>;
}

export interface GitHubErrorDetail {
  /** A rate limit (primary or secondary): nothing more for this installation for this long after the answer. */
  retryAfterMs?: number;
  /** GitHub would not mint the installation's token (uninstalled, suspended, wrong App). */
  tokenFailure?: boolean;
  /** The request may have reached GitHub and taken effect although no answer came (5xx, timeout, reset). */
  mayHaveSent?: boolean;
  /**
   * GitHub answered a GraphQL query with errors (a field this host lacks, a
   * query it does not accept): their messages. A defect or a version gap,
   * never an outage.
   */
  graphqlErrors?: string[];
}

export class GitHubError extends Error {
  override readonly name = "GitHubError";
  readonly retryAfterMs: number | undefined;
  readonly tokenFailure: boolean;
  readonly mayHaveSent: boolean;
  readonly graphqlErrors: string[] | undefined;
  constructor(
    readonly operation: string,
    readonly status: number | undefined,
    message: string,
    /** Worth trying again later: 5xx, timeouts, rate limits, network errors. */
    readonly retryable: boolean,
    detail: GitHubErrorDetail = {},
  ) {
    super(`${operation}: ${status === undefined ? "" : `${status} `}${message}`);
    this.retryAfterMs = detail.retryAfterMs;
    this.tokenFailure = detail.tokenFailure ?? false;
    this.mayHaveSent = detail.mayHaveSent ?? false;
    this.graphqlErrors = detail.graphqlErrors;
  }
}

/**
 * The port's writes: performed only by the effects executor (paced, never
 * retried blindly), counted apart from reads in the cost ledger.
 */
export const WRITE_METHODS: ReadonlySet<keyof GitHub> = new Set<keyof GitHub>([
  "addLabels",
  "removeLabel",
  "createComment",
  "createIssue",
  "updateIssueBody",
  "addReaction",
  "createPull",
  "updatePullBranch",
  "deleteBranch",
  "createCheckRun",
  "updateCheckRun",
  "rerequestCheckSuite",
  "rerunFailedJobs",
  "dispatchWorkflow",
  "revokeToken",
]);

/** A GitHub client for one installation. */
export type GitHubFor = (installationId: number) => Promise<GitHub>;
