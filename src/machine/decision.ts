/**
 * What the machine reads and what it answers. `decide` receives plain views
 * of the task and its runs (never a database handle) and returns a decision:
 * a transition to apply in one fenced transaction, an unchanged state (maybe
 * with effects, such as a reply), or a refusal with a reason.
 */
import type { RepoConfig } from "../config/repo.js";
import type { Continuation, RunState, TaskState } from "./model.js";
import type { EffectSpec } from "./effects.js";

export interface TaskView {
  id: string;
  installationId: number;
  repo: string;
  issue: number;
  title: string;
  body: string;
  state: TaskState;
  attempt: number;
  priority: number;
  branch: string;
  continuation: Continuation | null;
  prNumber: number | null;
  /** The head commit of the task's PR as last seen. */
  headSha: string | null;
  runId: string | null;
  leaseEpoch: string | null;
  leaseExpiresAt: Date | null;
  workerId: string | null;
  label: string | null;
  backoffUntil: Date | null;
  backoffCount: number;
  diagnostic: string | null;
  /** Open issues GitHub lists as blocking this one ("owner/repo#n"); null when none. */
  blockedBy: string[] | null;
  /** When the blockers were last read; null: not yet. */
  blockersAt: Date | null;
  /** Run-level infrastructure deaths re-queued without using up an attempt. */
  freeRequeues: number;
  costUsd: number;
  version: number;
}

export interface RunView {
  id: string;
  attempt: number;
  state: RunState;
  mode: string;
  leaseEpoch: string;
  leaseExpiresAt: Date;
  branch: string;
  prNumber: number | null;
  class: string | null;
  recovery: string | null;
  endReason: string | null;
  startedAt: Date;
  endedAt: Date | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Dispatch mode: the Actions run linked to this run, once known. */
  workflowRunId: number | null;
  /** The last progress its heartbeats reported (a digest), and when it last changed. */
  progress: string | null;
  progressAt: Date | null;
  /** Its lease stopped renewing because progress stood still. */
  stalled: boolean;
  /** broker: its worker is handed GitHub tokens, revoked when the lease ends. Absent: none. */
  credentials?: "broker";
  /** The worker's exit report is recorded on it. */
  reported: boolean;
}

/** Where the event happened: the task's issue, known even before a task exists. */
export interface Subject {
  installationId: number;
  repo: string;
  issue: number;
}

export interface Context {
  subject: Subject;
  task: TaskView | null;
  /** The run the event names (or the task's current run), when there is one. */
  run: RunView | null;
  /** The task's runs, oldest first (for attempt histories and receipts). */
  runs: RunView[];
  /** The repository's parsed config; null when `.github/orchestra.yml` is invalid. */
  config: RepoConfig | null;
  /** Whether the task already has a completion receipt. */
  hasReceipt: boolean;
  /** The service-wide dry-run switch (the repository's `dryRun` is in config). */
  dryRun: boolean;
  /** The fleet issue's debounce window (ORCHESTRA_FLEET_DEBOUNCE_SECONDS); unset: machine/fleet.ts's default. */
  fleetDebounceMs?: number;
  now: Date;
}

export type TaskPatch = Partial<
  Pick<
    TaskView,
    | "title"
    | "body"
    | "attempt"
    | "priority"
    | "continuation"
    | "prNumber"
    | "headSha"
    | "runId"
    | "leaseEpoch"
    | "leaseExpiresAt"
    | "workerId"
    | "backoffUntil"
    | "backoffCount"
    | "diagnostic"
    | "blockedBy"
    | "blockersAt"
    | "freeRequeues"
  >
> & { queuedAt?: Date; usage?: { inputTokens: number; outputTokens: number; costUsd: number } };

export type RunPatch = Partial<{
  state: RunState;
  endedAt: Date;
  endReason: string;
  leaseExpiresAt: Date;
  report: string;
  prNumber: number;
  headSha: string;
  class: string | null;
  recovery: string | null;
  evidence: string;
  recoveredAt: Date;
  workflowRunId: bigint;
  progress: string;
  progressAt: Date;
  stalled: boolean;
  classifyAfter: Date | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Appended to the run's error ring. */
  error: { class: string; message: string };
}>;

export interface NewTask {
  id: string;
  title: string;
  body: string;
  priority: number;
  branch: string;
  /** Open blockers read at queue time, and when; null: not read yet (the sweep reads them). */
  blockedBy: string[] | null;
  blockersAt: Date | null;
  repoId: number | null;
}

export interface NewRun {
  id: string;
  attempt: number;
  workerId: string | null;
  mode: "worker" | "dispatch";
  leaseEpoch: string;
  leaseExpiresAt: Date;
  branch: string;
  continuation: Continuation | null;
  /** broker: the repository's `credentials: broker` (worker runs only). */
  credentials?: "broker";
}

export interface NewReceipt {
  runId: string | null;
  prNumber: number;
  mergeSha: string;
  headSha: string;
  mergedAt: Date;
}

export interface NewDecision {
  id: string;
  runId: string | null;
  kind: "question" | "verify" | "correction" | "answer" | "approval";
  subject: string | null;
  body: string;
  author: string;
  source: string;
  condition?: string;
  /** A question's condition on an issue or PR: `owner/repo#n`, lower case. */
  awaits?: string;
  expiresAt?: Date;
  /** A sign-off: the head it binds. */
  headSha?: string | null;
  /**
   * Earlier decisions this one replaces (they stay as history): the same
   * subject (a later verify), or the same source prefix (an edited correction).
   */
  supersedes?: { subject: string } | { source: string };
}

export interface Applied {
  outcome: "applied";
  /** One line for the log and the operator. */
  summary: string;
  to: TaskState;
  /** For an event in state "none": the task to create. */
  create?: NewTask;
  task: TaskPatch;
  /** The label the new state shows (set with every applied transition). */
  label: string | null;
  /** Extra conditions on the task row besides its version. */
  fence?: { runId?: string | null; leaseEpoch?: string | null };
  run?: { id: string; from: RunState[]; patch: RunPatch };
  newRun?: NewRun;
  receipt?: NewReceipt;
  decisions?: NewDecision[];
  /** A question this answers (its answeredAt is set; already answered: nothing is written). */
  answering?: string;
  /** The task leaves the state its questions wait in: every open one closes (machine/waiting.ts). */
  closesQuestions?: true;
  effects: EffectSpec[];
}

export interface Unchanged {
  outcome: "unchanged";
  why: string;
  /** Effects of the event itself (a reply, removing a label someone added). */
  effects: EffectSpec[];
  decisions?: NewDecision[];
  answering?: string;
}

export type RefusalReason =
  | "stale-epoch"
  | "superseded"
  | "revoked"
  | "expired"
  | "exited"
  | "review"
  | "aborted"
  | "released"
  | "not-queued"
  | "dispatch-mode"
  | "backing-off"
  | "config-invalid"
  | "illegal"
  /** The lease stopped renewing: its heartbeats showed no progress for limits.stallSeconds. */
  | "stalled"
  /** The lease stops renewing: the run is past limits.maxRunSeconds. */
  | "over-time"
  /** The lease stops renewing: the task's model spend reached limits.maxCostUsd. */
  | "over-budget"
  /** Claims: the repository (or the service) is paused. */
  | "paused"
  /** Claims: open issues block this one. */
  | "blocked"
  /** Busy: the task kept changing under the call; send it again. */
  | "busy"
  /** Not the machine's: a check of the caller's in the same transaction refused it (a limit). */
  | "rolled-back";

export interface Refused {
  outcome: "refused";
  reason: RefusalReason;
  message: string;
  /** A refusal that people should hear about (a reply to a command) carries it here. */
  effects: EffectSpec[];
}

export type Decision = Applied | Unchanged | Refused;
