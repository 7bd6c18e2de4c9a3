/**
 * A draft pull request from a live run's branch is the agent's work in
 * progress: it is linked to the task and the run goes on (heartbeats renew
 * its lease); `ready_for_review`, or the run's exit, moves the task to review.
 */
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function draftFromRun(w: WorkerClient, issue: number) {
    await rig.queue(issue);
    const run = (await w.claim()).body.run;
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: run.branch, body: `Closes #${issue}`, draft: true });
    await rig.deliver("pull_request", "opened", { pull: pr.number, sender: "agent-bot" });
    return { run, head, pr };
  }

  test("a draft does not end the live run; marked ready for review, the task is in review", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    const { run, pr } = await draftFromRun(w, 1);
    const t = await rig.task(1);
    expect(t.task).toMatchObject({ state: "claimed", prNumber: pr.number });
    expect(t.runs[0]).toMatchObject({ state: "live" });
    expect(rig.labels(1)).toEqual(["agent:in-progress"]);
    rig.clock.advance(100_000);
    expect((await w.heartbeat(run.id, run.leaseEpoch)).status).toBe(200);

    pr.draft = false;
    await rig.deliver("pull_request", "ready_for_review", { pull: pr.number, sender: "agent-bot" });
    const after = await rig.task(1);
    expect(after.task).toMatchObject({ state: "review", prNumber: pr.number });
    expect(after.runs[0]).toMatchObject({ state: "review", endReason: `pull request #${pr.number} opened` });
    expect(rig.labels(1)).toEqual(["agent:review"]);
  });

  test("a run that exits with its PR still a draft moves the task to review", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    const { run, head, pr } = await draftFromRun(w, 2);
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0, headSha: head });
    expect(exit).toMatchObject({ status: 200, body: { outcome: "review", prNumber: pr.number } });
    expect((await rig.task(2)).task).toMatchObject({ state: "review", prNumber: pr.number });
  });
});
