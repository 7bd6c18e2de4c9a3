/** The port's issues: their bodies, labels, comments, reactions, dependencies (port.ts composes it all). */
import type { GitHubError } from "./github-error.js";
import type { RepoRef } from "./repo-ref.js";

export interface IssueInfo {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  author: string;
  isPullRequest: boolean;
}

/** An issue that blocks another (GitHub's issue dependencies, "blocked by"). */
export interface BlockerInfo {
  /** `owner/repo`: a blocker may live in another repository. */
  repo: string;
  number: number;
  state: "open" | "closed";
}

/** A label on an issue as GitHub answers it: its name, and the node id GraphQL names it by. */
export interface IssueLabel {
  name: string;
  nodeId: string;
}

/** The most label swaps one GitHub.swapLabels call carries. */
export const MAX_SWAPS = 8;

/** Labels on and off one issue, all named by node ids (GitHub.swapLabels). */
export interface LabelSwap {
  issueId: string;
  add: string[];
  remove: string[];
}

/** What one swap came to: the issue's labels after it, null (a node not there), or GitHub's refusal. */
export type SwapAnswer = IssueLabel[] | null | GitHubError;

export interface CommentInfo {
  id: number;
  body: string;
  author: string;
  url: string;
}

export type Reaction = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";

/** An issue carrying one of the labels asked for, as the reconcile sweep reads it. */
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

export interface IssuesPort {
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
  issueLabels(r: RepoRef, number: number): Promise<IssueLabel[] | null>;
  /** Adds labels (creating missing repo labels, as GitHub does) and answers the issue's labels after. Idempotent. */
  addLabels(r: RepoRef, number: number, labels: string[]): Promise<IssueLabel[]>;
  /**
   * Removes a label and answers the issue's labels after it; null when GitHub answered that the label was not on
   * the issue (or there is no issue): success too, but nothing said of the other labels. Idempotent.
   */
  removeLabel(r: RepoRef, number: number, label: string): Promise<IssueLabel[] | null>;
  /** The repository's labels of these names that exist, with their node ids (one read per name). */
  findLabels(r: RepoRef, names: readonly string[]): Promise<IssueLabel[]>;
  /**
   * Label swaps, each on one issue named by its node id: the labels `add` put on and then the labels `remove`
   * taken off, all named by their node ids, every swap in one GraphQL mutation (addLabelsToLabelable, then
   * removeLabelsFromLabelable, issue by issue). One answer per swap, in order: the issue's labels after both;
   * null when GitHub answers that a node in it is not there (the issue or a label deleted, an id out of date: its
   * other half may have been done, so whoever asked reads the labels before going on); or GitHub's refusal of
   * that swap alone. A request GitHub did not answer throws. Idempotent.
   */
  swapLabels(swaps: readonly LabelSwap[]): Promise<SwapAnswer[]>;
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
  /**
   * Issues (not PRs) of the repository carrying any of `labels`, open and
   * closed, with their labels, who added the asked-for labels, and their
   * sub-issues: one GraphQL query per 100 issues (all pages).
   */
  issuesLabelled(r: RepoRef, labels: string[]): Promise<LabelledIssue[]>;
}
