/**
 * The task lifecycle end to end: signed webhooks into the real App, workers
 * over the real HTTP API, the fake GitHub behind it checking every request
 * against GitHub's OpenAPI description.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { eventually } from "../support/orchestra.js";
import { providers } from "../support/databases.js";

// The lifecycle on every provider this run has (PostgreSQL in CI): the apply writes SQL of its own.
describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("happy path: trusted queue label → claim → heartbeats → exit with PR → review → merge → done with a receipt", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    expect(rig.labels(1)).toEqual(["agent:queued"]);
    const w = await rig.worker("laptop");

    const before = rig.fake.requests.length;
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    const claimWrites = rig.writesSince(before);
    expect(claimWrites.length).toBeLessThanOrEqual(2);
    expect(claim.body).toMatchObject({
      task: { repo: REPO, issue: 1, title: "Issue 1", body: "Do thing 1" },
      run: { attempt: 1, branch: "agent/issue-1", continuation: null },
      decisions: [],
    });
    const { id: runId, leaseEpoch } = claim.body.run;
    expect(rig.labels(1)).toEqual(["agent:in-progress"]);
    // The task list shows who holds the lease and until when.
    const listed = (await (await rig.app.admin(`/api/v1/tasks?repo=${REPO}&state=claimed`)).json()) as {
      tasks: unknown[];
    };
    expect(listed.tasks).toEqual([
      expect.objectContaining({
        issue: 1,
        lease: { runId, workerId: expect.any(String), leaseExpiresAt: claim.body.run.leaseExpiresAt },
      }),
    ]);
    expect((await w.claim()).status).toBe(204);

    const hb1 = await w.heartbeat(runId, leaseEpoch);
    rig.clock.advance(60_000);
    const hb2 = await w.heartbeat(runId, leaseEpoch);
    expect(hb1.status).toBe(200);
    expect(hb2.status).toBe(200);
    expect(Date.parse(hb2.body.leaseExpiresAt)).toBeGreaterThan(Date.parse(hb1.body.leaseExpiresAt));
    expect(hb2.body.decisions).toEqual([]);

    const head = rig.fake.state.addBranch(REPO, "agent/issue-1", { aheadBy: 2 });
    const pr = rig.fake.state.addPull(REPO, {
      head: "agent/issue-1",
      title: "Thing 1",
      body: "Closes #1",
      user: "agent-bot",
    });
    const exit = await w.exit(runId, {
      leaseEpoch,
      exitCode: 0,
      branch: "agent/issue-1",
      headSha: head,
      testsPassed: true,
    });
    expect(exit.status).toBe(200);
    expect(exit.body).toMatchObject({ outcome: "review", prNumber: pr.number });
    expect(rig.labels(1)).toEqual(["agent:review"]);
    // The lease ended with the review: a heartbeat now is refused.
    expect((await w.heartbeat(runId, leaseEpoch)).status).toBe(409);
    // GitHub also sends pull_request.opened; it changes nothing now.
    await rig.deliver("pull_request", "opened", { pull: pr.number, sender: "agent-bot" });

    const mergeSha = rig.fake.state.mergePull(REPO, pr.number, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: pr.number, sender: "alice" });
    await rig.deliver("issues", "closed", { issue: 1, sender: "alice" });
    expect(rig.labels(1)).toEqual([]);
    const t = await rig.task(1);
    expect(t.task).toMatchObject({ state: "done", prNumber: pr.number, lease: null });
    expect(t.receipt).toMatchObject({ prNumber: pr.number, mergeSha, headSha: head, runId });
    expect(t.runs).toHaveLength(1);
    expect(t.runs[0]).toMatchObject({ id: runId, attempt: 1, state: "review", leaseEpoch, prNumber: pr.number });
  });

  test("an untrusted queue label is removed with one reply that says why", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addIssue(REPO, { number: 2, labels: ["agent:queued"], user: "eve" });
    const id = await rig.deliver("issues", "labeled", { issue: 2, label: "agent:queued", sender: "eve" });
    expect(rig.labels(2)).toEqual([]);
    const comments = rig.fake.state.commentsOn(REPO, 2);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("eve has read permission; write or higher is needed");
    expect(await rig.task(2)).toBeNull();
    // The same delivery again (a redelivery) replies no second time.
    const db = rig.app.database.db;
    await db.delivery.updateMany({
      where: { deliveryId: id },
      data: { state: "pending", processedAt: null, head: true },
    });
    rig.app.orchestra.processor.poke();
    await eventually(
      async () => ((await db.delivery.findUnique({ where: { deliveryId: id } }))?.processedAt ? true : undefined),
      10_000,
      "the redelivery processed",
    );
    await rig.settle();
    expect(rig.fake.state.commentsOn(REPO, 2)).toHaveLength(1);
  });

  test("Orchestra's own label changes never re-trigger it", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addIssue(REPO, { number: 3, labels: ["agent:queued"] });
    await rig.deliver(
      "issues",
      "labeled",
      { issue: 3, label: "agent:queued", sender: "orchestra-test[bot]" },
      { sender: { type: "Bot" } },
    );
    expect(await rig.task(3)).toBeNull();
    expect(rig.fake.state.commentsOn(REPO, 3)).toHaveLength(0);
  });

  test("a stale-epoch heartbeat is 409 and changes nothing", async () => {
    rig = await startRig({ provider });
    await rig.queue(4);
    const w = await rig.worker();
    const { run } = (await w.claim()).body;
    const before = (await rig.app.database.db.task.findFirst({ where: { issue: 4 } }))!;
    const stale = await w.heartbeat(run.id, "not-the-epoch");
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe("stale-epoch");
    const after = (await rig.app.database.db.task.findFirst({ where: { issue: 4 } }))!;
    expect(after).toEqual(before);
    // Another worker cannot use this run at all.
    const other = await rig.worker("other");
    expect((await other.heartbeat(run.id, run.leaseEpoch)).status).toBe(403);
  });

  test("a silent worker's lease expires; after the grace for a late exit the task becomes claimable as attempt 2", async () => {
    rig = await startRig({ provider });
    await rig.queue(5);
    const w = await rig.worker();
    const first = (await w.claim()).body.run;
    rig.clock.advance(301 * 1000); // the default lease is 5 minutes
    const swept = await rig.sweep();
    expect(swept).toMatchObject({ expired: 1, classified: 0 });
    const late = await w.heartbeat(first.id, first.leaseEpoch);
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ reason: "expired", retryable: false });
    expect(late.body.error).toContain("lease expired");
    // The grace period: the interlock holds while a late exit may still come.
    expect(rig.labels(5)).toEqual(["agent:in-progress"]);
    expect((await w.claim()).status).toBe(204);
    rig.clock.advance(121 * 1000);
    expect(await rig.sweep()).toMatchObject({ classified: 1 });
    await rig.settle();
    expect(rig.labels(5)).toEqual(["agent:queued"]);
    const second = await w.claim();
    expect(second.status).toBe(200);
    expect(second.body.run.attempt).toBe(2);
    expect(second.body.run.leaseEpoch).not.toBe(first.leaseEpoch);
    const t = await rig.task(5);
    expect(t.runs.map((r: { state: string }) => r.state)).toEqual(["expired", "live"]);
  });

  test("attempts exhausted → agent:failed with one comment listing the attempts", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxAttempts: 2\n");
    await rig.queue(6);
    const w = await rig.worker();
    const r1 = (await w.claim()).body.run;
    const e1 = await w.exit(r1.id, { leaseEpoch: r1.leaseEpoch, exitCode: 0 });
    expect(e1.body).toMatchObject({
      outcome: "classified",
      class: "phantom",
      recovery: "delete-branch-requeue",
      evidence: { pr: null, claimHeld: false },
    });
    expect(e1.body.evidence.why).toContain("reported success (exit 0) but GitHub shows no pull request");
    expect((await rig.task(6)).task).toMatchObject({ state: "queued", attempt: 1 });
    const r2 = (await w.claim()).body.run;
    expect(r2.attempt).toBe(2);
    rig.clock.advance(3600_000);
    await rig.sweep();
    rig.clock.advance(121_000); // past the grace for a late exit
    await rig.sweep();
    await rig.settle();
    expect(rig.labels(6)).toEqual(["agent:failed"]);
    const comments = rig.fake.state.commentsOn(REPO, 6);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("attempt 1: exited 0 without a pull request — phantom");
    expect(comments[0]!.body).toContain("attempt 2: lease expired without an exit — debris-empty");
    expect((await w.claim()).status).toBe(204);
    expect((await rig.task(6)).task.state).toBe("failed");
  });

  test("issue closed mid-run: lease revoked, labels cleared", async () => {
    rig = await startRig({ provider });
    await rig.queue(7);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    rig.fake.state.closeIssue(REPO, 7, "not_planned");
    await rig.deliver("issues", "closed", { issue: 7, sender: "alice" });
    expect(rig.labels(7)).toEqual([]);
    const hb = await w.heartbeat(run.id, run.leaseEpoch);
    expect(hb.status).toBe(409);
    expect(hb.body).toMatchObject({ reason: "revoked" });
    expect(hb.body.error).toContain("issue closed by alice");
    const t = await rig.task(7);
    expect(t.task).toMatchObject({ state: "cancelled", lease: null });
  });

  test("removing the queue label from a queued task cancels it", async () => {
    rig = await startRig({ provider });
    await rig.queue(8);
    rig.fake.state.issue(REPO, 8).labels = [];
    await rig.deliver("issues", "unlabeled", { issue: 8, label: "agent:queued", sender: "alice" });
    expect((await rig.task(8)).task.state).toBe("cancelled");
    expect((await (await rig.worker()).claim()).status).toBe(204);
  });

  test("invalid config pauses the repository with one comment that says why", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxAttempts: zero\nsurprise: true\n");
    await rig.queue(9);
    expect(await rig.task(9)).toBeNull();
    const comments = rig.fake.state.commentsOn(REPO, 9);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("limits.maxAttempts");
    expect(comments[0]!.body).toContain("surprise");
  });

  test("worker API validation, auth and idempotency", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    expect((await w.call("POST", "/api/v1/claims", { extra: 1 })).status).toBe(400);
    const bad = await w.call("POST", "/api/v1/runs/x/exit", { exitCode: "zero" });
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(["exitCode", "leaseEpoch"]);
    const anon = await fetch(rig.app.url + "/api/v1/claims", { method: "POST", body: "{}" });
    expect(anon.status).toBe(401);
    const wrong = await fetch(rig.app.url + "/api/v1/claims", {
      method: "POST",
      body: "{}",
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(401);
    expect(
      (
        await fetch(rig.app.url + "/api/v1/workers", {
          method: "POST",
          body: "{}",
          headers: { authorization: `Bearer ${w.token}` },
        })
      ).status,
    ).toBe(401);

    await rig.queue(10);
    const first = await w.call("POST", "/api/v1/claims", {}, { "idempotency-key": "k1" });
    const retry = await w.call("POST", "/api/v1/claims", {}, { "idempotency-key": "k1" });
    expect(first.status).toBe(200);
    // The replay is the first answer less its GitHub token, which is never stored in the clear.
    expect(retry).toEqual({
      ...first,
      body: { ...first.body, credentials: null, credentialsError: expect.stringContaining("renewCredentials: true") },
    });
    expect((await rig.task(10)).runs).toHaveLength(1);
    const q = await w.call("POST", `/api/v1/runs/${first.body.run.id}/decision-requests`, {
      leaseEpoch: first.body.run.leaseEpoch,
      question: "Which database?",
      condition: "issue-closed:4",
    });
    expect(q.status).toBe(201);
    expect(typeof q.body.decisionId).toBe("string");
  });

  test('only a PR from the run\'s own branch proves an exit: another branch saying "Fixes #n" does not, and a reported foreign branch is refused', async () => {
    rig = await startRig({ provider });
    await rig.queue(11);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    rig.fake.state.addBranch(REPO, "feature/other-name", { aheadBy: 1 });
    rig.fake.state.addPull(REPO, { head: "feature/other-name", body: "Fixes #11" });
    const wrong = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0, branch: "feature/other-name" });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ reason: "wrong-branch" });
    expect(wrong.body.error).toContain(run.branch);
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    expect(exit.body).toMatchObject({ outcome: "classified", class: "phantom" });
  });

  test("priority labels order the queue; limits turn claims away", async () => {
    rig = await startRig({ provider });
    rig.config('priorityLabels: ["priority:high"]\nlimits:\n  maxConcurrentPerRepo: 2\n');
    await rig.queue(12);
    await rig.queue(13);
    rig.fake.state.addIssue(REPO, { number: 14, labels: ["agent:queued", "priority:high"], user: "alice" });
    await rig.deliver("issues", "labeled", { issue: 14, label: "agent:queued", sender: "alice" });
    const w = await rig.worker();
    expect((await w.claim()).body.task.issue).toBe(14);
    expect((await w.claim()).body.task.issue).toBe(12);
    expect((await w.claim()).status).toBe(204); // two live leases in the repo
    const scoped = await rig.worker("elsewhere", ["acme/other"]);
    expect((await scoped.claim()).status).toBe(204);
  });

  test("a queue label added to running work is taken off again: one state label at a time", async () => {
    rig = await startRig({ provider });
    await rig.queue(15);
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(200);
    rig.fake.state.issue(REPO, 15).labels.push("agent:queued");
    await rig.deliver("issues", "labeled", { issue: 15, label: "agent:queued", sender: "alice" });
    expect(rig.labels(15)).toEqual(["agent:in-progress"]);
    expect((await rig.task(15)).task).toMatchObject({ state: "claimed", attempt: 1 });
  });
});
