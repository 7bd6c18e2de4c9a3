/**
 * CI on a task's PR as GitHub reports it: a pull_request workflow run of
 * `ci.yml` on the PR's head whose jobs finished as given, and a signed
 * check_run.completed delivered for each job that did not succeed.
 */
import { REPO, type Rig } from "./lifecycle-rig.js";
import { fakeWebhookPayload } from "./webhooks.js";

export interface CiJob {
  name: string;
  conclusion: "success" | "failure" | "cancelled" | "timed_out";
  summary?: string;
  log?: string;
}

export async function deliverCiRun(rig: Rig, sha: string, jobs: CiJob[]) {
  const repo = rig.fake.state.repo(REPO);
  const wf =
    [...repo.workflows.values()].find((x) => x.path.endsWith("ci.yml")) ??
    rig.fake.state.addWorkflow(REPO, { path: "ci.yml" });
  const failing = jobs.some((j) => j.conclusion !== "success");
  // A pull_request run is on the PR's head branch, which is how GitHub matches its checks to the PR.
  const headBranch = [...repo.pulls.values()].find((p) => p.headSha === sha && !p.headRepo)?.headRef ?? null;
  const run = rig.fake.state.addWorkflowRun(REPO, {
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
  for (const job of rig.fake.state.jobsOf(repo, run)) {
    const spec = jobs.find((j) => j.name === job.name)!;
    if (spec.log) rig.fake.state.setJobLog(REPO, job.id, spec.log);
  }
  for (const job of rig.fake.state.jobsOf(repo, run)) {
    const check = repo.checkRuns.get(job.id)!;
    if (check.conclusion === "success") continue;
    await rig.deliverPayload(
      "check_run",
      fakeWebhookPayload(
        rig.fake,
        "check_run",
        "completed",
        { repo: REPO, sender: "alice" },
        { check_run: rig.fake.json.checkRun(repo, check) },
      ),
    );
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
