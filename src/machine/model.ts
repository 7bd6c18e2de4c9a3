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
  /** changes-requested: the review. */
  review?: {
    author: string;
    body: string;
    comments: Array<{ path: string; line: number | null; body: string; author: string }>;
  };
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
