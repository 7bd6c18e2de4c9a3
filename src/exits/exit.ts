/**
 * A worker says it is done. Orchestra looks on GitHub for what the run
 * claims — its pull request — before believing the exit code: an open PR
 * moves the task to review, a merged one settles it, and none ends the run,
 * which is then classified from what GitHub shows (exit 0 with no PR is a
 * phantom, not a success). The answer never waits on a GitHub write.
 */
import { leaseRefused, Refusal } from "../refusal.js";
import { repoRef, type GitHubFor, type PullInfo } from "../github/port.js";
import { errorClass, errorText as errText } from "../github/errors.js";
import { instrument, newCounts } from "../github/instrument.js";
import type { Tasks } from "../apply/tasks.js";
import type { Ledger } from "../cost/ledger.js";
import type { ExitReport } from "../machine/events.js";
import type { ConfigResult } from "../config/repo.js";
import type { Worker } from "../workers/workers.js";
import type { Run, Task } from "../store/generated/sqlite/client.js";
import type { Leases } from "../claims/leases.js";
import { verdictOf, type SettleGitHub, type Settler } from "./settle.js";
import type { ExitQueries } from "./queries.js";
import { neverStarted } from "../machine/model.js";

/** What verifying an exit reads: the run's PRs, then the facts of what it left. */
type ExitGitHub = SettleGitHub;

export interface ExitAnswer {
  outcome: "review" | "classified";
  prNumber?: number;
  class?: string;
  recovery?: string;
  evidence: Record<string, unknown>;
}

export interface ExitsDeps {
  queries: ExitQueries;
  tasks: Tasks;
  leases: Leases;
  settler: Settler;
  githubFor: GitHubFor;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  ledger: Ledger;
  clock: { now(): Date };
  /**
   * GitHub's word on the pull request an exit names, from the delivery GitHub sent when it opened (waiting briefly
   * for it); null when none shows the run's branch at the pushed head, and the exit reads GitHub instead.
   */
  pullEvidence?: (
    installationId: number,
    number: number,
    expect: { repo: string; branch: string; headSha: string },
  ) => Promise<PullInfo | null>;
  /** Called after the exit has read its run and GitHub, before its transition: tests race other events there. */
  beforeTransition?: (runId: string) => Promise<void>;
}

const PENDING = (why: string): ExitAnswer => ({ outcome: "classified", evidence: { pending: true, why } });

/** The answer to an exit whose run's own PR had already moved the task to review. */
function reviewOf(run: Run): ExitAnswer {
  return {
    outcome: "review",
    prNumber: run.prNumber!,
    evidence: {
      pr: run.prNumber,
      ...(run.headSha ? { headSha: run.headSha } : {}),
      branch: run.branch,
      note: "the pull request moved the task to review before the exit came; the exit's report is recorded",
    },
  };
}

/** What an exit that changed nothing (or only recorded its report) answers: review, or the class its run has. */
function answerOf(run: Run, task: Task | null): ExitAnswer {
  if (run.state === "review" && run.prNumber !== null) return reviewOf(run);
  if (task?.state === "review" && task.prNumber !== null)
    return {
      outcome: "review",
      prNumber: task.prNumber,
      evidence: { pr: task.prNumber, note: "the task is already in review" },
    };
  const v = verdictOf(run);
  return v
    ? { outcome: "classified", ...(run.prNumber ? { prNumber: run.prNumber } : {}), ...v }
    : PENDING("not classified yet; Orchestra classifies it on its next sweep");
}

export class Exits {
  constructor(readonly deps: ExitsDeps) {}

  async exit(worker: Worker | null, runId: string, report: ExitReport): Promise<ExitAnswer> {
    const { leases } = this.deps;
    const { run, task } = await leases.runOf(worker, runId);
    if (run.leaseEpoch !== report.leaseEpoch)
      throw leaseRefused("stale lease epoch: this run's lease has another epoch", "stale-epoch");
    // The run's PR was seen first (its webhook, or this exit sent before whose answer was lost): the exit agrees
    // with it. Nothing to ask GitHub; its report is recorded through the machine, which refuses only a successor.
    if (run.state === "review" && run.prNumber !== null) {
      const pr = { number: run.prNumber, headSha: run.headSha ?? task.headSha ?? "", merged: false as const };
      const r = await this.deps.tasks.raise(
        { task, run },
        { kind: "run-exited", runId, leaseEpoch: report.leaseEpoch, report, pr },
      );
      if (r.outcome === "refused") throw leaseRefused(r.message, r.reason);
      return this.#recorded(runId);
    }
    if (run.state === "exited" && run.report !== null) return answerOf(run, null);
    if (report.branch !== undefined && report.branch !== run.branch) {
      throw new Refusal(
        "invalid",
        `the reported branch ${report.branch} is not this run's branch ${run.branch}: ` +
          `push the work to ${run.branch} and report that`,
        { reason: "wrong-branch" },
      );
    }
    await this.#assertNotSuperseded(run, task);
    const cfg = await this.deps.configs.get(task.installationId, task.repo);
    if (!cfg.ok)
      throw new Refusal(
        "unavailable",
        "the repository's .github/orchestra.yml is invalid; fix it and send the exit again",
      );

    const counts = newCounts();
    try {
      return await this.#verify(task, run, report, instrument(await this.deps.githubFor(task.installationId), counts));
    } finally {
      await this.deps.ledger.add(task.id, counts);
    }
  }

  /**
   * A late exit (its lease expired or stalled) is still heard while no
   * successor has claimed the task; once one has, the worker must drop the
   * run's work. Checked before GitHub is asked anything; the machine checks
   * again in the transaction.
   */
  async #assertNotSuperseded(run: Run, task: Task): Promise<void> {
    if (run.state === "revoked" || neverStarted(run.state))
      throw leaseRefused(`lease no longer held: ${run.endReason ?? run.state}`, run.state);
    if (task.runId === run.id) return;
    const later = await this.deps.queries.laterRuns({ id: run.id, taskId: task.id, startedAt: run.startedAt });
    if (later > 0 || task.state === "done" || task.state === "cancelled") {
      throw leaseRefused(
        `superseded: ${later > 0 ? "another run holds the task now" : `the task is ${task.state}`}; ` +
          `drop this run's work`,
        "superseded",
      );
    }
  }

  async #recorded(runId: string): Promise<ExitAnswer> {
    const run = await this.deps.queries.run(runId);
    const task = run ? await this.deps.queries.task(run.taskId) : null;
    if (!run) throw new Refusal("not-found", `no run ${runId}`);
    return answerOf(run, task);
  }

  async #verify(task: Task, run: Run, report: ExitReport, github: ExitGitHub): Promise<ExitAnswer> {
    const { tasks } = this.deps;
    const runId = run.id;
    const r = repoRef(task.repo);
    const branch = run.branch;
    let branchPulls: PullInfo[];
    try {
      // Only a PR from the run's own branch in the task's repository proves the exit:
      // a fork, or another branch that merely says "Closes #n", does not.
      const shown =
        report.prNumber !== undefined && report.headSha !== undefined && this.deps.pullEvidence
          ? await this.deps.pullEvidence(task.installationId, report.prNumber, {
              repo: task.repo,
              branch,
              headSha: report.headSha,
            })
          : null;
      branchPulls = shown
        ? [shown]
        : (await github.pullsForBranch(r, branch, "all")).filter(
            (p) => p.headRef === branch && p.headRepo === task.repo,
          );
    } catch (err) {
      await tasks.recordRunError(run.id, errorClass(err, "error"), `looking for the pull request: ${errText(err)}`);
      throw new Refusal(
        "unavailable",
        `could not verify the exit on GitHub (${errText(err)}); nothing changed, send the exit again`,
      );
    }
    const open = branchPulls.find((p) => p.state === "open");
    const merged = branchPulls.find((p) => p.merged);
    const pr = open
      ? { number: open.number, headSha: open.headSha, merged: false as const }
      : merged
        ? {
            merged: true as const,
            merge: {
              prNumber: merged.number,
              mergeSha: merged.mergeCommitSha ?? "",
              headSha: merged.headSha,
              mergedAt: this.deps.clock.now(),
            },
          }
        : null;
    await this.deps.beforeTransition?.(runId);
    const result = await tasks.raise(
      { task, run },
      { kind: "run-exited", runId, leaseEpoch: report.leaseEpoch, report, pr },
    );
    if (result.outcome === "refused") throw leaseRefused(result.message, result.reason);
    // Unchanged, or the PR's webhook moved the run to review meanwhile and the exit only recorded its report.
    if (result.outcome === "unchanged" || result.decision.run?.from.includes("review")) return this.#recorded(runId);
    if (open)
      return { outcome: "review", prNumber: open.number, evidence: { pr: open.number, headSha: open.headSha, branch } };
    if (merged)
      return {
        outcome: "classified",
        prNumber: merged.number,
        class: "merged",
        recovery: "settle",
        evidence: { pr: merged.number, merged: true },
      };
    // No PR: the run is over and its lease with it; what it left is classified.
    // The branch's PRs were just read (the same branch gathering uses); no second read.
    const verdict = await this.deps.settler.settle(run.id, { github, knownPulls: branchPulls });
    if (!verdict)
      return PENDING("GitHub could not be asked about the run's branch; Orchestra classifies it on its next sweep");
    return { outcome: "classified", class: verdict.class, recovery: verdict.recovery, evidence: verdict.evidence };
  }
}
