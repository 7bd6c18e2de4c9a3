/**
 * CI on a task's PR as GitHub reports it: a pull_request workflow run of
 * `ci.yml` on the PR's head whose jobs finished as given, and a signed
 * check_run.completed delivered for each job that did not succeed.
 */
import type { FakeGitHub, WorkflowRun } from "../fake-github/index.js";
import { REPO, type Rig } from "./lifecycle-rig.js";
import { fakeWebhookPayload } from "./webhooks.js";

export interface CiJob {
  name: string;
  conclusion: "success" | "failure" | "cancelled" | "timed_out";
  summary?: string;
  log?: string;
}

/** A finished pull_request run of `ci.yml` on `sha` (the head of a PR of `repoName`), its jobs and their logs. */
export function addCiRun(fake: FakeGitHub, repoName: string, sha: string, jobs: CiJob[]): WorkflowRun {
  const repo = fake.state.repo(repoName);
  const wf =
    [...repo.workflows.values()].find((x) => x.path.endsWith("ci.yml")) ??
    fake.state.addWorkflow(repoName, { path: "ci.yml" });
  const failing = jobs.some((j) => j.conclusion !== "success");
  // A pull_request run is on the PR's head branch, which is how GitHub matches its checks to the PR.
  const headBranch = [...repo.pulls.values()].find((p) => p.headSha === sha && !p.headRepo)?.headRef ?? null;
  const run = fake.state.addWorkflowRun(repoName, {
    workflowId: wf.id,
    headBranch,
    headSha: sha,
    event: "pull_request",
    status: "completed",
    conclusion: failing ? "failure" : "success",
    jobs: jobs.map((j) => ({
      name: j.name,
      conclusion: j.conclusion,
      output: { title: j.name, summary: j.summary ?? "" },
    })),
  });
  for (const job of fake.state.jobsOf(repo, run)) {
    const spec = jobs.find((j) => j.name === job.name)!;
    if (spec.log) fake.state.setJobLog(repoName, job.id, spec.log);
  }
  return run;
}

/** GitHub's check_run.completed for one check run of `repoName` as it is now. */
export function checkRunCompleted(fake: FakeGitHub, repoName: string, checkRunId: number, sender = "alice") {
  const repo = fake.state.repo(repoName);
  return fakeWebhookPayload(
    fake,
    "check_run",
    "completed",
    { repo: repoName, sender },
    { check_run: fake.json.checkRun(repo, repo.checkRuns.get(checkRunId)!) },
  );
}

export async function deliverCiRun(rig: Rig, sha: string, jobs: CiJob[]) {
  const run = addCiRun(rig.fake, REPO, sha, jobs);
  const repo = rig.fake.state.repo(REPO);
  for (const job of rig.fake.state.jobsOf(repo, run)) {
    if (repo.checkRuns.get(job.id)!.conclusion === "success") continue;
    await rig.deliverPayload("check_run", checkRunCompleted(rig.fake, REPO, job.id));
  }
  return run;
}

/** A signed `workflow_run` delivery for one of the fake's workflow runs, as it stands now. */
export async function deliverWorkflowRun(rig: Rig, workflowRunId: number, action = "completed") {
  const repo = rig.fake.state.repo(REPO);
  await rig.deliverPayload(
    "workflow_run",
    fakeWebhookPayload(
      rig.fake,
      "workflow_run",
      "completed",
      { repo: REPO, sender: "alice" },
      { action, workflow_run: rig.fake.json.workflowRun(repo, repo.workflowRuns.get(workflowRunId)!) },
    ),
  );
}
