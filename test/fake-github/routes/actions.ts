/** GitHub Actions: workflows, dispatches, runs, jobs, reruns. */
import { created, fail, notFound, ok, paginate, type RouteContext, type RouteTable } from "../http.js";
import type { Repo, Workflow, WorkflowRun } from "../state.js";
import { jobLogUrl } from "./downloads.js";

const STATUSES = new Set(["queued", "in_progress", "completed", "waiting", "requested", "pending"]);

function workflowOr404(ctx: RouteContext, repo: Repo): Workflow {
  const wf = ctx.state.findWorkflow(repo, ctx.params.workflow_id!);
  if (!wf) throw notFound(ctx);
  return wf;
}

function runOr404(ctx: RouteContext, repo: Repo): WorkflowRun {
  const run = repo.workflowRuns.get(ctx.int("run_id"));
  if (!run) throw notFound(ctx);
  return run;
}

function listRuns(ctx: RouteContext, repo: Repo, workflowId: number | null) {
  const q = ctx.query;
  const status = q.get("status");
  const runs = [...repo.workflowRuns.values()]
    .filter((r) => workflowId === null || r.workflowId === workflowId)
    .filter((r) => !q.get("branch") || r.headBranch === q.get("branch"))
    .filter((r) => !q.get("event") || r.event === q.get("event"))
    .filter((r) => !q.get("actor") || r.actor.toLowerCase() === q.get("actor")!.toLowerCase())
    .filter((r) => !q.get("head_sha") || r.headSha === q.get("head_sha"))
    .filter((r) => !q.get("check_suite_id") || String(r.checkSuiteId) === q.get("check_suite_id"))
    // `status` takes either a status or a conclusion
    .filter((r) => !status || (STATUSES.has(status) ? r.status === status : r.conclusion === status))
    .sort((a, b) => b.id - a.id);
  return paginate(
    ctx,
    runs.map((r) => ctx.json.workflowRun(repo, r)),
    (page) => ({ total_count: runs.length, workflow_runs: page }),
  );
}

function requireCompleted(ctx: RouteContext, run: WorkflowRun): void {
  if (run.status !== "completed") throw fail(ctx, 403, "This workflow run is not completed.");
}

export const actionRoutes: RouteTable = {
  "GET /repos/{owner}/{repo}/actions/workflows": (ctx) => {
    const repo = ctx.repo();
    const list = [...repo.workflows.values()].map((w) => ctx.json.workflow(repo, w));
    return paginate(ctx, list, (page) => ({ total_count: list.length, workflows: page }));
  },

  "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}": (ctx) => {
    const repo = ctx.repo();
    return ok(ctx.json.workflow(repo, workflowOr404(ctx, repo)));
  },

  "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches": (ctx) => {
    const repo = ctx.repo();
    const wf = workflowOr404(ctx, repo);
    const b = ctx.body as { ref: string; inputs?: Record<string, unknown>; return_run_details?: boolean };
    if (wf.state !== "active") throw fail(ctx, 422, "Cannot trigger a 'workflow_dispatch' on a disabled workflow");
    if (!wf.dispatchable) throw fail(ctx, 422, "Workflow does not have 'workflow_dispatch' trigger");
    const ref = b.ref.replace(/^refs\/(heads|tags)\//, "");
    const headSha = ctx.state.resolveRef(repo, b.ref);
    if (!headSha || !(repo.branches.has(ref) || repo.tags.has(ref))) throw fail(ctx, 422, `No ref found for: ${b.ref}`);
    const inputs = { ...(b.inputs ?? {}) };
    if (wf.inputs) {
      const unexpected = Object.keys(inputs).filter((k) => !(k in wf.inputs!));
      if (unexpected.length) throw fail(ctx, 422, `Unexpected inputs provided: ${JSON.stringify(unexpected)}`);
      for (const [name, def] of Object.entries(wf.inputs)) {
        if (inputs[name] === undefined && def.default !== undefined) inputs[name] = def.default;
        if (def.required && inputs[name] === undefined) throw fail(ctx, 422, `Required input '${name}' not provided`);
        if (def.type === "choice" && inputs[name] !== undefined && !def.options?.includes(String(inputs[name]))) {
          throw fail(
            ctx,
            422,
            `Provided value '${inputs[name]}' for input '${name}' not in the list of allowed values`,
          );
        }
      }
    }
    const run = wf.createRunOnDispatch
      ? ctx.state.addWorkflowRun(repo.fullName, {
          workflowId: wf.id,
          headBranch: repo.branches.has(ref) ? ref : null,
          headSha,
          event: "workflow_dispatch",
          status: "queued",
          actor: ctx.actor,
          ...(wf.runName === null
            ? {}
            : {
                displayTitle: wf.runName.replace(/\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}/g, (_, k: string) =>
                  String(inputs[k] ?? ""),
                ),
              }),
        })
      : null;
    ctx.state.dispatches.push({
      repo: repo.fullName,
      workflowId: wf.id,
      workflowPath: wf.path,
      ref: b.ref,
      inputs,
      runId: run?.id ?? null,
      at: ctx.state.now(),
    });
    if (b.return_run_details && run && wf.returnsRunDetails) {
      return ok({
        workflow_run_id: run.id,
        run_url: `${ctx.json.urls.api}/repos/${repo.fullName}/actions/runs/${run.id}`,
        html_url: `${ctx.json.urls.web}/${repo.fullName}/actions/runs/${run.id}`,
      });
    }
    return { status: 204 };
  },

  "GET /repos/{owner}/{repo}/actions/runs": (ctx) => listRuns(ctx, ctx.repo(), null),

  "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs": (ctx) => {
    const repo = ctx.repo();
    return listRuns(ctx, repo, workflowOr404(ctx, repo).id);
  },

  "GET /repos/{owner}/{repo}/actions/runs/{run_id}": (ctx) => {
    const repo = ctx.repo();
    return ok(ctx.json.workflowRun(repo, runOr404(ctx, repo)));
  },

  "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs": (ctx) => {
    const repo = ctx.repo();
    const run = runOr404(ctx, repo);
    const jobs = ctx.state.jobsOf(repo, run, ctx.query.get("filter") === "all" ? "all" : "latest");
    return paginate(
      ctx,
      jobs.map((j) => ctx.json.job(repo, j)),
      (page) => ({ total_count: jobs.length, jobs: page }),
    );
  },

  "GET /repos/{owner}/{repo}/actions/jobs/{job_id}": (ctx) => {
    const repo = ctx.repo();
    const job = repo.jobs.get(ctx.int("job_id"));
    if (!job) throw notFound(ctx);
    return ok(ctx.json.job(repo, job));
  },

  "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs": (ctx) => {
    const repo = ctx.repo();
    const job = repo.jobs.get(ctx.int("job_id"));
    // a job without a log (none yet, or never kept) is not found; an expired one is gone
    if (!job || !repo.jobLogs.has(job.id)) throw notFound(ctx);
    if (repo.jobLogs.get(job.id) === null) throw fail(ctx, 410, "Gone");
    return { status: 302, headers: { location: jobLogUrl(ctx.state, ctx.json.urls.web, repo, job.id) } };
  },

  "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs": (ctx) => {
    const repo = ctx.repo();
    const run = runOr404(ctx, repo);
    requireCompleted(ctx, run);
    ctx.state.rerunWorkflow(repo, run, true);
    ctx.state.reruns.push({ repo: repo.fullName, kind: "failed-jobs", id: run.id, at: ctx.state.now() });
    return created({});
  },

  "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun": (ctx) => {
    const repo = ctx.repo();
    const run = runOr404(ctx, repo);
    requireCompleted(ctx, run);
    ctx.state.rerunWorkflow(repo, run, false);
    ctx.state.reruns.push({ repo: repo.fullName, kind: "run", id: run.id, at: ctx.state.now() });
    return created({});
  },

  "POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun": (ctx) => {
    const repo = ctx.repo();
    const job = repo.jobs.get(ctx.int("job_id"));
    if (!job) throw notFound(ctx);
    const run = repo.workflowRuns.get(job.runId)!;
    requireCompleted(ctx, run);
    run.runAttempt += 1;
    run.status = "queued";
    run.conclusion = null;
    for (const j of ctx.state.jobsOf(repo, { ...run, runAttempt: run.runAttempt - 1 })) {
      if (j.id === job.id)
        ctx.state.addJob(repo.fullName, run.id, { name: j.name, status: "queued", conclusion: null });
      else j.runAttempt = run.runAttempt;
    }
    ctx.state.reruns.push({ repo: repo.fullName, kind: "job", id: job.id, at: ctx.state.now() });
    return created({});
  },

  "POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel": (ctx) => {
    const repo = ctx.repo();
    const run = runOr404(ctx, repo);
    if (run.status === "completed") throw fail(ctx, 409, "Cannot cancel a workflow run that is completed.");
    ctx.state.completeWorkflowRun(repo.fullName, run.id, "cancelled");
    return { status: 202, body: {} };
  },
};
