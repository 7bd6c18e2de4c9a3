/**
 * Dispatch mode: the App claims on queue and runs a workflow; workflow_run and
 * workflow_job events are the heartbeat and the exit. A dispatch GitHub
 * refuses for its inputs backs off with one diagnostic and no attempt charged
 * (one refused for the whole repository opens its breaker: dispatch-breaker.e2e.test.ts).
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload } from "../support/webhooks.js";

const INPUTS = {
  task: { type: "string", required: true },
  run: { type: "string", required: true },
  attempt: { type: "string", required: true },
  lease_epoch: { type: "string", required: true },
  branch: { type: "string", required: true },
  continuation: { type: "string", required: false },
} as const;
import { providers } from "../support/databases.js";

// The lifecycle on every provider this run has (PostgreSQL in CI): the apply writes SQL of its own.
describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  function workflowRunPayload(runId: number, action: "in_progress" | "completed") {
    const repo = rig.fake.state.repo(REPO);
    const run = repo.workflowRuns.get(runId)!;
    // GitHub publishes no in_progress example; the completed one has the same shape.
    return fakeWebhookPayload(
      rig.fake,
      "workflow_run",
      "completed",
      { repo: REPO, sender: "alice" },
      { action, workflow_run: rig.fake.json.workflowRun(repo, run) },
    );
  }

  test("dispatch happy path: queue → workflow_dispatch with the run's inputs → progress renews the lease → success with a PR → review", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n  ref: main\n");
    rig.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { ...INPUTS } });
    await rig.queue(20);
    expect(rig.fake.state.dispatches).toHaveLength(1);
    const d = rig.fake.state.dispatches[0]!;
    const t = await rig.task(20);
    expect(t.task.state).toBe("claimed");
    const run = t.runs[0];
    expect(d.inputs).toEqual({
      task: t.task.id,
      run: run.id,
      attempt: "1",
      lease_epoch: run.leaseEpoch,
      branch: "agent/issue-20",
      continuation: "",
    });
    expect(run.mode).toBe("dispatch");
    expect(rig.labels(20)).toEqual(["agent:in-progress"]);
    // Workers never get dispatch-mode tasks.
    expect((await (await rig.worker()).claim()).status).toBe(204);

    const wr = rig.fake.state.repo(REPO).workflowRuns.get(d.runId!)!;
    wr.status = "in_progress";
    const before = (await rig.app.database.db.task.findFirst({ where: { issue: 20 } }))!.leaseExpiresAt!;
    rig.clock.advance(120_000);
    await rig.deliverPayload("workflow_run", workflowRunPayload(d.runId!, "in_progress"));
    const after = (await rig.app.database.db.task.findFirst({ where: { issue: 20 } }))!.leaseExpiresAt!;
    expect(after.getTime()).toBeGreaterThan(before.getTime());

    rig.fake.state.addBranch(REPO, "agent/issue-20", { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: "agent/issue-20", body: "Closes #20" });
    rig.fake.state.completeWorkflowRun(REPO, d.runId!, "success");
    await rig.deliverPayload("workflow_run", workflowRunPayload(d.runId!, "completed"));
    const done = await rig.task(20);
    expect(done.task).toMatchObject({ state: "review", prNumber: pr.number });
    expect(rig.labels(20)).toEqual(["agent:review"]);
  });

  test("a workflow_dispatch run the App did not start of its workflow is never linked: only the App's own is", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    // GitHub does not answer with the run's id here: the Actions run is found by its title.
    const agent = rig.fake.state.addWorkflow(REPO, {
      path: "agent.yml",
      inputs: { ...INPUTS },
      runName: "Agent ${{ inputs.run }}",
      returnsRunDetails: false,
    });
    const other = rig.fake.state.addWorkflow(REPO, { path: "other.yml" });
    await rig.queue(24);
    const d = rig.fake.state.dispatches[0]!;
    const orchestraRun = (await rig.task(24)).runs[0];
    const row = () => rig.app.database.db.run.findUniqueOrThrow({ where: { id: orchestraRun.id } });
    expect((await row()).workflowRunId).toBeNull();
    const lease = async () =>
      (await rig.app.database.db.task.findFirstOrThrow({ where: { issue: 24 } })).leaseExpiresAt?.getTime() ?? null;
    const before = await lease();

    // Each names the Orchestra run in its title, and each arrives before the App's own.
    const title = `Agent ${orchestraRun.id}`;
    const foreign = [
      { workflowId: agent.id, actor: "alice", why: "it was started by alice, not by the App" },
      { workflowId: agent.id, actor: "github-actions[bot]", why: "it was started by github-actions[bot]" },
      { workflowId: other.id, actor: rig.fake.state.botLogin, why: "it is a run of .github/workflows/other.yml" },
    ];
    for (const f of foreign) {
      const wr = rig.fake.state.addWorkflowRun(REPO, {
        workflowId: f.workflowId,
        event: "workflow_dispatch",
        status: "in_progress",
        actor: f.actor,
        displayTitle: title,
      });
      rig.clock.advance(60_000);
      await rig.deliverPayload("workflow_run", workflowRunPayload(wr.id, "in_progress"));
      expect(await lease()).toBe(before);
      rig.fake.state.completeWorkflowRun(REPO, wr.id, "failure");
      await rig.deliverPayload("workflow_run", workflowRunPayload(wr.id, "completed"));
      expect(await lease()).toBe(before);
      expect(await row()).toMatchObject({ state: "live", workflowRunId: null });
      expect((await rig.task(24)).task).toMatchObject({ state: "claimed", attempt: 1 });
      expect(rig.app.logs.map((l) => l["msg"])).toContainEqual(
        expect.stringContaining(
          `workflow_dispatch run ${wr.id} of ${REPO} is not linked to an Orchestra run: ${f.why}`,
        ),
      );
    }

    // The App's own dispatch: linked by the run id in its title, its progress renews the lease, its end is the exit.
    expect(rig.fake.state.repo(REPO).workflowRuns.get(d.runId!)!.displayTitle).toBe(title);
    rig.fake.state.repo(REPO).workflowRuns.get(d.runId!)!.status = "in_progress";
    rig.clock.advance(60_000);
    await rig.deliverPayload("workflow_run", workflowRunPayload(d.runId!, "in_progress"));
    expect(await lease()).toBeGreaterThan(before!);
    expect((await row()).workflowRunId).toBe(BigInt(d.runId!));
    rig.fake.state.addBranch(REPO, "agent/issue-24", { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: "agent/issue-24", body: "Closes #24" });
    rig.fake.state.completeWorkflowRun(REPO, d.runId!, "success");
    await rig.deliverPayload("workflow_run", workflowRunPayload(d.runId!, "completed"));
    expect((await rig.task(24)).task).toMatchObject({ state: "review", prNumber: pr.number });
  });

  test("the App's dispatch of a workflow without a run-name is not guessed at: the log says to add one", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    rig.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { ...INPUTS }, returnsRunDetails: false });
    await rig.queue(25);
    const d = rig.fake.state.dispatches[0]!;
    rig.fake.state.completeWorkflowRun(REPO, d.runId!, "success");
    await rig.deliverPayload("workflow_run", workflowRunPayload(d.runId!, "completed"));
    const t = await rig.task(25);
    expect(t.task).toMatchObject({ state: "claimed", attempt: 1 });
    expect(t.runs[0]).toMatchObject({ state: "live" });
    const line = rig.app.logs.find((l) => String(l["msg"]).startsWith(`workflow_dispatch run ${d.runId}`));
    expect(line).toMatchObject({ level: 40, workflowRunId: d.runId, path: ".github/workflows/agent.yml" });
    expect(line!["msg"]).toContain("its title names none of the repository's dispatched runs");
    expect(line!["msg"]).toContain("Give the workflow a run-name that includes ${{ inputs.run }}");
  });

  test("a failed workflow run without a PR requeues and dispatches the next attempt", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    rig.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { ...INPUTS } });
    await rig.queue(21);
    const first = rig.fake.state.dispatches[0]!;
    rig.fake.state.completeWorkflowRun(REPO, first.runId!, "failure");
    await rig.deliverPayload("workflow_run", workflowRunPayload(first.runId!, "completed"));
    expect((await rig.task(21)).task).toMatchObject({ state: "queued", attempt: 1 });
    await rig.sweep();
    expect(rig.fake.state.dispatches).toHaveLength(2);
    expect(rig.fake.state.dispatches[1]!.inputs["attempt"]).toBe("2");
  });

  test("a workflow cancelled or never started is an infrastructure death: re-dispatched without using up an attempt", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    rig.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { ...INPUTS } });
    await rig.queue(22);
    for (const conclusion of ["cancelled", "startup_failure"] as const) {
      const d = rig.fake.state.dispatches[rig.fake.state.dispatches.length - 1]!;
      rig.fake.state.completeWorkflowRun(REPO, d.runId!, conclusion);
      await rig.deliverPayload("workflow_run", workflowRunPayload(d.runId!, "completed"));
      expect((await rig.task(22)).task).toMatchObject({ state: "queued", attempt: 0 });
      await rig.sweep();
    }
    const t = await rig.task(22);
    expect(t.runs.map((r: { evidence: { infraDeath?: string } }) => r.evidence?.infraDeath)).toEqual([
      "workflow-cancelled",
      "workflow-startup-failure",
      undefined,
    ]);
    // The third dispatch is attempt 1 again: nothing was charged.
    expect(rig.fake.state.dispatches.map((d) => d.inputs["attempt"])).toEqual(["1", "1", "1"]);
  });

  test("a paused repository in dispatch mode dispatches nothing until the pause is lifted", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    rig.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { ...INPUTS } });
    const pause = (body: object) =>
      rig.app.admin("/api/v1/pause", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await pause({ repo: REPO, reason: "CI migration" });
    await rig.queue(23);
    await rig.sweep();
    expect(rig.fake.state.dispatches).toHaveLength(0);
    expect((await rig.task(23)).task).toMatchObject({ state: "queued", waitingFor: { gate: "paused" } });
    await pause({ repo: REPO, paused: false });
    expect((await rig.sweep()).dispatched).toBe(1);
    expect(rig.fake.state.dispatches).toHaveLength(1);
  });

  test("a dispatch refused for its inputs leaves the task queued, charges nothing, comments once and backs off", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    // The workflow declares fewer inputs than a dispatch sends: GitHub's 422 is about this dispatch.
    rig.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { task: INPUTS.task } });
    await rig.queue(22);
    const attempts = () =>
      rig.fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/dispatches")).length;
    expect(attempts()).toBe(1);
    let t = await rig.task(22);
    expect(t.task).toMatchObject({ state: "queued", attempt: 0, lease: null });
    expect(t.task.diagnostic).toContain("Unexpected inputs provided");
    expect(t.task.waitingFor).toMatchObject({
      gate: "backoff",
      detail: expect.stringContaining("Unexpected inputs provided"),
      until: expect.any(String),
    });
    expect(t.runs[0]).toMatchObject({ state: "aborted" });
    expect(t.runs[0].errors[0].class).toBe("preparation");
    expect(rig.labels(22)).toEqual(["agent:queued"]);

    // 20 sweeps inside the backoff: no new dispatch, no new comment.
    for (let i = 0; i < 20; i++) await rig.sweep();
    expect(attempts()).toBe(1);

    // 20 sweeps each past a growing backoff: retried each time, still one comment, nothing charged.
    for (let i = 0; i < 20; i++) {
      rig.clock.advance(2 * 3600_000);
      await rig.sweep();
    }
    expect(attempts()).toBe(21);
    expect(rig.fake.state.commentsOn(REPO, 22)).toHaveLength(1);
    expect(rig.fake.state.commentsOn(REPO, 22)[0]!.body).toContain("no attempt was counted");
    t = await rig.task(22);
    expect(t.task).toMatchObject({ state: "queued", attempt: 0 });
    expect(rig.labels(22)).toEqual(["agent:queued"]);

    // Fixed on GitHub: the next sweep past the backoff dispatches for real, as attempt 1.
    rig.fake.state.repo(REPO).workflows.forEach((w) => (w.inputs = { ...INPUTS }));
    rig.clock.advance(2 * 3600_000);
    await rig.sweep();
    t = await rig.task(22);
    expect(t.task).toMatchObject({ state: "claimed", attempt: 1 });
  });

  test("the dispatch sweep is not hidden behind a long queue of worker-mode tasks elsewhere", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxConcurrentPerRepo: 100\n  maxConcurrentPerOrg: 100\n");
    for (let i = 100; i < 130; i++) await rig.queue(i); // worker mode: the sweep never dispatches these
    const flows = "acme/flows";
    rig.fake.state.addRepo(flows, { installationId: 77 });
    rig.fake.state.setPermission(flows, "alice", "write");
    rig.fake.state.setFile(flows, ".github/orchestra.yml", "dispatch:\n  workflow: agent.yml\n");
    rig.fake.state.addWorkflow(flows, { path: "agent.yml", inputs: { ...INPUTS } });
    rig.fake.state.addIssue(flows, { number: 1, title: "Flow", labels: ["agent:queued"], user: "alice" });
    // GitHub is down when the label arrives: the task is queued, its dispatch refused and backed off.
    rig.fake.inject({
      method: "POST",
      path: "actions/create-workflow-dispatch",
      status: 422,
      body: { message: "Unexpected inputs provided" },
      times: 1,
    });
    await rig.deliverPayload(
      "issues",
      fakeWebhookPayload(rig.fake, "issues", "labeled", {
        repo: flows,
        issue: 1,
        label: "agent:queued",
        sender: "alice",
      }),
    );
    expect(rig.fake.state.dispatches).toHaveLength(0);
    rig.clock.advance(61_000);
    const swept = await rig.sweep();
    expect(swept.dispatched).toBe(1);
    expect(rig.fake.state.dispatches).toHaveLength(1);
    expect(rig.fake.state.dispatches[0]!.inputs["attempt"]).toBe("1");
  });
});
