/** Task states, and the one agent:* label each state shows on GitHub. */
import type { RepoConfig } from "../config/repo.js";

export type TaskState = "queued" | "claimed" | "review" | "done" | "blocked" | "failed" | "cancelled";
export type RunState = "live" | "exited" | "expired" | "revoked" | "review" | "aborted";

export const OPEN_STATES: readonly TaskState[] = ["queued", "claimed", "review", "blocked", "failed"];

/** The state label of a task; null for states that carry none (the issue is finished). */
export function labelFor(state: TaskState, labels: RepoConfig["labels"]): string | null {
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

export interface Continuation {
  kind: "resume" | "rebase" | "fix-checks" | "changes-requested";
  prNumber?: number;
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
