/** The shapes of the fake's world: what each GitHub object holds. */

export type Role = "admin" | "maintain" | "write" | "triage" | "read" | "none";
export type CheckStatus = "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
export type CheckConclusion =
  | "success"
  | "failure"
  | "neutral"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "action_required"
  | "startup_failure"
  | "stale";
export type Mergeable = "MERGEABLE" | "CONFLICTING" | "UNKNOWN";
export type MergeStateStatus =
  "BEHIND" | "BLOCKED" | "CLEAN" | "DIRTY" | "DRAFT" | "HAS_HOOKS" | "UNKNOWN" | "UNSTABLE";

export interface User {
  login: string;
  id: number;
  type: "User" | "Bot" | "Organization";
}

export interface Installation {
  id: number;
  account: string;
  accountType: "Organization" | "User";
  permissions: Record<string, string>;
  events: string[];
  repositorySelection: "all" | "selected";
  createdAt: Date;
  suspendedAt: Date | null;
}

export interface AccessToken {
  token: string;
  installationId: number;
  /** What GitHub answers as expires_at: an hour after it was minted, on the fake's clock. */
  expiresAt: Date;
  /**
   * When GitHub stops accepting it, on the real clock. The App's installation
   * tokens are cached by Octokit, which times its cache on the real clock
   * whatever the rig's clock says: a rig clock moved forward an hour must not
   * expire a token Octokit still rightly holds.
   */
  validUntilMs: number;
  /** what the token may do: the installation's, or fewer when it was minted with `permissions` */
  permissions: Record<string, string>;
  /** lower-case full names when the token was narrowed to some repositories */
  repositories: string[] | null;
  /** set by `DELETE /installation/token`: GitHub answers 401 to the token from then on */
  revokedAt?: Date | null;
}

export interface Label {
  id: number;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export interface Issue {
  number: number;
  id: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  stateReason: "completed" | "not_planned" | "reopened" | "duplicate" | null;
  user: string;
  /** label names as applied (canonical case from the repo label) */
  labels: string[];
  assignees: string[];
  locked: boolean;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  closedBy: string | null;
  /** true when this issue number is a pull request */
  isPull: boolean;
}

/** A label added to an issue or pull request (GraphQL's `LabeledEvent` on its timeline). */
export interface LabelEvent {
  id: number;
  issueNumber: number;
  /** the repository label's id (its current name is the event's label name, as after a rename on GitHub) */
  labelId: number;
  /** the name it had when added, should the label be deleted since */
  labelName: string;
  /** who added it */
  actor: string;
  createdAt: Date;
}

export interface Comment {
  id: number;
  issueNumber: number;
  body: string;
  user: string;
  createdAt: Date;
  updatedAt: Date;
  /** authored through the App's installation token */
  viaApp: boolean;
}

export interface Reaction {
  id: number;
  subject: { kind: "comment"; id: number } | { kind: "issue"; number: number };
  user: string;
  content: string;
  createdAt: Date;
}

export interface Pull {
  number: number;
  id: number;
  headRef: string;
  /** a cross-repository pull request: the fork (full name) whose branch `headRef` is; absent when the head is in this repository */
  headRepo?: string;
  /** live while the head branch exists; frozen when it is deleted */
  headSha: string;
  baseRef: string;
  draft: boolean;
  merged: boolean;
  mergedAt: Date | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  maintainerCanModify: boolean;
  /** the head cannot merge cleanly into the base */
  conflicting: boolean;
  /** force the GraphQL/REST mergeability answer (e.g. UNKNOWN while GitHub computes it) */
  mergeableOverride: Mergeable | null;
  mergeStateOverride: MergeStateStatus | null;
  /** issues linked by hand (closing keywords in the body are parsed on the fly) */
  linkedIssues: number[];
}

export interface Review {
  id: number;
  pullNumber: number;
  user: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";
  body: string;
  commitId: string;
  submittedAt: Date;
}

export interface Commit {
  sha: string;
  parents: string[];
  message: string;
  author: string;
  date: Date;
  tree: string;
}

export interface CheckSuite {
  id: number;
  headSha: string;
  headBranch: string | null;
  /** the fork whose branch the suite ran on (a fork pull request's workflow runs); null for this repository's */
  headRepo: string | null;
  app: AppKey;
  createdAt: Date;
  updatedAt: Date;
  /** set when GitHub Actions owns the suite */
  workflowRunId: number | null;
  rerequested: number;
}

export interface CheckRun {
  id: number;
  suiteId: number;
  headSha: string;
  name: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  startedAt: Date;
  completedAt: Date | null;
  output: { title: string | null; summary: string | null; text: string | null; annotationsCount: number };
  detailsUrl: string | null;
  externalId: string | null;
  app: AppKey;
  rerequested: number;
}

/** "self" is the App under test; "github-actions" owns workflow jobs. */
export type AppKey = "self" | "github-actions";

export interface WorkflowInput {
  required?: boolean;
  default?: string;
  type?: "string" | "boolean" | "number" | "choice" | "environment";
  options?: string[];
}

export interface Workflow {
  id: number;
  name: string;
  path: string;
  state: "active" | "disabled_manually";
  /** has an `on: workflow_dispatch` trigger (422 on dispatch otherwise) */
  dispatchable: boolean;
  /** declared workflow_dispatch inputs; null accepts anything */
  inputs: Record<string, WorkflowInput> | null;
  /** queue a workflow run when dispatched, as GitHub does */
  createRunOnDispatch: boolean;
  /** the workflow's `run-name:`, its `${{ inputs.X }}` filled from a dispatch's inputs; null: the workflow's name */
  runName: string | null;
  /** a dispatch asking for `return_run_details` gets the run's id (false: 204, as GitHub did before) */
  returnsRunDetails: boolean;
  createdAt: Date;
}

export interface WorkflowRun {
  id: number;
  workflowId: number;
  name: string;
  displayTitle: string;
  headBranch: string | null;
  headSha: string;
  /** the fork whose branch the run is for (a fork pull request's `pull_request` run); null for this repository's */
  headRepo: string | null;
  event: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  runNumber: number;
  runAttempt: number;
  actor: string;
  createdAt: Date;
  updatedAt: Date;
  runStartedAt: Date;
  checkSuiteId: number;
}

export interface Job {
  /** equal to the id of the job's check run, as on GitHub */
  id: number;
  runId: number;
  runAttempt: number;
  name: string;
  steps: { name: string; status: CheckStatus; conclusion: CheckConclusion | null; number: number }[];
  labels: string[];
  runnerName: string | null;
}

export interface Dispatch {
  repo: string;
  workflowId: number;
  workflowPath: string;
  ref: string;
  inputs: Record<string, unknown>;
  runId: number | null;
  at: Date;
}

export interface Rerun {
  repo: string;
  kind: "run" | "failed-jobs" | "job" | "check-run" | "check-suite";
  id: number;
  at: Date;
}
