/**
 * The one way capability code reaches GitHub. Methods ask for what a capability
 * needs in domain terms; the adapter (octokit.ts, with its issue half in
 * octokit-issues.ts) is the only code that knows octokit. Absence is answered
 * only on GitHub's own 404 (or its 410 for a deleted issue); every other
 * failure throws a GitHubError, so a 502 is never mistaken for "no such
 * branch".
 *
 * The interface is composed of what it speaks of: issues and labels
 * (port-issues.ts), pull requests (port-pulls.ts), refs and the repository
 * (port-refs.ts), checks and Actions (port-checks.ts), and the App and its
 * installation (port-app.ts). Callers import all of it from here.
 */
import type { AppPort } from "./port-app.js";
import type { ChecksPort } from "./port-checks.js";
import type { IssuesPort } from "./port-issues.js";
export { MAX_SWAPS } from "./port-issues.js";
import type { PullsPort } from "./port-pulls.js";
import type { RefsPort } from "./port-refs.js";

export type { HostVersion } from "./hosts.js";
export { repoRef, type RepoRef } from "./repo-ref.js";
export { GitHubError, type GitHubErrorDetail } from "./github-error.js";
export type {
  BlockerInfo,
  CommentInfo,
  IssueInfo,
  IssueLabel,
  IssuesPort,
  LabelledIssue,
  LabelSwap,
  SwapAnswer,
  Reaction,
} from "./port-issues.js";
export type { PullInfo, PullMergeability, PullsPort, ReviewCommentInfo } from "./port-pulls.js";
export type { BranchInfo, BranchListing, Comparison, MergedBranchFacts, RefsPort } from "./port-refs.js";
export type { CheckRunInfo, ChecksPort, NewCheckRun, WorkflowRunInfo } from "./port-checks.js";
export {
  RUN_TOKEN_PERMISSIONS,
  type AppPort,
  type InstallationTokens,
  type Permission,
  type RunToken,
} from "./port-app.js";

export interface GitHub extends IssuesPort, PullsPort, RefsPort, ChecksPort, AppPort {}

/**
 * The port's writes: performed only by the effects executor (paced, never
 * retried blindly), counted apart from reads in the cost ledger.
 */
export const WRITE_METHODS: ReadonlySet<keyof GitHub> = new Set<keyof GitHub>([
  "addLabels",
  "removeLabel",
  "swapLabels",
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
