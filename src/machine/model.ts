/**
 * The task and run vocabulary the state machine speaks: states, the one
 * agent:* label each task state shows, continuations, and the small pure
 * rules (attempt budget, dispatch backoff) its rows share.
 */
import type { RepoConfig } from "../config/repo.js";

export type TaskState = "queued" | "claimed" | "review" | "done" | "blocked" | "failed" | "cancelled";
/** "none": the issue has no task (yet); events can create one or act without one. */
export type State = TaskState | "none";

export const TASK_STATES: readonly TaskState[] = [
  "queued",
  "claimed",
  "review",
  "done",
  "blocked",
  "failed",
  "cancelled",
];
export const STATES: readonly State[] = ["none", ...TASK_STATES];

/**
 * live: holds the lease. exited / expired / revoked: ended without a PR and
 * owed a class until it has one. review: ended with a PR. aborted: never
 * started (a refused dispatch); released: its worker gave it back before the
 * agent started (preflight failed). Neither is counted against attempts.
 */
export type RunState = "live" | "exited" | "expired" | "revoked" | "review" | "aborted" | "released";
export const RUN_STATES: readonly RunState[] = [
  "live",
  "exited",
  "expired",
  "revoked",
  "review",
  "aborted",
  "released",
];

/** Runs whose agent never started: no attempt used, no class, nothing a breaker or a continuation counts. */
export function neverStarted(state: string): state is "aborted" | "released" {
  return state === "aborted" || state === "released";
}

export type Labels = RepoConfig["labels"];

/** The state label of a task; null for states that carry none (the issue is finished). */
export function labelFor(state: TaskState, labels: Labels): string | null {
  switch (state) {
    case "queued":
      return labels.queued;
    case "claimed":
      return labels.inProgress;
    case "review":
      return labels.review;
    case "blocked":
      return labels.blocked;
    case "failed":
      return labels.failed;
    case "done":
    case "cancelled":
      return null;
  }
}

export function stateLabelsOf(labels: Labels): string[] {
  return [labels.queued, labels.inProgress, labels.review, labels.blocked, labels.failed];
}

export type ContinuationKind = "resume" | "rebase" | "fix-checks" | "changes-requested";

/** A failing check, as a fix-checks continuation hands it to the agent. */
export interface FailingCheck {
  name: string;
  conclusion: string | null;
  title?: string;
  summary?: string;
  /** The last lines of the job's log (Actions checks). */
  logTail?: string;
}

/**
 * A trusted comment a continuation carries: one on the task's PR or issue in
 * review sends the task back with it, and later ones join it until a run
 * claims it. The claim's decisions list each one too (decisionId).
 */
export interface ContinuationComment {
  /** GitHub's comment id. */
  id: number;
  /** The decision that records it. */
  decisionId: string;
  author: string;
  body: string;
  /** Where it was written: the task's issue, or its pull request. */
  on: "issue" | "pull";
}

/**
 * Comments a continuation carries at most; later ones reach the run as
 * decisions only (`moreComments` counts them). A comment flood on one issue
 * must not grow the task's row without bound.
 */
export const CONTINUATION_COMMENTS = 20;

/**
 * What a continuation run resumes, with everything its agent needs without
 * reading GitHub: the PR and its head and base, and why it is back.
 */
export interface Continuation {
  kind: ContinuationKind;
  prNumber?: number;
  headSha?: string;
  baseSha?: string;
  /** One line for the agent: what to do and why. */
  reason?: string;
  /** fix-checks: the failing checks. */
  checks?: FailingCheck[];
  /** changes-requested: the review (reviews, when more than one came before the claim). */
  review?: {
    author: string;
    body: string;
    comments: Array<{ path: string; line: number | null; body: string; author: string }>;
    /** The reviews it holds, so a review delivered again is not added twice. */
    ids?: number[];
  };
  /** Trusted comments on the PR or the issue (a `changes-requested` from comments, or ones that joined later). */
  comments?: ContinuationComment[];
  /** Comments past `CONTINUATION_COMMENTS`: in the claim's decisions only. */
  moreComments?: number;
}

/** After a run ends without a PR: another attempt, or failed when the attempts are spent. */
export function afterFailedRun(attempt: number, maxAttempts: number): "queued" | "failed" {
  return attempt >= maxAttempts ? "failed" : "queued";
}

/** Backoff for a refused dispatch: 1 min, 2, 4 … capped at 1 h. */
export function dispatchBackoffMs(failures: number): number {
  return Math.min(60 * 60_000, 60_000 * 2 ** Math.max(0, failures - 1));
}

/** A worker's question expires unanswered after seven days. */
export const QUESTION_TTL_MS = 7 * 24 * 3600_000;
