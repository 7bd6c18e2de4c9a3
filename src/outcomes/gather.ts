/**
 * Gathers the facts one run needs from GitHub and the run record, and only
 * those: a run with no branch on GitHub costs two reads, a run with commits
 * ahead adds its head's check runs. Any failure from GitHub propagates: the
 * caller reads it as "not classified yet", never as "absent".
 */
import type { GitHub, PullInfo, RepoRef } from "../github/port.js";

/** The reads fact gathering makes, and no others. */
export type FactsGitHub = Pick<
  GitHub,
  "pullsForBranch" | "getBranch" | "defaultBranch" | "compare" | "checkRunsForRef"
>;
import type { Facts } from "./facts.js";
import type { InfraDeath } from "./facts.js";

export interface RunRecord {
  branch: string;
  /** JSON of what the worker reported at exit, or null (the lease expired). */
  report: string | null;
  /** The lease stopped renewing because progress stood still; since when, and the last progress. */
  stalled?: boolean;
  progress?: string | null;
  progressAt?: Date | null;
  startedAt?: Date;
}

interface Report {
  exitCode?: number;
  dirty?: boolean;
  testsPassed?: boolean;
  turnCapHit?: boolean;
  handoff?: boolean;
  question?: string;
  lastToolCalls?: string[];
  branch?: string;
  infra?: string;
}

type LastProgress = NonNullable<Facts["run"]["lastProgress"]>;

/** The last heartbeat's progress of a run that ended without an exit; undefined when none was reported. */
function lastProgressOf(run: RunRecord): LastProgress | undefined {
  if (run.report || !run.progress) return undefined;
  try {
    const p = JSON.parse(run.progress) as Record<string, unknown>;
    const out: LastProgress = {};
    for (const key of ["headSha", "worktree", "step"] as const) {
      const v = p[key];
      if (typeof v === "string") out[key] = v;
    }
    const { dirty, ahead } = p;
    if (typeof dirty === "boolean") out.dirty = dirty;
    if (typeof ahead === "number" && Number.isInteger(ahead) && ahead >= 0) out.ahead = ahead;
    return Object.keys(out).length > 0 ? out : undefined;
  } catch {
    return undefined; // an older, free-form digest: nothing to read from it
  }
}

function pick(pulls: PullInfo[]): PullInfo | undefined {
  return pulls.find((p) => p.merged) ?? pulls.find((p) => p.state === "open") ?? pulls[0];
}

/** `knownPulls`: the branch's PRs when the caller has just read them (the exit did), saving the read. */
export async function gatherFacts(
  github: FactsGitHub,
  r: RepoRef,
  run: RunRecord,
  trigger: "exit" | "lease-expired",
  knownPulls?: PullInfo[],
): Promise<Facts> {
  const report: Report = run.report ? (JSON.parse(run.report) as Report) : {};
  const branchName = report.branch ?? run.branch;
  const pulls = knownPulls ?? (await github.pullsForBranch(r, branchName, "all"));
  const pr = pick(pulls);
  const ref = await github.getBranch(r, branchName);
  let branch: Facts["branch"] = null;
  let checks: Facts["checks"] = [];
  let base: string | undefined;
  if (ref) {
    base = pr?.baseRef ?? (await github.defaultBranch(r));
    const cmp = await github.compare(r, base, branchName);
    // compare answering 404 while the ref exists means the base is gone: no positive evidence of "nothing ahead".
    if (!cmp)
      throw new Error(
        `the base branch ${base} was not found (compare ${base}...${branchName} answered 404); ` +
          "not classifying on a guess",
      );
    branch = { name: branchName, aheadBy: cmp.aheadBy, headSha: ref.sha };
    if (cmp.aheadBy > 0) {
      checks = (await github.checkRunsForRef(r, ref.sha)).map((c) => ({
        name: c.name,
        headSha: c.headSha,
        status: c.status,
        conclusion: c.conclusion,
        output: c.output,
      }));
    }
  }
  const progress = trigger === "lease-expired" ? lastProgressOf(run) : undefined;
  // A head the worker reported that GitHub's branch does not show is only work if it is not the base's head:
  // read the base then, and only then.
  let baseSha: string | undefined;
  if (
    progress?.headSha &&
    !progress.dirty &&
    !progress.ahead &&
    (branch?.aheadBy ?? 0) === 0 &&
    progress.headSha !== branch?.headSha
  ) {
    base ??= pr?.baseRef ?? (await github.defaultBranch(r));
    const b = await github.getBranch(r, base);
    if (b) baseSha = b.sha;
  }
  return {
    trigger,
    ...(baseSha ? { baseSha } : {}),
    run: {
      exitCode: trigger === "exit" ? (report.exitCode ?? null) : null,
      ...(report.dirty !== undefined ? { dirty: report.dirty } : {}),
      ...(report.testsPassed !== undefined ? { testsPassed: report.testsPassed } : {}),
      ...(report.turnCapHit !== undefined ? { turnCapHit: report.turnCapHit } : {}),
      ...(report.handoff !== undefined ? { handoff: report.handoff } : {}),
      ...(report.question ? { question: report.question } : {}),
      ...(report.lastToolCalls ? { lastToolCalls: report.lastToolCalls } : {}),
      ...(report.infra ? { infraDeath: report.infra as InfraDeath } : {}),
      ...(run.stalled
        ? {
            stalled: {
              since: (run.progressAt ?? run.startedAt ?? new Date(0)).toISOString(),
              ...(run.progress ? { lastProgress: run.progress } : {}),
            },
          }
        : {}),
      ...(progress ? { lastProgress: progress } : {}),
    },
    pr: pr ? { number: pr.number, state: pr.merged ? "merged" : pr.state, headSha: pr.headSha } : null,
    branch,
    checks,
  };
}
