/**
 * Every event the task state machine understands. Webhook handlers, the
 * worker API, sweeps and the effects executor turn what they saw into one of
 * these; the machine decides what it means for the task. Rows exist for every
 * event in every state, including events that no capability raises yet, so a
 * capability adds a raiser, never a second write path.
 */
import type { Verdict } from "../outcomes/classify.js";
import type { InfraDeath } from "../outcomes/facts.js";
import type { FailingCheck } from "./model.js";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** What a worker reported at exit (stored on the run as JSON). */
export interface ExitReport {
  leaseEpoch: string;
  exitCode: number;
  branch?: string;
  headSha?: string;
  /** The pull request the worker says it opened or found: verified from GitHub's delivery for it, or a read. */
  prNumber?: number;
  testsPassed?: boolean;
  dirty?: boolean;
  turnCapHit?: boolean;
  handoff?: boolean;
  lastToolCalls?: string[];
  question?: string;
  /** The run died of a run-level infrastructure failure (not the agent's doing). */
  infra?: InfraDeath;
  usage?: Usage;
  sessionRef?: string;
  harness?: string;
  model?: string;
}

export interface PullFact {
  number: number;
  headSha: string;
}

export interface MergeFact {
  prNumber: number;
  mergeSha: string;
  headSha: string;
  mergedAt: Date;
  /** GitHub's delivery of the merge said the repository deletes merged branches itself; absent: not known. */
  deletesBranch?: true;
}

export interface IssueFact {
  title: string;
  body: string;
  labels: string[];
  /** The open issues blocking it ("owner/repo#n"), when read; absent: not known yet. */
  blockedBy?: string[];
  /** GitHub's repository id (a renamed repository keeps its tasks). */
  repoId?: number;
}

export type CommandName = "retry" | "resume" | "hold" | "cancel" | "status" | "verify" | "help";

export type TaskEvent =
  // --- the label queue
  | { kind: "queue-label"; actor: string; issue: IssueFact }
  | { kind: "queue-label-untrusted"; actor: string; why: string; deliveryId: string }
  | { kind: "queue-label-removed"; actor: string }
  /**
   * Any other change to an agent:* label by someone not trusted
   * (an untrusted queue label added is `queue-label-untrusted`).
   */
  | {
      kind: "label-untrusted";
      actor: string;
      why: string;
      label: string;
      change: "added" | "removed";
      deliveryId: string;
    }
  /**
   * `labels`: the labels the close event's payload shows on the issue (absent when a sweep raises it), positive
   * evidence for taking off stale agent:* labels at once; `deliveryId` keys those removals.
   */
  | { kind: "issue-closed"; actor: string; completed: boolean; labels?: string[]; deliveryId?: string }
  | { kind: "config-invalid"; problems: string[] }
  // --- runs and leases
  | { kind: "claim"; mode: "worker" | "dispatch"; runId: string; leaseEpoch: string; workerId: string | null }
  | { kind: "dispatched"; runId: string; workflowRunId: number | null }
  /**
   * `scope: "repository"`: GitHub refuses every dispatch there (no such workflow, no `workflow_dispatch` trigger,
   * Actions disabled, no permission): the raiser opens the repository's breaker in the same transaction, and
   * `breaker.opened` says whether this refusal opened it (then its one comment goes on this issue).
   */
  | {
      kind: "dispatch-refused";
      runId: string;
      why: string;
      scope?: "task" | "repository";
      breaker?: { opened: boolean; until: Date };
    }
  /** `renew: false`: a heartbeat past a cap, recorded (usage, progress) without renewing the lease. */
  | { kind: "heartbeat"; runId: string; leaseEpoch: string; usage?: Usage; progress?: string; renew?: false }
  | { kind: "lease-expired"; runId: string; leaseEpoch: string }
  | { kind: "lease-stalled"; runId: string; leaseEpoch: string }
  | { kind: "worker-revoked"; runId: string; workerName: string }
  /** The worker gives the run back before its agent started (preflight: clone, disk, agent binary). */
  | { kind: "run-released"; runId: string; leaseEpoch: string; reason: string }
  | {
      kind: "run-exited";
      runId: string;
      leaseEpoch: string;
      report: ExitReport;
      pr: null | { number: number; headSha: string; merged: false } | { merged: true; merge: MergeFact };
    }
  | { kind: "run-classified"; runId: string; verdict: Verdict; merge?: MergeFact }
  | { kind: "pr-published"; runId: string; pr: PullFact }
  | { kind: "publish-refused"; runId: string; why: string }
  | { kind: "branch-kept"; runId: string; why: string }
  | { kind: "sweep-failed"; why: string; retryAt: Date }
  /**
   * The recovery of a run that ended without a PR cannot finish: its facts could not be gathered, or its pull
   * request could not be opened, after the bounded tries of the retry schedule. `why` is the last failure.
   */
  | { kind: "recovery-stuck"; runId: string; stage: "facts" | "publish"; why: string }
  // --- scheduling
  /** `unsupported`: why none were read (a host without issue dependencies); the task is not held for them. */
  | { kind: "blockers-read"; blockers: string[]; unsupported?: string }
  | { kind: "breaker-opened"; klass: string; runs: string[]; until: Date }
  // --- after submission
  /** `draft`: opened as a draft, which does not end a live run (its exit, or ready_for_review, does). */
  | { kind: "pr-opened"; pr: PullFact; branch: string; draft?: boolean }
  | { kind: "pr-merged"; merge: MergeFact }
  | { kind: "pr-closed"; pr: PullFact }
  | {
      kind: "check-failed";
      pr: PullFact;
      verdict: Verdict;
      /** What a rerun reruns: Actions workflow runs, or other apps' check suites. */
      reruns: Array<{ workflowRunId: number } | { checkSuiteId: number }>;
      /** Names this failure (the failing check runs' ids): the same failure reported twice is one rerun. */
      failureKey: string;
      /** The failing checks, for a fix-checks continuation. */
      failing: FailingCheck[];
    }
  | { kind: "base-moved"; pr: PullFact; mergeable: "behind" | "conflicting"; baseSha: string }
  | { kind: "pr-synchronized"; pr: PullFact }
  /** A push moved the task's branch: sign-offs given for an older head are stale now. */
  | { kind: "branch-pushed"; branch: string; headSha: string }
  /** A forced push to the task's branch dropped commits that were on it. */
  | { kind: "branch-rewritten"; branch: string; before: string; after: string; dropped: number; pusher: string }
  | {
      kind: "review-submitted";
      pr: PullFact;
      review: "changes_requested" | "approved" | "commented";
      reviewId: number;
      author: string;
      body: string;
      comments: Array<{ path: string; line: number | null; body: string; author: string }>;
    }
  // --- human input (trust is judged by whoever raises these)
  | {
      kind: "command";
      command: CommandName;
      author: string;
      /**
       * The comment that carried it; null for an operator's command through
       * the API or CLI (no reactions, no reply: the caller gets the answer).
       */
      commentId: number | null;
      phase?: string;
      /** verify: the head of the task's branch or PR it signs off. */
      headSha?: string | null;
      /** A command that did not parse: what was wrong, said in the reply. */
      problem?: string;
      /** help: the answer, generated from the command table. */
      help?: string;
    }
  | {
      kind: "correction";
      author: string;
      commentId: number;
      body: string;
      edited?: boolean;
      /** Where it was written: the task's issue (the default) or its pull request. */
      on?: "issue" | "pull";
      /** The task already holds a decision from this comment (it came again): nothing more happens. */
      recorded?: boolean;
    }
  | { kind: "decision-receipted"; decisionId: string; runId: string; commentId: number | null }
  | {
      kind: "decision-requested";
      runId: string;
      leaseEpoch: string;
      decisionId: string;
      question: string;
      blocks: "run" | "nothing";
      condition?: string;
      /** The issue or PR the condition waits on (`owner/repo#n`, lower case). */
      awaits?: string;
      subject?: string;
    }
  | {
      kind: "question-answered";
      decisionId: string;
      author: string;
      answer: string;
      /**
       * The comment that answers, when it is a comment of its own (a sign-off's answer is its verify): the
       * answer is keyed by it, and when no question waits any more it is taken as a correction instead.
       */
      commentId?: number;
      on?: "issue" | "pull";
    }
  | { kind: "condition-met"; decisionId: string; condition: string }
  | { kind: "question-expired"; decisionId: string; question: string }
  // --- reconciliation
  | { kind: "drift"; labels: string[] }
  /** A failed task whose sub-issues are all closed: superseded by them. */
  | { kind: "sub-issues-closed"; subIssues: string[] }
  /** The App was uninstalled. */
  | { kind: "installation-removed"; why: string }
  /** The App cannot reach the task's repository for now (installation suspended, repository removed from it). */
  | { kind: "access-lost"; why: string }
  /** It can again (unsuspended, the repository added back). */
  | { kind: "access-restored"; why: string }
  // --- operator surfaces
  /**
   * The repository's fleet issue should catch up (reconcile, or the
   * issue was deleted, transferred or reopened); raised for issue 0.
   */
  | { kind: "fleet-refresh"; why: string };

export type EventKind = TaskEvent["kind"];
export type EventOf<K extends EventKind> = Extract<TaskEvent, { kind: K }>;

/** Every event kind, in the order the transition table documents them. */
export const EVENT_KINDS = [
  "queue-label",
  "queue-label-untrusted",
  "queue-label-removed",
  "label-untrusted",
  "issue-closed",
  "config-invalid",
  "claim",
  "dispatched",
  "dispatch-refused",
  "heartbeat",
  "lease-expired",
  "lease-stalled",
  "worker-revoked",
  "run-released",
  "run-exited",
  "run-classified",
  "pr-published",
  "publish-refused",
  "branch-kept",
  "sweep-failed",
  "recovery-stuck",
  "blockers-read",
  "breaker-opened",
  "pr-opened",
  "pr-merged",
  "pr-closed",
  "pr-synchronized",
  "branch-pushed",
  "branch-rewritten",
  "check-failed",
  "base-moved",
  "review-submitted",
  "command",
  "correction",
  "decision-receipted",
  "decision-requested",
  "question-answered",
  "condition-met",
  "question-expired",
  "drift",
  "sub-issues-closed",
  "installation-removed",
  "access-lost",
  "access-restored",
  "fleet-refresh",
] as const satisfies readonly EventKind[];

/** The run an event is about, when it names one. */
export function runIdOf(e: TaskEvent): string | null {
  return "runId" in e ? e.runId : null;
}

// Adding an event kind without listing it above fails to compile here.
const everyKindListed: [Exclude<EventKind, (typeof EVENT_KINDS)[number]>] extends [never] ? true : never = true;
void everyKindListed;
