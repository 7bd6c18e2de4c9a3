/**
 * CI as GitHub Actions reports it, on every pull request the worker opens:
 * a `ci` workflow run with one `test` job on the PR's head, in progress until
 * Orchestra has the PR in review (the issue carries `agent:review`), so the
 * story is told in order; then it finishes and GitHub delivers
 * `check_run.completed`. On the PR of the issue marked `runnerLost` the
 * first run's job dies of its runner (the line GitHub writes when a hosted
 * runner goes away), which Orchestra must read as infrastructure and rerun;
 * the rerun, and every other run, passes.
 */
import type { FakeGitHub } from "../test/fake-github/index.js";
import { checkRunCompleted } from "../test/support/ci-runs.js";
import { fakeWebhookPayload } from "../test/support/webhooks.js";
import { ISSUES } from "./story-text.js";
import type { Say } from "./story.js";

export const RUNNER_LOST =
  "The hosted runner: GitHub Actions 9 lost communication with the server. Anything in your workflow that " +
  "terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.";

const POLL_MS = 100;

export class Ci {
  readonly #work = new Set<Promise<void>>();
  #stopped = false;
  readonly #lost = new Set(ISSUES.filter((i) => i.runnerLost).map((i) => i.number));
  /** What the maintainer does once a rerun passed: merge it. */
  onRerunPassed: (pr: number) => Promise<void> = async () => {};
  /** Called with anything that went wrong in the simulation: the demo cannot go on from it. */
  onError: (err: unknown) => void = () => {};

  constructor(
    readonly fake: FakeGitHub,
    readonly repo: string,
    readonly say: Say,
  ) {}

  /** A pull request was opened: CI starts on its head. */
  opened(pr: number): void {
    this.#track(this.#run(pr));
  }

  /** Orchestra asked GitHub to rerun a workflow run's failed jobs. */
  rerunRequested(runId: number): void {
    this.#track(this.#rerun(runId));
  }

  /** Whether a run is still going. */
  get busy(): boolean {
    return this.#work.size > 0;
  }

  stop(): void {
    this.#stopped = true;
  }

  async #run(pr: number): Promise<void> {
    const { state } = this.fake;
    const pull = state.pull(this.repo, pr);
    const workflow =
      [...state.repo(this.repo).workflows.values()].find((w) => w.path.endsWith("ci.yml")) ??
      state.addWorkflow(this.repo, { path: "ci.yml", name: "ci" });
    const run = state.addWorkflowRun(this.repo, {
      workflowId: workflow.id,
      headBranch: pull.headRef,
      headSha: pull.headSha,
      event: "pull_request",
      status: "in_progress",
      jobs: [{ name: "test", status: "in_progress" }],
    });
    const [issue] = state.closingIssues(state.repo(this.repo), pull);
    if (!(await this.#until(() => issue !== undefined && state.labelsOf(this.repo, issue).includes("agent:review"))))
      return;
    const job = state.jobsOf(state.repo(this.repo), run)[0]!;
    if (this.#lost.delete(issue!)) {
      state.updateCheckRun(this.repo, job.id, {
        conclusion: "failure",
        output: { title: "test", summary: RUNNER_LOST },
      });
      state.setJobLog(this.repo, job.id, `npm test\n> greeter@1.0.0 test\n##[error]${RUNNER_LOST}\n`);
      state.completeWorkflowRun(this.repo, run.id, "failure");
      this.say("ci", `test on PR #${pr} failed: ${RUNNER_LOST.split(".")[0]}`, "ci-failed");
      return this.#completed(job.id, run.id);
    }
    state.completeWorkflowRun(this.repo, run.id, "success");
    this.say("ci", `test passed on PR #${pr}`);
    await this.#completed(job.id, run.id);
  }

  async #rerun(runId: number): Promise<void> {
    const { state } = this.fake;
    const repo = state.repo(this.repo);
    const run = repo.workflowRuns.get(runId)!;
    const pull = [...repo.pulls.values()].find((p) => p.headRef === run.headBranch && p.headSha === run.headSha);
    state.completeWorkflowRun(this.repo, runId, "success");
    const job = state.jobsOf(repo, run).find((j) => j.name === "test")!;
    this.say("ci", `test passed on the rerun${pull ? ` (PR #${pull.number})` : ""}`, "rerun-passed");
    await this.#completed(job.id, runId);
    if (pull) await this.onRerunPassed(pull.number);
  }

  /** GitHub's deliveries for a finished job and its workflow run. */
  async #completed(checkRunId: number, runId: number): Promise<void> {
    const { fake } = this;
    const repo = fake.state.repo(this.repo);
    await fake.state.hookDeliveries.send("check_run", checkRunCompleted(fake, this.repo, checkRunId, "github-actions"));
    await fake.state.hookDeliveries.send(
      "workflow_run",
      fakeWebhookPayload(
        fake,
        "workflow_run",
        "completed",
        { repo: this.repo, sender: "github-actions" },
        { workflow_run: fake.json.workflowRun(repo, repo.workflowRuns.get(runId)!) },
      ),
    );
  }

  /** Waits until `condition` holds (true) or the demo stops (false). */
  async #until(condition: () => boolean): Promise<boolean> {
    while (!this.#stopped) {
      if (condition()) return true;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return false;
  }

  #track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => this.onError(err)).finally(() => this.#work.delete(tracked));
    this.#work.add(tracked);
  }
}
