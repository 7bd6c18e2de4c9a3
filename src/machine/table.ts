/**
 * The transition table: for every event, one row per state (including
 * "none", an issue without a task). `decide` is a pure function of the task,
 * its runs, the event and the repository's config; applying what it returns
 * is the only way task and run state change (apply/).
 */
import type { Context, Decision } from "./decision.js";
import type { EventKind, TaskEvent } from "./events.js";
import type { EventRows } from "./rows/build.js";
import { claim, dispatched, dispatchRefused, sweepFailed } from "./rows/runs.js";
import { heartbeat, leaseExpired, leaseStalled, runReleased, workerRevoked } from "./rows/leases.js";
import { runExited } from "./rows/exits.js";
import { blockersRead, breakerOpened } from "./rows/schedule.js";
import { runClassified } from "./rows/recoveries.js";
import { branchKept, prPublished, publishRefused } from "./rows/recovery-outcomes.js";
import { labelUntrusted } from "./rows/labels.js";
import { configInvalid, issueClosed, queueLabel, queueLabelRemoved, queueLabelUntrusted } from "./rows/queue.js";
import { branchPushed, branchRewritten } from "./rows/branches.js";
import {
  baseMoved,
  checkFailed,
  prClosed,
  prMerged,
  prOpened,
  prSynchronized,
  reviewSubmitted,
} from "./rows/review.js";
import { commandRows, decisionReceipted, drift, installationRemoved, subIssuesClosed } from "./rows/human.js";
import { correction } from "./rows/corrections.js";
import { fleetRefresh } from "./rows/fleet.js";
import { accessLost, accessRestored, recoveryStuck } from "./rows/stuck.js";
import { withRevocation } from "./credentials.js";
import { withQuestionsClosed } from "./waiting.js";
import { conditionMet, decisionRequested, questionAnswered, questionExpired } from "./rows/questions.js";

export const TABLE: { readonly [K in EventKind]: EventRows<K> } = {
  "queue-label": queueLabel,
  "queue-label-untrusted": queueLabelUntrusted,
  "queue-label-removed": queueLabelRemoved,
  "label-untrusted": labelUntrusted,
  "issue-closed": issueClosed,
  "config-invalid": configInvalid,
  claim,
  dispatched,
  "dispatch-refused": dispatchRefused,
  heartbeat,
  "lease-expired": leaseExpired,
  "lease-stalled": leaseStalled,
  "worker-revoked": workerRevoked,
  "run-released": runReleased,
  "run-exited": runExited,
  "run-classified": runClassified,
  "pr-published": prPublished,
  "publish-refused": publishRefused,
  "branch-kept": branchKept,
  "sweep-failed": sweepFailed,
  "recovery-stuck": recoveryStuck,
  "blockers-read": blockersRead,
  "breaker-opened": breakerOpened,
  "pr-opened": prOpened,
  "pr-merged": prMerged,
  "pr-closed": prClosed,
  "pr-synchronized": prSynchronized,
  "branch-pushed": branchPushed,
  "branch-rewritten": branchRewritten,
  "check-failed": checkFailed,
  "base-moved": baseMoved,
  "review-submitted": reviewSubmitted,
  command: commandRows,
  correction,
  "decision-receipted": decisionReceipted,
  "decision-requested": decisionRequested,
  "question-answered": questionAnswered,
  "condition-met": conditionMet,
  "question-expired": questionExpired,
  drift,
  "sub-issues-closed": subIssuesClosed,
  "installation-removed": installationRemoved,
  "access-lost": accessLost,
  "access-restored": accessRestored,
  "fleet-refresh": fleetRefresh,
};

/** What raises each event, for the generated table in docs/design.md. */
export const RAISED_BY: { readonly [K in EventKind]: string } = {
  "queue-label": "a trusted person adds the queue label (`issues.labeled`)",
  "queue-label-untrusted": "anyone else adds it (reply at most once per person, issue and UTC day)",
  "queue-label-removed": "a trusted person removes the queue label (`issues.unlabeled`)",
  "label-untrusted":
    "anyone else removes the queue label, or adds or removes another " +
    "agent:* label (undone; reply at most once per person, issue and UTC day)",
  "issue-closed": "`issues.closed`",
  "config-invalid": "a label change in a repository whose `.github/orchestra.yml` is invalid",
  claim: "a worker's claim, or the dispatcher in dispatch mode",
  dispatched: "the executor: GitHub accepted the workflow dispatch",
  "dispatch-refused":
    "the executor: GitHub refused the dispatch (for the whole repository: the breaker opens, one comment)",
  heartbeat: "a worker's heartbeat",
  "lease-expired": "the sweep: a lease passed its expiry",
  "lease-stalled": "a heartbeat whose progress stood still for `limits.stallSeconds`",
  "worker-revoked": "an operator revokes the worker",
  "run-released": "a worker releases its run before the agent started (preflight failed)",
  "run-exited": "a worker's exit, after Orchestra looked for its PR on GitHub",
  "run-classified": "classification of a run that ended without a PR (exit or sweep)",
  "pr-published": "the executor opened the PR of a publishable run",
  "publish-refused": "the executor found the head checks no longer green",
  "branch-kept": "the executor found commits on a branch it was to delete",
  "sweep-failed": "the sweep could not handle the task (backs it off)",
  "recovery-stuck":
    "the sweep or the executor: a run's facts could not be gathered, or its pull request opened, " +
    "within the retry schedule (one comment)",
  "blockers-read":
    "the issues GitHub lists as blocking it were read (queue, dependency events, a blocker closed, sweep)",
  "breaker-opened": "runs in the repository kept ending in the same class (this task's run tripped it)",
  "pr-opened":
    "`pull_request.opened` / `reopened` / `ready_for_review` from the task's branch (a draft keeps a live run)",
  "pr-merged": "`pull_request.closed` merged",
  "pr-closed": "`pull_request.closed` without merging",
  "pr-synchronized": "`pull_request.synchronize`: the PR's head moved",
  "branch-pushed": "a `push` to the task's branch",
  "branch-rewritten": "a forced `push` to the task's branch dropped commits",
  "check-failed": "a check on the PR head failed, classified",
  "base-moved": "the base branch moved under the PR",
  "review-submitted": "a trusted review on the PR",
  command: "a trusted `orchestra <command>` comment",
  correction:
    "any other trusted comment on the issue or its PR (not the answer to the question the task is blocked on)",
  "decision-receipted": "a run's receipt for a decision it was handed",
  "decision-requested": "a worker's decision request",
  "question-answered": "a trusted answer to a worker's question",
  "condition-met": "a question's condition came true",
  "question-expired": "a question stayed unanswered for 7 days",
  drift: "reconciliation found GitHub's labels differ from the task",
  "sub-issues-closed": "reconciliation or `sub_issues`: every sub-issue of a failed parent is closed",
  "installation-removed": "`installation.deleted`: the App was uninstalled",
  "access-lost": "`installation.suspend`, or `installation_repositories.removed` for the task's repository",
  "access-restored": "`installation.unsuspend`, or `installation_repositories.added` for the task's repository",
  "fleet-refresh":
    "reconciliation of a repository with `fleetIssue: true`, a push that changes `.github/orchestra.yml`, " +
    "or the fleet issue deleted, transferred or reopened (raised for the repository, issue 0)",
};

export function decide(ctx: Context, e: TaskEvent): Decision {
  const rows = TABLE[e.kind] as unknown as EventRows<EventKind>;
  const row = rows[ctx.task?.state ?? "none"];
  return withQuestionsClosed(ctx, withRevocation(ctx, row(ctx, e)));
}
