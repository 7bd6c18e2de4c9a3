/**
 * The classifier: a pure function from facts to exactly one failure class
 * (closed set), the one recovery that class names, and the evidence. The
 * service records its answer before performing the recovery; operators can
 * ask it the same question offline with `orchestra classify`.
 *
 * Precedence, first match wins: merged, question, turn cap, then the
 * trigger's own rules (exit/expiry: phantom, A, B, C; check failure: infra,
 * checks-failed; base moved: merge-conflict), else unknown.
 */
import type { CheckFact, Facts } from "./facts.js";
import { infraMatch } from "./infra-patterns.js";
import { repositoryPatterns, type LinePattern } from "./repository-patterns.js";

/** The closed set of failure classes, in the order of the design's table. */
export const FAILURE_CLASSES = [
  "merged",
  "phantom",
  "debris-empty",
  "debris-publishable",
  "debris-half-done",
  "infra",
  "checks-failed",
  "merge-conflict",
  "turn-cap-spinning",
  "question",
  "unknown",
] as const;

export type FailureClass = (typeof FAILURE_CLASSES)[number];

export type Recovery =
  | "settle"
  | "delete-branch-requeue"
  | "publish"
  | "hold-resume"
  | "rerun-failed-jobs"
  | "escalate"
  | "continue-fix-checks"
  | "continue-rebase"
  | "block-question";

export interface Verdict {
  class: FailureClass;
  recovery: Recovery;
  evidence: Record<string, unknown>;
}

const GREEN = new Set(["success", "neutral", "skipped"]);
const INFRA_CONCLUSIONS = new Set(["cancelled", "timed_out", "startup_failure", "stale"]);

function outputText(c: CheckFact): string {
  return [c.output?.title, c.output?.summary, c.output?.text].filter(Boolean).join("\n");
}

export function isFailed(c: CheckFact): boolean {
  return c.status === "completed" && c.conclusion !== null && !GREEN.has(c.conclusion);
}

/**
 * Why a failed check is infrastructure ("conclusion …", "output matches
 * <family>: <line>"), or null. `extra`: the repository's infraPatterns.
 */
export function infraReason(c: CheckFact, extra: readonly LinePattern[] = []): string | null {
  if (c.conclusion !== null && INFRA_CONCLUSIONS.has(c.conclusion)) return `conclusion ${c.conclusion}`;
  const hit = infraMatch(outputText(c), extra);
  return hit ? `output matches ${hit.family}: ${hit.line}` : null;
}

/** All head checks completed and green; absent checks are not green. */
export function allGreen(checks: readonly CheckFact[], headSha: string): { green: boolean; why: string } {
  const mine = checks.filter((c) => c.headSha === headSha);
  if (mine.length === 0) return { green: false, why: "no checks on the head commit" };
  const pending = mine.filter((c) => c.status !== "completed");
  if (pending.length) return { green: false, why: `pending: ${pending.map((c) => c.name).join(", ")}` };
  const failing = mine.filter(isFailed);
  if (failing.length)
    return { green: false, why: `failing: ${failing.map((c) => `${c.name} (${c.conclusion})`).join(", ")}` };
  // Completed without a conclusion is not proof of a pass.
  const silent = mine.filter((c) => c.conclusion === null);
  if (silent.length) return { green: false, why: `no conclusion: ${silent.map((c) => c.name).join(", ")}` };
  return { green: true, why: `${mine.length} check(s) green` };
}

export function classify(f: Facts): Verdict {
  const base = {
    trigger: f.trigger,
    exitCode: f.run.exitCode,
    pr: f.pr,
    branch: f.branch,
    ...(f.run.infraDeath ? { infraDeath: f.run.infraDeath } : {}),
    ...(f.run.stalled ? { stalled: f.run.stalled } : {}),
    ...(f.run.lastProgress ? { lastProgress: f.run.lastProgress } : {}),
  };
  if (f.pr?.state === "merged") {
    return {
      class: "merged",
      recovery: "settle",
      evidence: { ...base, why: `pull request #${f.pr.number} is merged` },
    };
  }
  if (f.run.question) {
    return {
      class: "question",
      recovery: "block-question",
      evidence: { ...base, question: f.run.question, why: "the worker asked a human" },
    };
  }
  if (f.run.turnCapHit) {
    return {
      class: "turn-cap-spinning",
      recovery: "escalate",
      evidence: { ...base, lastToolCalls: f.run.lastToolCalls ?? [], why: "the worker hit its turn cap" },
    };
  }
  switch (f.trigger) {
    case "exit":
    case "lease-expired":
      return classifyDebris(f, base);
    case "check-failed":
      return classifyChecks(f, base);
    case "base-moved":
      if (f.pr && f.pr.state === "open" && f.pr.mergeable === "CONFLICTING") {
        return {
          class: "merge-conflict",
          recovery: "continue-rebase",
          evidence: { ...base, why: `the base moved and pull request #${f.pr.number} conflicts` },
        };
      }
      return unknown(
        base,
        f.pr?.mergeable === "UNKNOWN"
          ? "GitHub has not computed mergeability yet"
          : "the base moved but nothing conflicts",
      );
  }
}

function unknown(base: Record<string, unknown>, why: string): Verdict {
  return { class: "unknown", recovery: "escalate", evidence: { ...base, why } };
}

/**
 * Work the last heartbeat of a run without an exit reported beyond what
 * GitHub shows `aheadBy` commits for: why, or null. Positive evidence that
 * work exists is never called debris-empty.
 */
function unpushedWork(f: Facts, aheadBy: number): string | null {
  const p = f.run.lastProgress;
  if (!p) return null;
  if (p.dirty && f.run.dirty === undefined) return "the last heartbeat reported a dirty worktree";
  if (p.ahead !== undefined && p.ahead > aheadBy)
    return `the last heartbeat reported ${p.ahead} commit(s) ahead of the base, GitHub shows ${aheadBy}`;
  if (aheadBy === 0 && p.headSha && f.baseSha && p.headSha !== f.baseSha && p.headSha !== f.branch?.headSha)
    return `the last heartbeat reported head ${p.headSha.slice(0, 12)}, not the base's ${f.baseSha.slice(0, 12)}`;
  return null;
}

function classifyDebris(f: Facts, base: Record<string, unknown>): Verdict {
  const expired = f.trigger === "lease-expired";
  const context = {
    ...base,
    ...(expired ? { note: "the lease expired without an exit; classified from what GitHub shows" } : {}),
  };
  if (f.pr && f.pr.state === "open")
    return unknown(context, `pull request #${f.pr.number} is open: the task belongs in review, not in a failure class`);
  // A person closed this branch's PR: neither publishing it again nor calling the run a phantom is honest.
  if (f.pr && f.pr.state === "closed")
    return unknown(context, `pull request #${f.pr.number} from this branch was closed without merging`);
  const ahead = f.branch?.aheadBy ?? 0;
  const unpushed = unpushedWork(f, ahead);
  if (!f.branch || ahead === 0) {
    if (f.run.dirty)
      return unknown(
        context,
        "the worker reported uncommitted changes but GitHub shows " +
          "no commits ahead: nothing here to recover mechanically",
      );
    if (unpushed)
      return unknown(
        context,
        `${unpushed} but GitHub shows no commits ahead: the work is on the worker's machine, ` +
          "not on GitHub; nothing here to recover mechanically",
      );
    const where = f.branch ? `branch ${f.branch.name} has no commits ahead of the base` : "no branch on GitHub";
    if (!expired && f.run.exitCode === 0) {
      return {
        class: "phantom",
        recovery: "delete-branch-requeue",
        evidence: {
          ...context,
          why: `the run reported success (exit 0) but GitHub shows no pull request and ${where}`,
          claimHeld: false,
        },
      };
    }
    return {
      class: "debris-empty",
      recovery: "delete-branch-requeue",
      evidence: { ...context, why: `no pull request and ${where}; nothing reported dirty` },
    };
  }
  const claim =
    !expired && f.run.exitCode === 0
      ? { claimHeld: false, claim: "the run reported success but left commits without a pull request" }
      : {};
  const checks = allGreen(f.checks, f.branch.headSha);
  const blockers = [
    f.run.dirty ? "the worker reported a dirty worktree" : null,
    f.run.testsPassed === false ? "the worker reported failing tests" : null,
    f.run.handoff ? "the worker handed off unfinished work" : null,
    unpushed,
    checks.green ? null : `head checks not green (${checks.why})`,
  ].filter((x): x is string => x !== null);
  if (blockers.length === 0) {
    return {
      class: "debris-publishable",
      recovery: "publish",
      evidence: {
        ...context,
        ...claim,
        why: `${ahead} commit(s) ahead, nothing dirty, tests not failing, ${checks.why}`,
      },
    };
  }
  return {
    class: "debris-half-done",
    recovery: "hold-resume",
    evidence: { ...context, ...claim, why: `${ahead} commit(s) ahead but ${blockers.join("; ")}` },
  };
}

function classifyChecks(f: Facts, base: Record<string, unknown>): Verdict {
  const head = f.pr?.headSha ?? f.branch?.headSha;
  const failed = f.checks.filter((c) => (head === undefined || c.headSha === head) && isFailed(c));
  if (failed.length === 0) return unknown(base, "a check failure was reported but no check on the head has failed");
  // The repository's own infraPatterns, in RE2 (linear time); config validation and the facts schema reject any
  // that RE2 cannot compile.
  const extra = repositoryPatterns(f.infraPatterns ?? []);
  const reasons = failed.map((c) => ({ name: c.name, conclusion: c.conclusion, infra: infraReason(c, extra) }));
  // A check that times out again when rerun on the same commit is the change's own hang, not the runner's.
  const timeouts = (f.timedOut ?? []).filter((t) =>
    failed.some((c) => c.conclusion === "timed_out" && c.name === t.name),
  );
  const again = [...new Set(timeouts.map((t) => t.name))].filter(
    (n) => timeouts.filter((t) => t.name === n).length > 1,
  );
  if (again.length > 0)
    return {
      class: "checks-failed",
      recovery: "continue-fix-checks",
      evidence: {
        ...base,
        failed: reasons,
        timeouts: timeouts.filter((t) => again.includes(t.name)),
        why:
          `${again.join(", ")} timed out again when rerun on the same commit (check runs ` +
          `${timeouts
            .filter((t) => again.includes(t.name))
            .map((t) => t.checkRunId)
            .sort((x, y) => x - y)
            .join(", ")}): ` +
          "the change hangs, not the runner",
      },
    };
  // A rerun cannot fix a real failure: infra only when every failure is one.
  if (reasons.every((r) => r.infra !== null)) {
    const used = f.rerunsUsed ?? 0;
    const budget = f.rerunBudget ?? 2;
    const evidence = { ...base, failed: reasons, rerunsUsed: used, rerunBudget: budget };
    return used < budget
      ? {
          class: "infra",
          recovery: "rerun-failed-jobs",
          evidence: { ...evidence, why: "every failing check failed for infrastructure reasons" },
        }
      : {
          class: "infra",
          recovery: "escalate",
          evidence: { ...evidence, why: `infrastructure failures persist after ${used} rerun(s) of this commit` },
        };
  }
  return {
    class: "checks-failed",
    recovery: "continue-fix-checks",
    evidence: {
      ...base,
      failed: reasons,
      why: `failing: ${reasons
        .filter((r) => r.infra === null)
        .map((r) => r.name)
        .join(", ")}`,
    },
  };
}
