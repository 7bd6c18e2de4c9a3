/**
 * Settling a run that ended without a PR (exit, expired lease, revoked
 * worker): gather the facts from GitHub, classify them purely, and raise the
 * class as one event — the machine records it and the recovery it names in
 * one transaction. GitHub failing while the facts are gathered leaves the run
 * unclassified (never "absent"), with the error in its ring and a backoff
 * before it is asked about again.
 */
import type { Logger } from "pino";
import { GitHubError, repoRef, type GitHub, type GitHubFor, type PullInfo } from "../github/port.js";
import { errorClass, errorText as errText, failureOf } from "../github/errors.js";
import { DEFAULT_RETRY, retryDecision, type RetryPolicy } from "../retry/schedule.js";
import { parseRing, windowFromOf } from "../store/error-ring.js";
import { instrument, newCounts } from "../github/instrument.js";
import { gatherFacts, type FactsGitHub } from "../outcomes/gather.js";
import { classify, type Verdict } from "../outcomes/classify.js";
import type { Tasks } from "../apply/tasks.js";
import { parseJson } from "../apply/views.js";
import type { Ledger } from "../cost/ledger.js";
import type { MergeFact } from "../machine/events.js";
import type { Run } from "../store/generated/sqlite/client.js";
import type { ExitQueries } from "./queries.js";

export type SettleGitHub = FactsGitHub & Pick<GitHub, "getPull">;

/** 30 s, doubling, at most 30 min: how long a run GitHub could not be asked about waits. */
export function classifyBackoffMs(failures: number): number {
  return Math.min(30 * 60_000, 30_000 * 2 ** Math.max(0, failures - 1));
}

export function verdictOf(run: Pick<Run, "class" | "recovery" | "evidence">): Verdict | null {
  if (!run.class || !run.recovery) return null;
  return {
    class: run.class as Verdict["class"],
    recovery: run.recovery as Verdict["recovery"],
    evidence: parseJson<Record<string, unknown>>(run.evidence) ?? {},
  };
}

export class Settler {
  constructor(
    readonly deps: {
      queries: Pick<ExitQueries, "run" | "task">;
      tasks: Tasks;
      githubFor: GitHubFor;
      ledger: Ledger;
      clock: { now(): Date };
      log: Logger;
      /** How long and how often facts are asked for before the task is blocked (retry/schedule.ts's defaults). */
      retry?: Partial<Pick<RetryPolicy, "maxAttempts" | "windowMs">>;
      /** After a run's class is recorded (the breaker counts them). */
      onClassified?: (installationId: number, repo: string) => Promise<unknown>;
    },
  ) {}

  /**
   * Classifies the run and applies its recovery. Returns the recorded
   * verdict, or null while it cannot be classified yet. `github` and
   * `knownPulls` let an exit reuse what it has just read.
   */
  async settle(runId: string, opts: { github?: SettleGitHub; knownPulls?: PullInfo[] } = {}): Promise<Verdict | null> {
    const { queries, tasks } = this.deps;
    const run = await queries.run(runId);
    if (!run) return null;
    if (run.class) return verdictOf(run);
    const task = await queries.task(run.taskId);
    if (!task || task.state !== "claimed" || task.runId !== run.id) return null; // the task moved on: nothing owed
    const trigger = run.state === "exited" ? "exit" : "lease-expired";
    const counts = newCounts();
    const gh: SettleGitHub = opts.github ?? instrument(await this.deps.githubFor(task.installationId), counts);
    let verdict: Verdict;
    let merge: MergeFact | undefined;
    try {
      verdict = classify(await gatherFacts(gh, repoRef(task.repo), run, trigger, opts.knownPulls));
      if (verdict.recovery === "settle") merge = await this.#mergeOf(gh, task.repo, verdict);
    } catch (err) {
      // A token GitHub will not mint is the installation's trouble, not the run's: the sweep holds the installation.
      if (err instanceof GitHubError && err.tokenFailure) throw err;
      await this.#notYet(task.id, run, err);
      return null;
    } finally {
      await this.deps.ledger.add(task.id, counts);
    }
    const r = await tasks.raise(
      { task },
      { kind: "run-classified", runId: run.id, verdict, ...(merge ? { merge } : {}) },
    );
    if (r.outcome !== "applied") return null;
    await this.deps
      .onClassified?.(task.installationId, task.repo)
      .catch((err: unknown) =>
        this.deps.log.warn(
          { repo: task.repo, err: errText(err) },
          "breaker check failed; the next classification checks again",
        ),
      );
    return verdict;
  }

  /**
   * Facts that could not be gathered are asked for again with a growing
   * backoff, on the schedule deliveries and effects retry on: through a
   * GitHub outage for the retry window, a failure that asking again does not
   * fix (a missing base branch, a 403) a few times. Then the task is blocked
   * with the failure instead of holding its slot, claimed, forever.
   */
  async #notYet(taskId: string, run: Run, err: unknown): Promise<void> {
    const { tasks, clock, log } = this.deps;
    const now = clock.now();
    const attempts = run.classifyFailures + 1;
    const decision = retryDecision({
      failure: failureOf(err),
      attempts,
      firstFailedAt: attempts <= 1 ? null : windowFromOf(parseRing(run.errors)),
      now,
      policy: { ...DEFAULT_RETRY, ...this.deps.retry },
    });
    const message = `gathering facts: ${errText(err)}`;
    if ("park" in decision) {
      log.error({ run: run.id, err: errText(err) }, `run not classified after ${attempts} tries: task blocked`);
      await tasks.raise(
        { taskId },
        { kind: "recovery-stuck", runId: run.id, stage: "facts", why: `${errText(err)} (${decision.why})` },
      );
      return;
    }
    await tasks.recordRunError(run.id, errorClass(err, "facts"), message, decision.firstFailedAt);
    await tasks.deferClassification(run.id, new Date(now.getTime() + classifyBackoffMs(attempts)));
    log.warn(
      { run: run.id, err: errText(err) },
      "run not classified yet: GitHub could not be asked; a later sweep retries",
    );
  }

  async #mergeOf(gh: SettleGitHub, repo: string, v: Verdict): Promise<MergeFact> {
    const number = (v.evidence["pr"] as { number?: number } | null)?.number;
    const pr = number ? await gh.getPull(repoRef(repo), number) : null;
    if (!pr?.merged) throw new Error(`pull request #${number} is not merged on GitHub`);
    return {
      prNumber: pr.number,
      mergeSha: pr.mergeCommitSha ?? "",
      headSha: pr.headSha,
      mergedAt: this.deps.clock.now(),
    };
  }
}
