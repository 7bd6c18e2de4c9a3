/**
 * Leases that mean work, end to end: stalls, late exits, re-attaching after
 * a worker restart, the breaker and run-level infrastructure deaths — signed
 * webhooks into the real App, workers over the real HTTP API.
 */
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const beat = (w: WorkerClient, run: { id: string; leaseEpoch: string }, progress?: Record<string, string>) =>
    w.call("POST", `/api/v1/runs/${run.id}/heartbeat`, {
      leaseEpoch: run.leaseEpoch,
      ...(progress ? { progress } : {}),
    });

  test("heartbeats whose progress stands still past the stall limit get 409 stalled; the run is classified like an expired lease", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  stallSeconds: 600\n");
    await rig.queue(1);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    // Progress that changes renews the lease past the stall limit.
    for (const step of ["plan", "edit", "test"]) {
      rig.clock.advance(240_000);
      expect((await beat(w, run, { step })).status).toBe(200);
    }
    // The same progress again and again: renewed until the limit, then refused.
    rig.clock.advance(240_000);
    expect((await beat(w, run, { step: "test" })).status).toBe(200);
    rig.clock.advance(240_000);
    expect((await beat(w, run, { step: "test" })).status).toBe(200);
    rig.clock.advance(240_000);
    const stalled = await beat(w, run, { step: "test" });
    expect(stalled.status).toBe(409);
    expect(stalled.body).toMatchObject({ reason: "stalled", retryable: false });
    // Asked again, the answer stays `stalled`.
    expect((await beat(w, run, { step: "test" })).body.reason).toBe("stalled");
    // After the grace for a late exit, the run is classified with the stall in its evidence.
    rig.clock.advance(121_000);
    expect(await rig.sweep()).toMatchObject({ classified: 1 });
    const t = await rig.task(1);
    expect(t.runs[0]).toMatchObject({
      state: "expired",
      class: "debris-empty",
      evidence: { trigger: "lease-expired", stalled: { lastProgress: expect.stringContaining("test") } },
    });
    expect(t.runs[0].endReason).toContain("stalled: no progress since");
    expect(t.task.state).toBe("queued");
  });

  test("an exit after the lease expired but before a successor claims moves the task to review; after a successor claims it gets 409 superseded", async () => {
    rig = await startRig({ provider });
    await rig.queue(2);
    await rig.queue(3);
    const w = await rig.worker();
    const a = (await w.claim()).body.run; // issue 2
    const b = (await w.claim()).body.run; // issue 3
    rig.clock.advance(301_000);
    expect(await rig.sweep()).toMatchObject({ expired: 2, classified: 0 });

    // Issue 2: the late exit comes within the grace period, with its PR.
    const head = rig.fake.state.addBranch(REPO, a.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: a.branch, title: "Two", body: "Closes #2", user: "agent-bot" });
    const late = await w.exit(a.id, { leaseEpoch: a.leaseEpoch, exitCode: 0, branch: a.branch, headSha: head });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ outcome: "review", prNumber: pr.number });
    expect(rig.labels(2)).toEqual(["agent:review"]);

    // Issue 3: classified after the grace (nothing on GitHub), then a successor claims it.
    rig.clock.advance(121_000);
    expect(await rig.sweep()).toMatchObject({ classified: 1 });
    expect((await rig.task(3)).task.state).toBe("queued");
    const successor = await w.claim();
    expect(successor.body.task.issue).toBe(3);
    const superseded = await w.exit(b.id, { leaseEpoch: b.leaseEpoch, exitCode: 0 });
    expect(superseded.status).toBe(409);
    expect(superseded.body).toMatchObject({ reason: "superseded", retryable: false });
    expect((await rig.task(3)).task).toMatchObject({ state: "claimed", attempt: 2 });
  });

  test("a late exit after the run was classified, before anyone claimed again, still brings its PR to review", async () => {
    rig = await startRig({ provider });
    await rig.queue(4);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    rig.clock.advance(301_000);
    await rig.sweep();
    rig.clock.advance(121_000);
    expect(await rig.sweep()).toMatchObject({ classified: 1 });
    expect(rig.labels(4)).toEqual(["agent:queued"]);
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: run.branch, title: "Four", body: "Closes #4", user: "agent-bot" });
    const late = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0, branch: run.branch, headSha: head });
    expect(late.body).toMatchObject({ outcome: "review", prNumber: pr.number });
    expect(rig.labels(4)).toEqual(["agent:review"]);
    // Without a PR a late exit changes nothing and answers the recorded class.
    await rig.queue(40);
    const r5 = (await w.claim()).body.run;
    rig.clock.advance(301_000);
    await rig.sweep();
    rig.clock.advance(121_000);
    await rig.sweep();
    const empty = await w.exit(r5.id, { leaseEpoch: r5.leaseEpoch, exitCode: 1 });
    expect(empty.body).toMatchObject({ outcome: "classified", class: "debris-empty" });
  });

  test("a restarted worker lists its live runs with their epochs and deadlines, and resumes heartbeating", async () => {
    rig = await startRig({ provider });
    await rig.queue(6);
    await rig.queue(7);
    const w = await rig.worker();
    const runs = [(await w.claim()).body.run, (await w.claim()).body.run];
    const other = await rig.worker("other");
    expect((await other.call("GET", "/api/v1/workers/me/runs")).body).toEqual({ runs: [] });
    // The process restarts: it only has its token.
    const listed = await w.call("GET", "/api/v1/workers/me/runs");
    expect(listed.status).toBe(200);
    expect(listed.body.runs.map((r: { id: string }) => r.id).sort()).toEqual(runs.map((r) => r.id).sort());
    expect(listed.body.runs[0]).toMatchObject({
      task: { repo: REPO },
      leaseEpoch: expect.any(String),
      leaseExpiresAt: expect.any(String),
    });
    for (const r of listed.body.runs) expect((await beat(w, r, { step: "resumed" })).status).toBe(200);
    // A run that ended is not listed.
    rig.fake.state.addBranch(REPO, runs[0].branch, { aheadBy: 0 });
    await w.exit(runs[0].id, { leaseEpoch: runs[0].leaseEpoch, exitCode: 1 });
    expect((await w.call("GET", "/api/v1/workers/me/runs")).body.runs.map((r: { id: string }) => r.id)).toEqual([
      runs[1].id,
    ]);
  });

  test("five runs failing the same way open the breaker with one diagnostic; a probe after the cool-down closes it; infrastructure deaths use up no attempts", async () => {
    rig = await startRig({ provider });
    rig.config(
      "limits:\n  maxConcurrentPerRepo: 10\nbreaker:\n  failures: 5\n  windowSeconds: 600\n  coolDownSeconds: 300\n",
    );
    for (let i = 10; i < 17; i++) await rig.queue(i);
    const w = await rig.worker();
    // Five agents start, and the provider goes down under all of them.
    const claims = [];
    for (let i = 0; i < 5; i++) claims.push((await w.claim()).body);
    const died = claims.map((c) => c.task.issue);
    for (const c of claims) {
      const e = await w.exit(c.run.id, { leaseEpoch: c.run.leaseEpoch, exitCode: 1, infra: "provider-unavailable" });
      expect(e.body).toMatchObject({ class: "debris-empty", evidence: { infraDeath: "provider-unavailable" } });
    }
    // Not charged: every task is back in the queue at attempt 0.
    for (const issue of died) expect((await rig.task(issue)).task).toMatchObject({ state: "queued", attempt: 0 });
    // One diagnostic, on the issue of the run that tripped it.
    const notices = died
      .flatMap((i) => rig.fake.state.commentsOn(REPO, i))
      .filter((c) => c.body.includes("stopped claiming work"));
    expect(notices).toHaveLength(1);
    expect(notices[0]!.body).toContain("`debris-empty`");
    expect((await w.claim()).status).toBe(204);
    const tasks = (await (await rig.app.admin(`/api/v1/tasks?repo=${REPO}&state=queued`)).json()) as {
      tasks: Array<{ waitingFor?: { gate: string } }>;
    };
    expect(tasks.tasks.every((t) => t.waitingFor?.gate === "breaker")).toBe(true);
    expect(await rig.sweep()).toMatchObject({ breakers: 0 });

    // After the cool-down: one probe run, and nothing else until it ends, of claims made at once
    // (their transactions overlap on PostgreSQL: the probe's update decides).
    rig.clock.advance(301_000);
    const racing = await Promise.all(Array.from({ length: 4 }, () => w.claim()));
    expect(racing.map((c) => c.status).sort()).toEqual([200, 204, 204, 204]);
    const probe = racing.find((c) => c.status === 200)!.body;
    expect((await w.claim()).status).toBe(204);
    const head = rig.fake.state.addBranch(REPO, probe.run.branch, { aheadBy: 1 });
    rig.fake.state.addPull(REPO, {
      head: probe.run.branch,
      title: "Probe",
      body: `Closes #${probe.task.issue}`,
      user: "agent-bot",
    });
    expect(
      (
        await w.exit(probe.run.id, {
          leaseEpoch: probe.run.leaseEpoch,
          exitCode: 0,
          branch: probe.run.branch,
          headSha: head,
        })
      ).body.outcome,
    ).toBe("review");
    expect(await rig.sweep()).toMatchObject({ breakers: 1 });
    expect((await w.claim()).status).toBe(200);
    expect(notices).toHaveLength(1);
  });
});
