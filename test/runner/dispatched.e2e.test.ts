/**
 * Dispatch mode end to end, with the shipped workflow: the App dispatches
 * docs/workflows/orchestra-agent.yml (the fake GitHub checks the inputs
 * against the ones that file declares), the test plays the Actions job by
 * running `orchestra worker --dispatched` with the event file and the
 * environment a runner gives it, and the workflow run's completion is the
 * exit. The worker talks to GitHub only, never to the service.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { DISPATCH_INPUTS } from "../../src/runner/dispatched.js";
import { oneProvider } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { INSTALLATION, REPO } from "../support/lifecycle-rig.js";
import { deliverWorkflowRun } from "../support/ci-runs.js";
import { startLoop, type LoopRig } from "../support/worker-rig.js";
import type { WorkflowInput } from "../fake-github/state.js";

interface Workflow {
  "run-name": string;
  on: { workflow_dispatch: { inputs: Record<string, WorkflowInput & { description: string }> } };
  permissions: Record<string, string>;
  jobs: { agent: { steps: Array<{ uses?: string; run?: string; env?: Record<string, string> }> } };
}
const FILE = join(import.meta.dirname, "..", "..", "docs", "workflows", "orchestra-agent.yml");
const WORKFLOW = parseYaml(readFileSync(FILE, "utf8")) as Workflow;
const CONFIG = "dispatch:\n  workflow: orchestra-agent.yml\n  ref: main\n";

test("the shipped workflow declares the inputs a dispatch sends, names the run in its title, and keeps the token from the agent", () => {
  expect(Object.keys(WORKFLOW.on.workflow_dispatch.inputs).sort()).toEqual([...DISPATCH_INPUTS].sort());
  expect(WORKFLOW["run-name"]).toContain("${{ inputs.run }}");
  expect(WORKFLOW.permissions).toEqual({ contents: "write", "pull-requests": "write", issues: "read" });
  const steps = WORKFLOW.jobs.agent.steps;
  // No checkout: nothing leaves the job's token in a git config the agent could read.
  expect(steps.filter((s) => s.uses?.startsWith("actions/checkout"))).toEqual([]);
  const withToken = steps.filter((s) => JSON.stringify(s.env ?? {}).includes("github.token"));
  expect(withToken.map((s) => s.run)).toEqual([expect.stringMatching(/^orchestra worker --dispatched\b/)]);
});

// What the job does with the agent, git and GitHub does not depend on the database.
describe.each(oneProvider)("a dispatched run on %s", (provider) => {
  let rig: LoopRig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig?.stop();
  });

  /** The repository has the shipped workflow: GitHub refuses a dispatch whose inputs it does not declare. */
  function shipWorkflow() {
    const { inputs } = WORKFLOW.on.workflow_dispatch;
    rig.fake.state.addWorkflow(REPO, { path: "orchestra-agent.yml", inputs, runName: WORKFLOW["run-name"] });
  }

  async function dispatched(issue: number) {
    await rig.queue(issue);
    const d = rig.fake.state.dispatches.find((x) => x.inputs["branch"] === `agent/issue-${issue}`)!;
    expect(d.workflowPath).toBe(".github/workflows/orchestra-agent.yml");
    return d;
  }

  /** The Actions job: the event file GitHub writes for a workflow_dispatch, and the runner's variables. */
  async function job(inputs: Record<string, unknown>, agent: string) {
    const event = join(rig.root, `event-${String(inputs["run"])}.json`);
    writeFileSync(event, JSON.stringify({ inputs, ref: "refs/heads/main", workflow: "orchestra-agent.yml" }));
    const summary = join(rig.root, `summary-${String(inputs["run"])}.md`);
    const w = rig.start(
      ["--dispatched", "--agent", agent],
      {
        GITHUB_ACTIONS: "true",
        GITHUB_EVENT_PATH: event,
        GITHUB_REPOSITORY: REPO,
        GITHUB_SERVER_URL: rig.fake.url,
        GITHUB_API_URL: rig.fake.apiUrl,
        GITHUB_TOKEN: rig.fake.state.issueToken(INSTALLATION).token,
        GITHUB_STEP_SUMMARY: summary,
        RUNNER_TEMP: rig.root,
      },
      { service: false },
    );
    const code = await w.done;
    return {
      code,
      stdout: w.stdout(),
      stderr: w.stderr(),
      summary: existsSync(summary) ? readFileSync(summary, "utf8") : "",
    };
  }

  async function completed(workflowRunId: number, conclusion: "success" | "failure") {
    rig.fake.state.completeWorkflowRun(REPO, workflowRunId, conclusion);
    await deliverWorkflowRun(rig, workflowRunId);
  }

  const state = async (issue: number) =>
    ((await rig.task(issue)) as { task: { state: string; prNumber: number | null; attempt: number } }).task;

  test("the job runs the agent on the task, pushes its commit, opens the PR and succeeds; the task is in review", async () => {
    rig = await startLoop({ provider, config: CONFIG });
    shipWorkflow();
    const d = await dispatched(1);
    const agent = rig.agent(
      "fix",
      [
        'grep -q "Do thing 1" "$ORCHESTRA_TASK_FILE"',
        'test "$ORCHESTRA_RUN_ID" = "' + String(d.inputs["run"]) + '"',
        // The job's token is the worker's: the agent never sees it.
        'test -z "$GITHUB_TOKEN$GH_TOKEN$ACTIONS_RUNTIME_TOKEN"',
        "echo 'version 2' > src/app.txt",
        "git add src/app.txt",
        "git commit -qm 'Bump the version'",
      ].join("\n"),
    );
    const out = await job(d.inputs, agent);
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
    expect(out.stdout).toMatch(/pushed +agent\/issue-1/);
    expect(out.stdout).toMatch(/pr +#\d+ opened/);
    expect(out.summary).toMatch(/attempt 1, branch `agent\/issue-1`: success/);
    expect(rig.fileAt("agent/issue-1", "src/app.txt")).toBe("version 2\n");
    const [pr] = [...rig.fake.state.repo(REPO).pulls.values()];
    expect(pr).toMatchObject({ headRef: "agent/issue-1", headSha: rig.branchSha("agent/issue-1") });
    expect(rig.fake.state.issue(REPO, pr!.number).body).toContain("Closes #1");

    await completed(d.runId!, "success");
    await eventually(async () => ((await state(1)).state === "review" ? true : undefined));
    const detail = (await rig.task(1)) as { task: { prNumber: number }; runs: Array<{ state: string }> };
    expect(detail.task.prNumber).toBe(pr!.number);
    expect(detail.runs.map((r) => r.state)).toEqual(["review"]);
    expect(rig.labels(1)).toEqual(["agent:review"]);
  });

  test("an agent that fails leaving work: the job pushes it as a handoff and fails; the task is queued to resume it", async () => {
    rig = await startLoop({ provider, config: CONFIG });
    shipWorkflow();
    const d = await dispatched(2);
    const out = await job(d.inputs, rig.agent("messy", "echo 'half done' > notes.txt\nexit 3"));
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/conclusion +failure/);
    expect(rig.fileAt("agent/issue-2", "notes.txt")).toBe("half done\n");
    const head = rig.fake.state.repo(REPO).git!.git(["log", "-1", "--format=%B", rig.branchSha("agent/issue-2")!]);
    expect(head).toMatch(/Orchestra-Handoff: /);

    await completed(d.runId!, "failure");
    await eventually(async () => ((await state(2)).state !== "claimed" ? true : undefined));
    const detail = (await rig.task(2)) as {
      task: { state: string; continuation: { kind: string } | null };
      runs: Array<{ class: string | null }>;
    };
    // Half-done work is never read as empty: the next run continues the branch.
    expect(detail.runs[0]!.class).toBe("debris-half-done");
    expect(detail.task).toMatchObject({ state: "queued", continuation: { kind: "resume" } });
    expect(rig.fileAt("agent/issue-2", "notes.txt")).toBe("half done\n");
  });

  test("a job that is not Orchestra's dispatch says so in one line and exits 2", async () => {
    rig = await startLoop({ provider, config: CONFIG });
    const out = await job({ run: "r1", branch: "agent/issue-9" }, rig.agent("never", "exit 0"));
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/dispatched +the dispatch lacks the input\(s\) task, attempt, lease_epoch; declare all/),
    ]);
  });
});
