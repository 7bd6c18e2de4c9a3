/**
 * A dispatch GitHub refuses for the whole repository — no such workflow, no
 * `workflow_dispatch` trigger, no permission — opens the repository's
 * breaker with one comment: its tasks stay queued (`waitingFor: breaker`),
 * charged nothing and not commented on one by one. After the cool-down one
 * probe is dispatched; GitHub accepting it closes the breaker.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

const INPUTS = {
  task: { type: "string", required: true },
  run: { type: "string", required: true },
  attempt: { type: "string", required: true },
  lease_epoch: { type: "string", required: true },
  branch: { type: "string", required: true },
  continuation: { type: "string", required: false },
} as const;

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const posts = () => rig.fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/dispatches")).length;
  const comments = () => [1, 2, 3].flatMap((n) => rig.fake.state.commentsOn(REPO, n));

  async function expectHeld(detail: string): Promise<void> {
    for (const issue of [1, 2, 3]) {
      const t = await rig.task(issue);
      expect(t.task).toMatchObject({ state: "queued", attempt: 0, waitingFor: { gate: "breaker" } });
      expect(t.task.waitingFor.detail).toContain("GitHub refuses every dispatch here");
      expect(t.task.waitingFor.detail).toContain(detail);
      expect(rig.labels(issue)).toEqual(["agent:queued"]);
    }
  }

  test.each([
    [
      "the workflow has no workflow_dispatch trigger",
      (r: Rig) => r.fake.state.addWorkflow(REPO, { path: "agent.yml", dispatchable: false }),
      "Workflow does not have 'workflow_dispatch' trigger",
    ],
    ["the workflow does not exist", () => undefined, "Not Found"],
    [
      "the App may not run Actions",
      (r: Rig) => {
        r.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { ...INPUTS } });
        r.fake.inject({
          method: "POST",
          path: "actions/create-workflow-dispatch",
          status: 403,
          body: { message: "Resource not accessible by integration" },
          times: Infinity,
        });
      },
      "Resource not accessible by integration",
    ],
  ])("%s: one comment, every task waits behind the breaker", async (_cause, arrange, message) => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    arrange(rig);
    for (const issue of [1, 2, 3]) await rig.queue(issue);
    for (let i = 0; i < 5; i++) await rig.sweep();
    expect(posts()).toBe(1);
    await expectHeld(message);
    expect(comments()).toHaveLength(1);
    expect(rig.fake.state.commentsOn(REPO, 1)[0]!.body).toContain(`Orchestra stopped dispatching agents in ${REPO}`);
    const t = await rig.task(1);
    expect(t.runs[0]).toMatchObject({ state: "aborted" });
  });

  test("the probe refused again waits twice as long, silently; accepted, it closes the breaker", async () => {
    rig = await startRig({ provider });
    rig.config("dispatch:\n  workflow: agent.yml\n");
    const wf = rig.fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { ...INPUTS }, dispatchable: false });
    for (const issue of [1, 2, 3]) await rig.queue(issue);
    expect(posts()).toBe(1);
    const first = (await rig.task(2)).task.waitingFor.until;

    // Past the cool-down (600 s): one probe, refused again; the next wait is 1200 s.
    rig.clock.advance(601_000);
    await rig.sweep();
    await rig.sweep();
    expect(posts()).toBe(2);
    await expectHeld("workflow_dispatch");
    const second = (await rig.task(2)).task.waitingFor.until;
    expect(new Date(second).getTime() - new Date(first).getTime()).toBeGreaterThan(1_200_000);
    rig.clock.advance(700_000);
    await rig.sweep();
    expect(posts()).toBe(2);
    expect(comments()).toHaveLength(1);

    // Fixed on GitHub: the probe is accepted, the breaker closes, the rest are dispatched.
    wf.dispatchable = true;
    rig.clock.advance(600_000);
    await rig.sweep();
    await rig.sweep();
    expect(posts()).toBe(5);
    expect(rig.fake.state.dispatches).toHaveLength(3);
    for (const issue of [1, 2, 3]) expect((await rig.task(issue)).task).toMatchObject({ state: "claimed", attempt: 1 });
    expect(comments()).toHaveLength(1);
  });
});
