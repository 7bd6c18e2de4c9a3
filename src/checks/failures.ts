/**
 * Checks failing on a task's PR head (`check_run`, `check_suite` and
 * `workflow_run` completions): only a check GitHub matches to the task's PR
 * counts (its suite's pull requests name it: a suite of this repository on
 * the PR's branch, never a fork's, even on the same sha). Make sure the sha
 * is still the head, read the PR's check runs on it, classify purely, and
 * raise the verdict as one event. `infra` reruns only the failed jobs
 * (Actions) or re-requests the suite (other apps) within the per-sha budget;
 * anything else sends the task back to its agent with a `fix-checks`
 * continuation carrying each failing check's summary and log tail (the last
 * bytes of at most LOG_TAILS job logs).
 *
 * A failure set is handled once per head: an event about a check or suite
 * already in the handled set (a redelivery, the other jobs of a failed
 * matrix, the suite's own completion) reads nothing from GitHub, and a read
 * that finds the same set again reads no logs. The memory is this process's:
 * after a restart a repeated event reads once more, and the machine's
 * idempotent events and effects keep it harmless.
 */
import type { Logger } from "pino";
import { repoRef, type CheckRunInfo, type GitHub } from "../github/port.js";
import type { Tasks } from "../apply/tasks.js";
import type { ConfigResult } from "../config/repo.js";
import { classify, isFailed } from "../outcomes/classify.js";
import type { FailingCheck } from "../machine/model.js";
import { rerunsUsedOn } from "../effects/check-run-view.js";
import { CHECK_RUN_NAME } from "../texts/check-run.js";
import type { ChecksQueries } from "./queries.js";

/** The reads a check failure needs. */
export type ChecksGitHub = Pick<GitHub, "getPull" | "checkRunsForRef" | "jobLogTail">;

/** Failing checks whose log tails are read, and how many lines each. */
const LOG_TAILS = 5;
const LOG_LINES = 60;
/** Heads whose handled failure set is remembered (the oldest forgotten first). */
const REMEMBERED = 2000;

/** What an event says failed: one check run, or one check suite (a suite's or a workflow run's completion). */
export type FailureSource = { checkRunId: number } | { checkSuiteId: number };

/** A failure set raised on a PR head: its key, its check runs and their suites. */
interface Handled {
  failureKey: string;
  checkRuns: Set<number>;
  suites: Set<number>;
}

export interface CheckFailuresDeps {
  queries: Pick<ChecksQueries, "reviewedOn">;
  /** Only for the reruns already used on a head (effects/check-run-view.ts). */
  /** The effects already recorded on the PR head: the reruns used so far. */
  effects: Parameters<typeof rerunsUsedOn>[0];
  tasks: Tasks;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  log: Logger;
}

export class CheckFailures {
  readonly #handled = new Map<string, Handled>();

  constructor(readonly deps: CheckFailuresDeps) {}

  /**
   * A check, suite or workflow run completed on `headSha` with a failing
   * conclusion. `prNumbers`: the pull requests GitHub matched to its suite
   * (none for a fork's branch: then it is no task's check); `source`: the
   * check run or suite the event is about.
   */
  async onFailure(
    github: ChecksGitHub,
    installationId: number,
    repo: string,
    headSha: string,
    prNumbers: number[],
    source: FailureSource,
  ): Promise<number> {
    const { queries, effects } = this.deps;
    const r = repoRef(repo);
    if (prNumbers.length === 0) return 0;
    const tasks = await queries.reviewedOn(repo, prNumbers);
    let raised = 0;
    for (const task of tasks) {
      const memo = `${repo}#${task.prNumber}@${headSha}`;
      const seen = this.#handled.get(memo);
      if (
        seen &&
        ("checkRunId" in source ? seen.checkRuns.has(source.checkRunId) : seen.suites.has(source.checkSuiteId))
      ) {
        this.deps.log.debug({ repo, pr: task.prNumber, headSha, source }, "check failure already handled");
        continue;
      }
      const pr = await github.getPull(r, task.prNumber!);
      // A failure on a commit that is no longer the head is history, not a reason to act.
      if (!pr || pr.state !== "open" || pr.headSha !== headSha) continue;
      // Only the PR's own checks: a fork's or another branch's suite on the same sha does not steer the task.
      const checks = (await github.checkRunsForRef(r, headSha)).filter(
        (c) => c.name !== CHECK_RUN_NAME && c.pullRequests.includes(pr.number),
      );
      const failing = checks.filter((c) => isFailed(toFact(c)));
      if (failing.length === 0) continue;
      const failureKey = failing
        .map((c) => c.id)
        .sort((a, b) => a - b)
        .join("-");
      if (seen?.failureKey === failureKey) continue;
      const cfg = await this.deps.configs.get(installationId, repo);
      const config = cfg.ok ? cfg.config : null;
      const rerunsUsed = await rerunsUsedOn(effects, task.id, pr.number, headSha);
      // A timeout after this commit was rerun: every attempt of the timed-out checks tells hang from runner.
      const timedOut =
        rerunsUsed > 0 && failing.some((c) => c.conclusion === "timed_out")
          ? (await github.checkRunsForRef(r, headSha, { all: true }))
              .filter((c) => c.conclusion === "timed_out" && c.pullRequests.includes(pr.number))
              .map((c) => ({ name: c.name, checkRunId: c.id }))
          : undefined;
      const verdict = classify({
        trigger: "check-failed",
        run: { exitCode: null },
        pr: { number: pr.number, state: "open", headSha },
        branch: null,
        checks: checks.map(toFact),
        rerunsUsed,
        ...(timedOut ? { timedOut } : {}),
        rerunBudget: config?.limits.rerunBudget ?? 2,
        ...(config && config.infraPatterns.length > 0 ? { infraPatterns: config.infraPatterns } : {}),
      });
      const failingChecks =
        verdict.class === "checks-failed" ? await this.#details(github, r, failing) : failing.map(brief);
      const out = await this.deps.tasks.raise(
        { taskId: task.id },
        {
          kind: "check-failed",
          pr: { number: pr.number, headSha },
          verdict,
          reruns: rerunTargets(failing),
          failureKey,
          failing: failingChecks,
        },
      );
      this.#remember(memo, {
        failureKey,
        checkRuns: new Set(failing.map((c) => c.id)),
        suites: new Set(failing.flatMap((c) => (c.checkSuiteId === null ? [] : [c.checkSuiteId]))),
      });
      this.deps.log.info(
        { repo, pr: pr.number, headSha, class: verdict.class, recovery: verdict.recovery, outcome: out.outcome },
        "check failure on a task's pull request",
      );
      raised++;
    }
    return raised;
  }

  #remember(memo: string, handled: Handled): void {
    this.#handled.delete(memo);
    this.#handled.set(memo, handled);
    if (this.#handled.size > REMEMBERED) this.#handled.delete(this.#handled.keys().next().value!);
  }

  /** Summaries and the tails of the Actions job logs of the first few failing checks. */
  async #details(
    github: ChecksGitHub,
    r: ReturnType<typeof repoRef>,
    failing: CheckRunInfo[],
  ): Promise<FailingCheck[]> {
    const out: FailingCheck[] = [];
    for (const [i, c] of failing.entries()) {
      const check = brief(c);
      if (i < LOG_TAILS && c.workflowRunId !== null) {
        // A check run from Actions has its job's id; a log that expired is simply absent.
        const tail = await github.jobLogTail(r, c.id, LOG_LINES);
        if (tail) check.logTail = tail;
      }
      out.push(check);
    }
    return out;
  }
}

function toFact(c: CheckRunInfo) {
  return { name: c.name, headSha: c.headSha, status: c.status, conclusion: c.conclusion, output: c.output };
}

function brief(c: CheckRunInfo): FailingCheck {
  return {
    name: c.name,
    conclusion: c.conclusion,
    ...(c.output.title ? { title: c.output.title.slice(0, 500) } : {}),
    ...(c.output.summary ? { summary: c.output.summary.slice(0, 4000) } : {}),
  };
}

/** What to rerun: each Actions workflow run with a failed job once, else each other app's check suite once. */
export function rerunTargets(failing: CheckRunInfo[]): Array<{ workflowRunId: number } | { checkSuiteId: number }> {
  const runs = new Set<number>();
  const suites = new Set<number>();
  for (const c of failing) {
    if (c.workflowRunId !== null) runs.add(c.workflowRunId);
    else if (c.checkSuiteId !== null) suites.add(c.checkSuiteId);
  }
  return [
    ...[...runs].map((workflowRunId) => ({ workflowRunId })),
    ...[...suites].map((checkSuiteId) => ({ checkSuiteId })),
  ];
}
