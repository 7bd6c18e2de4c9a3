/** Check runs and check suites. */
import { checkCheckOutput } from "../limits.js";
import { created, fail, notFound, ok, paginate, type RouteContext, type RouteTable } from "../http.js";
import type { CheckConclusion, CheckRun, CheckStatus, Repo } from "../state.js";

function runOr404(ctx: RouteContext, repo: Repo): CheckRun {
  const run = repo.checkRuns.get(ctx.int("check_run_id"));
  if (!run) throw notFound(ctx);
  return run;
}

function appIdOf(ctx: RouteContext, app: CheckRun["app"]): number {
  return app === "self" ? ctx.state.app.id : ctx.state.actionsApp.id;
}

function shaForRef(ctx: RouteContext, repo: Repo): string {
  const sha = ctx.state.resolveRef(repo, ctx.params.ref!);
  if (!sha) throw fail(ctx, 422, `No commit found for SHA: ${ctx.params.ref}`);
  return sha;
}

function listRuns(ctx: RouteContext, repo: Repo, runs: CheckRun[]) {
  const q = ctx.query;
  const name = q.get("check_name");
  const status = q.get("status");
  const appId = q.get("app_id");
  const filtered = runs
    .filter((r) => !name || r.name === name)
    .filter((r) => !status || r.status === status)
    .filter((r) => !appId || String(appIdOf(ctx, r.app)) === appId)
    .sort((a, b) => b.id - a.id);
  return paginate(
    ctx,
    filtered.map((r) => ctx.json.checkRun(repo, r)),
    (page) => ({ total_count: filtered.length, check_runs: page }),
  );
}

export const checkRoutes: RouteTable = {
  "GET /repos/{owner}/{repo}/commits/{ref}/check-runs": (ctx) => {
    const repo = ctx.repo();
    const sha = shaForRef(ctx, repo);
    const runs =
      ctx.query.get("filter") === "all" ? ctx.state.checkRunsFor(repo, sha) : ctx.state.latestCheckRuns(repo, sha);
    return listRuns(ctx, repo, runs);
  },

  "GET /repos/{owner}/{repo}/commits/{ref}/check-suites": (ctx) => {
    const repo = ctx.repo();
    const sha = shaForRef(ctx, repo);
    const appId = ctx.query.get("app_id");
    const name = ctx.query.get("check_name");
    const suites = [...repo.checkSuites.values()]
      .filter((s) => s.headSha === sha)
      .filter((s) => !appId || String(appIdOf(ctx, s.app)) === appId)
      .filter((s) => !name || ctx.state.checkRunsFor(repo, sha).some((r) => r.suiteId === s.id && r.name === name));
    return paginate(
      ctx,
      suites.map((s) => ctx.json.checkSuite(repo, s)),
      (page) => ({ total_count: suites.length, check_suites: page }),
    );
  },

  "POST /repos/{owner}/{repo}/check-runs": (ctx) => {
    const repo = ctx.repo();
    const b = ctx.body as {
      name: string;
      head_sha: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion;
      output?: { title?: string; summary?: string; text?: string };
      details_url?: string;
      external_id?: string;
      started_at?: string;
    };
    if (!repo.commits.has(b.head_sha)) throw fail(ctx, 422, `No commit found for SHA: ${b.head_sha}`);
    checkCheckOutput(ctx, b.output);
    if (b.status === "completed" && !b.conclusion) {
      throw fail(ctx, 422, "Invalid request.\n\nconclusion is required when status is completed.");
    }
    const run = ctx.state.addCheckRun(repo.fullName, {
      headSha: b.head_sha,
      name: b.name,
      status: b.conclusion ? "completed" : (b.status ?? "queued"),
      conclusion: b.conclusion ?? null,
      output: b.output,
      app: "self",
      detailsUrl: b.details_url ?? null,
      externalId: b.external_id ?? null,
      startedAt: b.started_at ? new Date(b.started_at) : undefined,
    });
    return created(ctx.json.checkRun(repo, run));
  },

  "GET /repos/{owner}/{repo}/check-runs/{check_run_id}": (ctx) => {
    const repo = ctx.repo();
    return ok(ctx.json.checkRun(repo, runOr404(ctx, repo)));
  },

  "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}": (ctx) => {
    const repo = ctx.repo();
    const run = runOr404(ctx, repo);
    if (run.app !== "self") throw fail(ctx, 403, "Resource not accessible by integration");
    const b = ctx.body as {
      name?: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion;
      output?: { title?: string; summary?: string; text?: string };
      details_url?: string;
    };
    checkCheckOutput(ctx, b.output);
    ctx.state.updateCheckRun(repo.fullName, run.id, {
      name: b.name,
      status: b.status,
      conclusion: b.conclusion,
      output: b.output,
      detailsUrl: b.details_url,
    });
    return ok(ctx.json.checkRun(repo, run));
  },

  "GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations": (ctx) => {
    const repo = ctx.repo();
    runOr404(ctx, repo);
    return paginate(ctx, []);
  },

  "POST /repos/{owner}/{repo}/check-runs/{check_run_id}/rerequest": (ctx) => {
    const repo = ctx.repo();
    const run = runOr404(ctx, repo);
    // only the App that created a check run may rerequest it; Actions jobs are rerun via the Actions API
    if (run.app !== "self") throw fail(ctx, 403, "Resource not accessible by integration");
    run.rerequested += 1;
    ctx.state.reruns.push({ repo: repo.fullName, kind: "check-run", id: run.id, at: ctx.state.now() });
    return created({});
  },

  "GET /repos/{owner}/{repo}/check-suites/{check_suite_id}": (ctx) => {
    const repo = ctx.repo();
    const suite = repo.checkSuites.get(ctx.int("check_suite_id"));
    if (!suite) throw notFound(ctx);
    return ok(ctx.json.checkSuite(repo, suite));
  },

  "GET /repos/{owner}/{repo}/check-suites/{check_suite_id}/check-runs": (ctx) => {
    const repo = ctx.repo();
    const suite = repo.checkSuites.get(ctx.int("check_suite_id"));
    if (!suite) throw notFound(ctx);
    const all = ctx.state.checkRunsFor(repo, suite.headSha).filter((r) => r.suiteId === suite.id);
    const latest = ctx.state.latestCheckRuns(repo, suite.headSha).filter((r) => r.suiteId === suite.id);
    return listRuns(ctx, repo, ctx.query.get("filter") === "all" ? all : latest);
  },

  "POST /repos/{owner}/{repo}/check-suites/{check_suite_id}/rerequest": (ctx) => {
    const repo = ctx.repo();
    const suite = repo.checkSuites.get(ctx.int("check_suite_id"));
    if (!suite) throw notFound(ctx);
    suite.rerequested += 1;
    // for an Actions suite this re-runs the whole workflow run
    const wr = suite.workflowRunId !== null ? repo.workflowRuns.get(suite.workflowRunId) : undefined;
    if (wr) ctx.state.rerunWorkflow(repo, wr, false);
    ctx.state.reruns.push({ repo: repo.fullName, kind: "check-suite", id: suite.id, at: ctx.state.now() });
    return created({});
  },
};
