/** What a test seeds the memory port with, what it records, and how it keeps GitHub's objects. */
import type {
  BlockerInfo,
  CheckRunInfo,
  CommentInfo,
  LabelledIssue,
  Permission,
  PullMergeability,
  Reaction,
  ReviewCommentInfo,
  WorkflowRunInfo,
} from "../../../src/github/port.js";
import type { PortMethod } from "./failures.js";

export type LabelEvent = LabelledIssue["labelledBy"][number];
export type SubIssue = LabelledIssue["subIssues"][number];

export interface IssueSeed {
  number?: number;
  title?: string;
  body?: string;
  state?: "open" | "closed";
  labels?: string[];
  /** Default: "octocat". */
  author?: string;
  /** Who added the seeded labels (default: the author, a User, at the fake's now). */
  labelledBy?: { actor: string; actorType?: LabelEvent["actorType"] };
  blockedBy?: BlockerInfo[];
  subIssues?: SubIssue[];
}

export interface PullSeed {
  /** The head branch; created from the base with one commit when it is not there (and the head is not a fork). */
  head: string;
  /** Default: the repository's default branch. */
  base?: string;
  title?: string;
  body?: string;
  author?: string;
  /** `owner/repo` of a fork's head; its commit is kept in this repository, as GitHub keeps refs/pull/N/head. */
  headRepo?: string;
  draft?: boolean;
  mergeable?: PullMergeability["mergeable"];
  reviewDecision?: string | null;
  labels?: string[];
  /** Issues it closes besides those its body names with a closing keyword ("Closes #7"). */
  closes?: number[];
}

export interface WorkflowSeed {
  /** The workflow's `run-name:`; `${{ inputs.x }}` is replaced by the dispatch's input. Default: the file's name. */
  runName?: string;
  /** Has an `on: workflow_dispatch` trigger (default true); GitHub answers 422 on a dispatch otherwise. */
  dispatchable?: boolean;
  /** Newer GitHub answers a dispatch with its run's id (default true); older GitHub answers nothing. */
  returnsRunId?: boolean;
}

export interface RepoSeed {
  /** Default: "main". */
  defaultBranch?: string;
  deletesMergedBranches?: boolean;
  /** Listed by installationRepos (default true). */
  installed?: boolean;
  /** Branches made at the default branch's head. */
  branches?: string[];
  issues?: IssueSeed[];
  pulls?: PullSeed[];
  permissions?: Record<string, Permission>;
  /** Config files by path, already parsed (what readConfig answers). */
  configs?: Record<string, unknown>;
  /** Workflows by file name (`agent.yml`). */
  workflows?: Record<string, WorkflowSeed>;
}

export interface MemoryGitHubInit {
  /** The App's bot login: the author of what the port writes. Default: "orchestra[bot]". */
  app?: string;
  /** The fake's clock. Default: the wall clock. */
  now?: () => Date;
  repos?: Record<string, RepoSeed>;
  /**
   * The host's release as GET /meta answers it: a GitHub Enterprise Server
   * version ("3.17.4"), or null for api.github.com and GHEC (the default).
   * A GHES before 3.19 answers GitHub's 404 to `blockedBy`, as it has no
   * issue dependencies.
   */
  ghes?: string | null;
}

export interface MemoryCall {
  method: PortMethod;
  /** The arguments as they were when called (a copy). */
  args: unknown[];
  /** What the call threw, injected or GitHub's own refusal. */
  error?: unknown;
}

export interface FailOptions {
  /** How many calls throw it (default 1; Infinity for every call until `clearFailures`). */
  times?: number;
  /** The call takes effect and then throws, as when GitHub acted but the answer was lost (a 502 after a write). */
  applied?: boolean;
}

export interface StoredComment extends CommentInfo {
  /** `owner/repo` and number of the issue it is on. */
  repo: string;
  issue: number;
  createdAt: Date;
  reactions: Array<{ content: Reaction; user: string }>;
}

export interface StoredWorkflowRun extends WorkflowRunInfo {
  workflow: string;
  event: string;
  headSha: string;
  headBranch: string | null;
  conclusion: string | null;
  inputs: Record<string, string>;
  checkSuiteId: number;
  /** Times its failed jobs were run again. */
  reruns: number;
}

export interface IssueRec {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  author: string;
  isPullRequest: boolean;
  deleted: boolean;
  labels: string[];
  labelEvents: LabelEvent[];
  blockedBy: BlockerInfo[];
  subIssues: SubIssue[];
}

export interface PullRec {
  number: number;
  headRef: string;
  headSha: string;
  headRepo: string;
  baseRef: string;
  merged: boolean;
  mergeCommitSha: string | null;
  isDraft: boolean;
  mergeable: PullMergeability["mergeable"];
  reviewDecision: string | null;
  closes: number[];
}

export interface CheckRunRec extends Omit<CheckRunInfo, "pullRequests"> {
  /** Who created it: only the App may update its own check runs. */
  by: "app" | "actions" | "other";
}

export interface RepoRec {
  fullName: string;
  defaultBranch: string;
  deletesMergedBranches: boolean;
  installed: boolean;
  commits: Map<string, { parents: string[]; date: Date }>;
  branches: Map<string, string>;
  issues: Map<number, IssueRec>;
  pulls: Map<number, PullRec>;
  nextNumber: number;
  /** The repository's labels, lower-cased name → name (GitHub's labels are case-insensitive). */
  labels: Map<string, string>;
  checkRuns: Map<number, CheckRunRec>;
  /** The App's check suite of each commit. */
  appSuites: Map<string, number>;
  suites: Set<number>;
  workflows: Map<string, Required<WorkflowSeed>>;
  workflowRuns: Map<number, StoredWorkflowRun>;
  logs: Map<number, string>;
  reviews: Map<string, ReviewCommentInfo[]>;
  permissions: Map<string, Permission>;
  configs: Map<string, unknown>;
  rerequested: number[];
}

/** GitHub's closing keywords in a pull request's body: `Closes #7`, `fixes #8`, `Resolved #9`. */
export const CLOSING = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)\b/gi;
export const FAILED = new Set(["failure", "cancelled", "timed_out", "startup_failure", "action_required"]);
export const GREEN = new Set(["success", "neutral", "skipped"]);
export const WEB = "https://github.com";
