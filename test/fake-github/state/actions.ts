/** GitHub Actions: workflows, their runs and jobs (each job also a check run), reruns and job logs. */
import { CheckState } from "./checks.js";
import type { Repo } from "./repo.js";
import type { CheckConclusion, CheckStatus, Job, Workflow, WorkflowInput, WorkflowRun } from "./types.js";

export class ActionState extends CheckState {
  addWorkflow(
    repoName: string,
    opts: {
      id?: number;
      path: string;
      name?: string;
      dispatchable?: boolean;
      inputs?: Record<string, WorkflowInput> | null;
      createRunOnDispatch?: boolean;
      runName?: string | null;
      returnsRunDetails?: boolean;
      state?: Workflow["state"];
    },
  ): Workflow {
    const repo = this.repo(repoName);
    const path = opts.path.includes("/") ? opts.path : `.github/workflows/${opts.path}`;
    const wf: Workflow = {
      id: opts.id ?? this.nextId(),
      name:
        opts.name ??
        path
          .split("/")
          .pop()!
          .replace(/\.ya?ml$/, ""),
      path,
      state: opts.state ?? "active",
      dispatchable: opts.dispatchable ?? true,
      inputs: opts.inputs ?? null,
      createRunOnDispatch: opts.createRunOnDispatch ?? true,
      runName: opts.runName ?? null,
      returnsRunDetails: opts.returnsRunDetails ?? true,
      createdAt: this.now(),
    };
    repo.workflows.set(wf.id, wf);
    return wf;
  }

  /** By numeric id or by file name (`agent.yml`), as the API accepts either. */
  findWorkflow(repo: Repo, idOrFile: string | number): Workflow | undefined {
    const s = String(idOrFile);
    if (/^\d+$/.test(s)) return repo.workflows.get(Number(s));
    return [...repo.workflows.values()].find((w) => w.path === s || w.path.split("/").pop() === s);
  }

  /**
   * A workflow run with its check suite; each job is also a check run with
   * the same id (which is how GitHub links jobs and checks).
   */
  addWorkflowRun(
    repoName: string,
    opts: {
      workflowId: number;
      headBranch?: string | null;
      headSha?: string;
      /** a fork of this repository: the run is for its branch `headBranch` (on `headSha`, which must be here) */
      headRepo?: string;
      event?: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion | null;
      actor?: string;
      displayTitle?: string;
      jobs?: {
        name: string;
        status?: CheckStatus;
        conclusion?: CheckConclusion | null;
        output?: { title?: string; summary?: string; text?: string };
        steps?: Job["steps"];
      }[];
    },
  ): WorkflowRun {
    const repo = this.repo(repoName);
    const wf = repo.workflows.get(opts.workflowId);
    if (!wf) throw new Error(`fake GitHub: no workflow ${opts.workflowId} in ${repoName}`);
    const headBranch = opts.headBranch === undefined ? repo.defaultBranch : opts.headBranch;
    const headSha = opts.headSha ?? (headBranch ? repo.branches.get(headBranch) : undefined);
    if (!headSha) throw new Error("fake GitHub: addWorkflowRun needs headSha or an existing headBranch");
    const headRepo = opts.headRepo ? this.repo(opts.headRepo).fullName : null;
    if (headRepo && !repo.commits.has(headSha))
      throw new Error(
        `fake GitHub: a fork's run needs its head ${headSha} in ${repoName} (a pull request puts it there)`,
      );
    const suite = this.newSuite(repo, headSha, "github-actions", headBranch, headRepo);
    const now = this.now();
    const status = opts.status ?? (opts.conclusion ? "completed" : "queued");
    const run: WorkflowRun = {
      id: this.nextId(),
      workflowId: wf.id,
      name: wf.name,
      displayTitle: opts.displayTitle ?? wf.name,
      headBranch,
      headSha,
      headRepo,
      event: opts.event ?? "push",
      status,
      conclusion: status === "completed" ? (opts.conclusion ?? "success") : null,
      runNumber: [...repo.workflowRuns.values()].filter((r) => r.workflowId === wf.id).length + 1,
      runAttempt: 1,
      actor: this.user(opts.actor ?? repo.owner).login,
      createdAt: now,
      updatedAt: now,
      runStartedAt: now,
      checkSuiteId: suite.id,
    };
    suite.workflowRunId = run.id;
    repo.workflowRuns.set(run.id, run);
    for (const j of opts.jobs ?? []) this.addJob(repoName, run.id, j);
    return run;
  }

  addJob(
    repoName: string,
    runId: number,
    opts: {
      name: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion | null;
      output?: { title?: string; summary?: string; text?: string };
      steps?: Job["steps"];
      runnerName?: string | null;
    },
  ): Job {
    const repo = this.repo(repoName);
    const run = repo.workflowRuns.get(runId);
    if (!run) throw new Error(`fake GitHub: no workflow run ${runId}`);
    const check = this.addCheckRun(repoName, {
      headSha: run.headSha,
      name: opts.name,
      status: opts.status ?? (opts.conclusion ? "completed" : run.status),
      conclusion: opts.conclusion ?? (run.status === "completed" ? run.conclusion : null),
      output: opts.output,
      app: "github-actions",
      suiteId: run.checkSuiteId,
    });
    const job: Job = {
      id: check.id,
      runId,
      runAttempt: run.runAttempt,
      name: opts.name,
      steps: opts.steps ?? [],
      labels: ["ubuntu-latest"],
      runnerName: opts.runnerName === undefined ? "GitHub Actions 2" : opts.runnerName,
    };
    repo.jobs.set(job.id, job);
    return job;
  }

  /**
   * The log GitHub keeps for an Actions job (a job's id is its check run's):
   * `actions/jobs/{id}/logs` redirects to a download of this text; null
   * makes it answer 410 as for an expired log. Without one it answers 404.
   */
  setJobLog(repoName: string, jobId: number, text: string | null): void {
    const repo = this.repo(repoName);
    if (!repo.jobs.has(jobId))
      throw new Error(`fake GitHub: no Actions job ${jobId} in ${repoName} (a check run the App created has no log)`);
    repo.jobLogs.set(jobId, text);
  }

  /** Finish a workflow run (and any of its unfinished jobs) with a conclusion. */
  completeWorkflowRun(repoName: string, runId: number, conclusion: CheckConclusion = "success"): WorkflowRun {
    const repo = this.repo(repoName);
    const run = repo.workflowRuns.get(runId);
    if (!run) throw new Error(`fake GitHub: no workflow run ${runId}`);
    run.status = "completed";
    run.conclusion = conclusion;
    run.updatedAt = this.now();
    for (const job of this.jobsOf(repo, run, "latest")) {
      const check = repo.checkRuns.get(job.id)!;
      if (check.status !== "completed") this.updateCheckRun(repoName, check.id, { conclusion });
    }
    return run;
  }

  jobsOf(repo: Repo, run: WorkflowRun, filter: "latest" | "all" = "latest"): Job[] {
    const all = [...repo.jobs.values()].filter((j) => j.runId === run.id);
    if (filter === "all") return all;
    return all.filter((j) => j.runAttempt === run.runAttempt);
  }

  /**
   * Start a new attempt. Jobs that are rerun get new ids and queued check
   * runs; with `failedOnly`, successful jobs carry over as they are.
   */
  rerunWorkflow(repo: Repo, run: WorkflowRun, failedOnly: boolean): void {
    const previous = this.jobsOf(repo, run, "latest");
    run.runAttempt += 1;
    run.status = "queued";
    run.conclusion = null;
    run.updatedAt = this.now();
    run.runStartedAt = this.now();
    for (const job of previous) {
      const check = repo.checkRuns.get(job.id)!;
      const failed = check.conclusion !== null && !["success", "neutral", "skipped"].includes(check.conclusion);
      if (failedOnly && !failed) {
        job.runAttempt = run.runAttempt;
        continue;
      }
      this.addJob(repo.fullName, run.id, { name: job.name, status: "queued", conclusion: null, steps: [] });
    }
  }
}
