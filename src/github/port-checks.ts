/** The port's checks and Actions: check runs and suites, job logs, workflow dispatches (port.ts composes it all). */
import type { RepoRef } from "./repo-ref.js";

export interface CheckRunInfo {
  id: number;
  name: string;
  headSha: string;
  status: string;
  conclusion: string | null;
  output: { title?: string; summary?: string; text?: string };
  checkSuiteId: number | null;
  /** The Actions run behind this check, when it came from a workflow job. */
  workflowRunId: number | null;
  /**
   * The pull requests GitHub matches to the check's suite: open ones of this
   * repository whose head branch is the suite's. Empty for a suite of a
   * fork's branch, whatever its sha.
   */
  pullRequests: number[];
}

export interface NewCheckRun {
  name: string;
  headSha: string;
  status: "queued" | "in_progress" | "completed";
  conclusion?: "success" | "failure" | "neutral" | "action_required" | "cancelled" | "skipped" | "timed_out";
  title: string;
  summary: string;
}

export interface WorkflowRunInfo {
  id: number;
  /** The run's title (`run-name:`), where a dispatch names its Orchestra run. */
  displayTitle: string;
  status: string;
  createdAt: string;
}

export interface ChecksPort {
  /** The latest check run of each name on the ref (all pages); with `all`, every attempt of each (reruns too). */
  checkRunsForRef(r: RepoRef, ref: string, opts?: { all?: boolean }): Promise<CheckRunInfo[]>;
  /**
   * The last `lines` lines of an Actions job's log (a check run's id is its
   * job's id), read from at most the log's last LOG_TAIL_MAX_BYTES bytes (a
   * range request); null when GitHub keeps none (404, 410).
   */
  jobLogTail(r: RepoRef, jobId: number, lines: number): Promise<string | null>;
  /** Creates the check run; its id. */
  createCheckRun(r: RepoRef, run: NewCheckRun): Promise<number>;
  updateCheckRun(r: RepoRef, checkRunId: number, run: Omit<NewCheckRun, "name" | "headSha">): Promise<void>;
  rerequestCheckSuite(r: RepoRef, checkSuiteId: number): Promise<void>;
  rerunFailedJobs(r: RepoRef, workflowRunId: number): Promise<void>;
  /** Triggers workflow_dispatch; the Actions run id when GitHub reports it (newer GitHub), else null. */
  dispatchWorkflow(
    r: RepoRef,
    workflow: string,
    ref: string,
    inputs: Record<string, string>,
  ): Promise<{ workflowRunId: number | null }>;
  /**
   * Runs of a workflow started by workflow_dispatch since a time,
   * newest first (to find a dispatch whose answer was lost).
   */
  dispatchedRuns(r: RepoRef, workflow: string, since: Date): Promise<WorkflowRunInfo[]>;
}
