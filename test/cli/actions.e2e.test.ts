/**
 * An operator's retry, resume, hold and cancel, through the API and the CLI:
 * the same machine event as the comment commands (no comment behind it, so
 * no reaction and no reply), the label following on GitHub, a live run
 * stopped, and a refusal that says why.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { runCli as run } from "../support/cli.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });
  const act = (id: string, action: string, body: unknown = {}) =>
    rig.app.admin(`/api/v1/tasks/${id}/${action}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("hold stops a live run and blocks the task; retry queues it again; cancel ends it; a refusal says why", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    const w = await rig.worker();
    const { run: live, task } = (await w.claim()).body;
    const held = await act(task.id, "hold", { by: "ops" });
    expect(held.status).toBe(200);
    expect(await held.json()).toMatchObject({
      task: { id: task.id, state: "blocked" },
      action: "hold",
      outcome: "applied",
    });
    await rig.settle();
    expect(rig.labels(1)).toEqual(["agent:blocked"]);
    expect((await w.heartbeat(live.id, live.leaseEpoch)).status).toBe(409);
    // Not a comment: nothing is said on the issue.
    expect(rig.fake.state.commentsOn(REPO, 1)).toEqual([]);

    const refused = await act(task.id, "hold");
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toMatch(
      /hold refused: the task is blocked: `orchestra hold` stops queued/,
    );

    const retried = await act(task.id, "retry");
    expect(await retried.json()).toMatchObject({ task: { state: "queued", attempt: 0 }, outcome: "applied" });
    await rig.settle();
    expect(rig.labels(1)).toEqual(["agent:queued"]);
    expect((await w.claim()).status).toBe(200);

    const cancelled = await act(task.id, "cancel");
    expect(await cancelled.json()).toMatchObject({ task: { state: "cancelled" } });
    await rig.settle();
    expect(rig.labels(1)).toEqual([]);

    expect((await act(task.id, "frob")).status).toBe(404);
    expect((await act("no-such-task", "retry")).status).toBe(404);
    expect((await act(task.id, "retry", { by: 7 })).status).toBe(400);
  });

  test("the CLI's hold, resume and cancel: human and --json, a refusal exits 1 with the reason", async () => {
    rig = await startRig({ provider });
    await rig.queue(2);
    const id = (await rig.task(2)).task.id as string;
    const cli = (...args: string[]) =>
      run({ ORCHESTRA_URL: rig.app.url, ORCHESTRA_ADMIN_TOKEN: rig.app.adminToken, USER: "ops" }, args);

    const hold = await cli("hold", id);
    expect(hold).toMatchObject({ code: 0, stdout: `${id}  hold: now blocked\n` });
    const resume = await cli("resume", id, "--json");
    expect(resume.code).toBe(0);
    expect(JSON.parse(resume.stdout)).toMatchObject({
      task: { id, state: "queued" },
      action: "resume",
      outcome: "applied",
    });
    const again = await cli("resume", id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/resume refused: the task is queued/);
    expect((await cli("cancel", id)).stdout).toBe(`${id}  cancel: now cancelled\n`);
    expect((await cli("retry")).code).toBe(2);
  });
});
