/** Check suites and check runs, and the status a suite rolls up to. */
import { GitState } from "./git.js";
import type { Repo } from "./repo.js";
import type { AppKey, CheckConclusion, CheckRun, CheckStatus, CheckSuite } from "./types.js";

const CONCLUSION_RANK: CheckConclusion[] = [
  "action_required",
  "startup_failure",
  "failure",
  "timed_out",
  "cancelled",
  "stale",
  "neutral",
  "skipped",
  "success",
];

export class CheckState extends GitState {
  ensureSuite(repo: Repo, headSha: string, app: AppKey, headBranch?: string | null): CheckSuite {
    for (const s of repo.checkSuites.values()) {
      if (s.headSha === headSha && s.app === app && s.workflowRunId === null) return s;
    }
    return this.newSuite(repo, headSha, app, headBranch ?? this.branchAt(repo, headSha));
  }

  protected newSuite(
    repo: Repo,
    headSha: string,
    app: AppKey,
    headBranch: string | null,
    headRepo: string | null = null,
  ): CheckSuite {
    const now = this.now();
    const s: CheckSuite = {
      id: this.nextId(),
      headSha,
      headBranch,
      headRepo,
      app,
      createdAt: now,
      updatedAt: now,
      workflowRunId: null,
      rerequested: 0,
    };
    repo.checkSuites.set(s.id, s);
    return s;
  }

  addCheckRun(
    repoName: string,
    opts: {
      headSha: string;
      name: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion | null;
      output?: { title?: string | null; summary?: string | null; text?: string | null };
      app?: AppKey;
      detailsUrl?: string | null;
      externalId?: string | null;
      suiteId?: number;
      id?: number;
      startedAt?: Date;
    },
  ): CheckRun {
    const repo = this.repo(repoName);
    const app = opts.app ?? "github-actions";
    const suite = opts.suiteId ? repo.checkSuites.get(opts.suiteId)! : this.ensureSuite(repo, opts.headSha, app);
    const status = opts.status ?? (opts.conclusion === null ? "queued" : "completed");
    const now = this.now();
    const run: CheckRun = {
      id: opts.id ?? this.nextId(),
      suiteId: suite.id,
      headSha: opts.headSha,
      name: opts.name,
      status,
      conclusion: status === "completed" ? (opts.conclusion ?? "success") : null,
      startedAt: opts.startedAt ?? now,
      completedAt: status === "completed" ? now : null,
      output: {
        title: opts.output?.title ?? null,
        summary: opts.output?.summary ?? null,
        text: opts.output?.text ?? null,
        annotationsCount: 0,
      },
      detailsUrl: opts.detailsUrl ?? null,
      externalId: opts.externalId ?? null,
      app,
      rerequested: 0,
    };
    repo.checkRuns.set(run.id, run);
    suite.updatedAt = now;
    return run;
  }

  updateCheckRun(
    repoName: string,
    id: number,
    patch: Partial<Pick<CheckRun, "status" | "conclusion" | "name" | "detailsUrl">> & {
      output?: { title?: string | null; summary?: string | null; text?: string | null };
    },
  ): CheckRun {
    const run = this.repo(repoName).checkRuns.get(id);
    if (!run) throw new Error(`fake GitHub: no check run ${id}`);
    if (patch.name !== undefined) run.name = patch.name;
    if (patch.detailsUrl !== undefined) run.detailsUrl = patch.detailsUrl;
    if (patch.output) Object.assign(run.output, stripUndefined(patch.output));
    if (patch.conclusion) {
      run.conclusion = patch.conclusion;
      run.status = "completed";
    }
    if (patch.status) run.status = patch.status;
    if (run.status === "completed") {
      run.conclusion ??= "success";
      run.completedAt ??= this.now();
    } else {
      run.conclusion = null;
      run.completedAt = null;
    }
    return run;
  }

  checkRunsFor(repo: Repo, headSha: string): CheckRun[] {
    return [...repo.checkRuns.values()].filter((r) => r.headSha === headSha);
  }

  /** The newest run per (app, name) — GitHub's `filter=latest`. */
  latestCheckRuns(repo: Repo, headSha: string): CheckRun[] {
    const latest = new Map<string, CheckRun>();
    for (const r of this.checkRunsFor(repo, headSha)) {
      const key = `${r.app}\u0000${r.name}`;
      const prev = latest.get(key);
      if (!prev || r.id > prev.id) latest.set(key, r);
    }
    return [...latest.values()].sort((a, b) => a.id - b.id);
  }

  suiteStatus(repo: Repo, suite: CheckSuite): { status: CheckStatus; conclusion: CheckConclusion | null } {
    const runs = this.latestCheckRuns(repo, suite.headSha).filter((r) => r.suiteId === suite.id);
    if (suite.workflowRunId !== null) {
      const wr = repo.workflowRuns.get(suite.workflowRunId);
      if (wr) return { status: wr.status, conclusion: wr.conclusion };
    }
    if (!runs.length) return { status: "queued", conclusion: null };
    if (runs.some((r) => r.status !== "completed")) {
      return { status: runs.some((r) => r.status === "in_progress") ? "in_progress" : "queued", conclusion: null };
    }
    const conclusions = runs.map((r) => r.conclusion!);
    const worst = CONCLUSION_RANK.find((c) => conclusions.includes(c)) ?? "success";
    return { status: "completed", conclusion: worst };
  }

  private branchAt(repo: Repo, sha: string): string | null {
    for (const [name, s] of repo.branches) if (s === sha) return name;
    return null;
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
