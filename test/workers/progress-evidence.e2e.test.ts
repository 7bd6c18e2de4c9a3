/**
 * A lease that ends without an exit is classified with what its last
 * heartbeat reported of the worktree: dirty, commits ahead, or a head that is
 * not the base's mean work exists that GitHub may not show, and such a run is
 * never debris-empty (whose recovery deletes the branch). The evidence
 * carries the last progress either way.
 */
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function diedAfter(w: WorkerClient, issue: number, progress: Record<string, unknown>) {
    await rig.queue(issue);
    const run = (await w.claim()).body.run;
    const beat = await w.call("POST", `/api/v1/runs/${run.id}/heartbeat`, { leaseEpoch: run.leaseEpoch, progress });
    expect(beat.status).toBe(200);
    return run;
  }

  test("dirty, commits ahead or a head off the base in the last heartbeat: never debris-empty; the base's own head is", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    const base = rig.fake.state.repo(REPO).branches.get("main")!;
    await diedAfter(w, 1, { step: "edit", dirty: true });
    await diedAfter(w, 2, { step: "commit", ahead: 2, dirty: false });
    await diedAfter(w, 3, { headSha: "abcdef1234567", step: "test" });
    await diedAfter(w, 4, { headSha: base, step: "clone", dirty: false, ahead: 0 });
    rig.clock.advance(301_000);
    expect(await rig.sweep()).toMatchObject({ expired: 4 });
    rig.clock.advance(121_000);
    expect(await rig.sweep()).toMatchObject({ classified: 4 });

    const runOf = async (issue: number) => (await rig.task(issue)).runs[0];
    expect(await runOf(1)).toMatchObject({
      class: "unknown",
      recovery: "escalate",
      evidence: { trigger: "lease-expired", lastProgress: { step: "edit", dirty: true } },
    });
    expect((await runOf(1)).evidence.why).toContain("dirty worktree");
    expect(await runOf(2)).toMatchObject({ class: "unknown", evidence: { lastProgress: { ahead: 2 } } });
    expect((await runOf(2)).evidence.why).toContain("2 commit(s) ahead of the base, GitHub shows 0");
    expect(await runOf(3)).toMatchObject({
      class: "unknown",
      evidence: { lastProgress: { headSha: "abcdef1234567" } },
    });
    expect((await runOf(3)).evidence.why).toContain("not the base's");
    // Nothing but the base's own head: debris, with the progress as evidence.
    expect(await runOf(4)).toMatchObject({
      class: "debris-empty",
      recovery: "delete-branch-requeue",
      evidence: { lastProgress: { headSha: base, ahead: 0, dirty: false } },
    });
    expect((await rig.task(4)).task.state).toBe("queued");
    // Escalated, never requeued as if empty.
    for (const issue of [1, 2, 3]) expect((await rig.task(issue)).task.state).not.toBe("queued");
  });

  test("the heartbeat refuses progress fields of the wrong type, naming them", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    await rig.queue(5);
    const run = (await w.claim()).body.run;
    const bad = await w.call("POST", `/api/v1/runs/${run.id}/heartbeat`, {
      leaseEpoch: run.leaseEpoch,
      progress: { dirty: "yes", ahead: -1 },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/dirty/);
    expect(JSON.stringify(bad.body)).toMatch(/ahead/);
  });
});
