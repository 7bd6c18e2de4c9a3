/** Actions: workflows, their runs and their jobs, as GitHub's REST API shapes them. */
import type { Job, Repo, Workflow, WorkflowRun } from "../state.js";
import { CheckJson } from "./checks.js";
import { nodeId, ts, type Json } from "./core.js";

export class ActionsJson extends CheckJson {
  workflow(r: Repo, w: Workflow): Json {
    return {
      id: w.id,
      node_id: nodeId("W", w.id),
      name: w.name,
      path: w.path,
      state: w.state,
      created_at: ts(w.createdAt),
      updated_at: ts(w.createdAt),
      url: `${this.urls.api}/repos/${r.fullName}/actions/workflows/${w.id}`,
      html_url: `${this.urls.web}/${r.fullName}/blob/${r.defaultBranch}/${w.path}`,
      badge_url: `${this.urls.web}/${r.fullName}/workflows/${encodeURIComponent(w.name)}/badge.svg`,
    };
  }

  workflowRun(r: Repo, run: WorkflowRun): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/actions/runs/${run.id}`;
    const wf = r.workflows.get(run.workflowId);
    const head = r.commits.get(run.headSha);
    return {
      id: run.id,
      name: run.name,
      node_id: nodeId("WFR", run.id),
      head_branch: run.headBranch,
      head_sha: run.headSha,
      path: wf?.path ?? "",
      display_title: run.displayTitle,
      run_number: run.runNumber,
      event: run.event,
      status: run.status,
      conclusion: run.conclusion,
      workflow_id: run.workflowId,
      check_suite_id: run.checkSuiteId,
      check_suite_node_id: nodeId("CS", run.checkSuiteId),
      url: api,
      html_url: `${this.urls.web}/${r.fullName}/actions/runs/${run.id}`,
      pull_requests: this.pullsForSuite(r, r.checkSuites.get(run.checkSuiteId)),
      created_at: ts(run.createdAt),
      updated_at: ts(run.updatedAt),
      actor: this.user(run.actor),
      triggering_actor: this.user(run.actor),
      run_attempt: run.runAttempt,
      referenced_workflows: [],
      run_started_at: ts(run.runStartedAt),
      jobs_url: `${api}/jobs`,
      logs_url: `${api}/logs`,
      check_suite_url: `${this.urls.api}/repos/${r.fullName}/check-suites/${run.checkSuiteId}`,
      artifacts_url: `${api}/artifacts`,
      cancel_url: `${api}/cancel`,
      rerun_url: `${api}/rerun`,
      previous_attempt_url: run.runAttempt > 1 ? `${api}/attempts/${run.runAttempt - 1}` : null,
      workflow_url: `${this.urls.api}/repos/${r.fullName}/actions/workflows/${run.workflowId}`,
      head_commit: head ? this.simpleCommit(head) : null,
      repository: this.minimalRepo(r),
      head_repository: this.minimalRepo(run.headRepo ? this.state.repo(run.headRepo) : r),
    };
  }

  job(r: Repo, j: Job): Json {
    const run = r.workflowRuns.get(j.runId)!;
    const check = r.checkRuns.get(j.id)!;
    return {
      id: j.id,
      run_id: j.runId,
      run_url: `${this.urls.api}/repos/${r.fullName}/actions/runs/${j.runId}`,
      run_attempt: j.runAttempt,
      node_id: nodeId("CR", j.id),
      head_sha: run.headSha,
      url: `${this.urls.api}/repos/${r.fullName}/actions/jobs/${j.id}`,
      html_url: `${this.urls.web}/${r.fullName}/actions/runs/${j.runId}/job/${j.id}`,
      status: check.status,
      conclusion: check.conclusion,
      created_at: ts(check.startedAt),
      started_at: ts(check.startedAt),
      completed_at: ts(check.completedAt),
      name: j.name,
      steps: j.steps.map((s) => ({
        name: s.name,
        status: s.status,
        conclusion: s.conclusion,
        number: s.number,
        started_at: ts(check.startedAt),
        completed_at: ts(check.completedAt),
      })),
      check_run_url: `${this.urls.api}/repos/${r.fullName}/check-runs/${j.id}`,
      labels: j.labels,
      runner_id: j.runnerName ? 2 : null,
      runner_name: j.runnerName,
      runner_group_id: j.runnerName ? 2 : null,
      runner_group_name: j.runnerName ? "GitHub Actions" : null,
      workflow_name: run.name,
      head_branch: run.headBranch,
    };
  }
}
