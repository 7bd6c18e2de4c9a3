/**
 * Honest outcomes end to end: a run ends without a PR, Orchestra gathers the
 * facts from the fake GitHub, records one class and performs the one
 * recovery it names — and shows it on GitHub.
 */
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

// The lifecycle on every provider this run has (PostgreSQL in CI): the apply writes SQL of its own.
describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  let w: WorkerClient;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function start(issue: number, config?: string): Promise<{ id: string; leaseEpoch: string; branch: string }> {
    rig = await startRig({ provider });
    if (config) rig.config(config);
    await rig.queue(issue);
    w = await rig.worker();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    return claim.body.run;
  }

  const branchExists = (name: string) => rig.fake.state.repo(REPO).branches.has(name);
  const lastRun = async (issue: number) => {
    const t = await rig.task(issue);
    return { task: t.task, run: t.runs[t.runs.length - 1] };
  };

  test("phantom: exit 0, no PR, an empty branch → branch deleted, requeued with the attempt counted", async () => {
    const run = await start(30);
    rig.fake.state.addBranch(REPO, run.branch);
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    expect(exit.body).toMatchObject({ outcome: "classified", class: "phantom", recovery: "delete-branch-requeue" });
    expect(branchExists(run.branch)).toBe(false);
    const { task, run: r } = await lastRun(30);
    expect(task).toMatchObject({ state: "queued", attempt: 1 });
    expect(r).toMatchObject({ class: "phantom", recovery: "delete-branch-requeue", state: "exited" });
    expect(rig.labels(30)).toEqual(["agent:queued"]);
  });

  test("debris A: exit 1 with an empty branch → deleted and requeued", async () => {
    const run = await start(31);
    rig.fake.state.addBranch(REPO, run.branch);
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1 });
    expect(exit.body).toMatchObject({ class: "debris-empty", recovery: "delete-branch-requeue" });
    expect(branchExists(run.branch)).toBe(false);
    expect((await lastRun(31)).task.state).toBe("queued");
    expect((await w.claim()).body.run).toMatchObject({ attempt: 2, continuation: null });
  });

  test("debris B: commits ahead, green checks → the App opens the PR after re-verifying the checks", async () => {
    const run = await start(32);
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 2 });
    rig.fake.state.addCheckRun(REPO, { headSha: head, name: "test", status: "completed", conclusion: "success" });
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0, testsPassed: true, dirty: false });
    expect(exit.body).toMatchObject({
      class: "debris-publishable",
      recovery: "publish",
      evidence: { claimHeld: false },
    });
    // Classified and re-verified before opening; the Orchestra check run on the new PR is created without a read
    // (Orchestra never began one on that commit).
    expect(rig.fake.requestsFor("checks/list-for-ref")).toHaveLength(2);
    const pulls = [...rig.fake.state.repo(REPO).pulls.values()];
    expect(pulls).toHaveLength(1);
    expect(pulls[0]).toMatchObject({ headRef: run.branch });
    const issue = rig.fake.state.issue(REPO, pulls[0]!.number); // a PR is an issue too: author and body live there
    expect(issue.user).toBe("orchestra-test[bot]");
    expect(issue.body).toContain("Closes #32");
    expect(issue.body).toContain(run.id);
    expect((await lastRun(32)).task).toMatchObject({ state: "review", prNumber: pulls[0]!.number });
    expect(rig.labels(32)).toEqual(["agent:review"]);
  });

  test("debris B whose checks turn red before publishing: no PR; the work is kept and resumed", async () => {
    const run = await start(33);
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const check = rig.fake.state.addCheckRun(REPO, {
      headSha: head,
      name: "test",
      status: "completed",
      conclusion: "success",
    });
    let reads = 0;
    rig.fake.beforeHandle((op) => {
      if (op === "checks/list-for-ref" && ++reads === 2)
        rig.fake.state.updateCheckRun(REPO, check.id, { conclusion: "failure" });
    });
    // The exit answers with the class recorded at commit; publishing follows from the outbox.
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    expect(exit.body).toMatchObject({ class: "debris-publishable", recovery: "publish" });
    const { run: r, task } = await lastRun(33);
    expect(r).toMatchObject({ class: "debris-half-done", recovery: "hold-resume" });
    expect(r.evidence.why).toContain("publishing stopped");
    expect(task).toMatchObject({ state: "queued", continuation: { kind: "resume" } });
    expect(rig.fake.state.repo(REPO).pulls.size).toBe(0);
    expect(branchExists(run.branch)).toBe(true);
    const publish = (await rig.task(33)).effects.find((e: { kind: string }) => e.kind === "create-pull");
    expect(publish).toMatchObject({ state: "dropped" });
    expect(publish.note).toContain("not published");
    const next = await w.claim();
    expect(next.body.run).toMatchObject({ attempt: 2, branch: run.branch, continuation: { kind: "resume" } });
  });

  test("debris C: never deleted however many sweeps; resumed, then blocked after the bound with one comment", async () => {
    const run1 = await start(34, "limits:\n  maxAttempts: 2\n");
    rig.fake.state.addBranch(REPO, run1.branch, { aheadBy: 3 });
    const e1 = await w.exit(run1.id, { leaseEpoch: run1.leaseEpoch, exitCode: 1, dirty: true });
    expect(e1.body).toMatchObject({ class: "debris-half-done", recovery: "hold-resume" });
    const run2 = (await w.claim()).body.run;
    expect(run2.continuation).toMatchObject({
      kind: "resume",
      branch: run1.branch,
      previous: { attempt: 1, class: "debris-half-done" },
    });
    const e2 = await w.exit(run2.id, { leaseEpoch: run2.leaseEpoch, exitCode: 0, testsPassed: false });
    expect(e2.body).toMatchObject({ class: "debris-half-done", recovery: "hold-resume" });
    for (let i = 0; i < 5; i++) {
      rig.clock.advance(3600_000);
      await rig.sweep();
    }
    expect(branchExists(run1.branch)).toBe(true);
    expect(rig.fake.requests.some((q) => q.method === "DELETE" && q.path.includes("/git/refs/"))).toBe(false);
    expect((await lastRun(34)).task.state).toBe("blocked");
    expect(rig.labels(34)).toEqual(["agent:blocked"]);
    const comments = rig.fake.state.commentsOn(REPO, 34);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(`\`${run1.branch}\` has unfinished work`);
  });

  test("an expired lease is classified from the same facts", async () => {
    const run = await start(35);
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    rig.fake.state.addCheckRun(REPO, { headSha: head, name: "build", status: "in_progress", conclusion: null });
    rig.clock.advance(1801_000);
    expect(await rig.sweep()).toMatchObject({ expired: 1, classified: 0 }); // the grace for a late exit
    rig.clock.advance(121_000);
    const swept = await rig.sweep();
    expect(swept).toMatchObject({ classified: 1 });
    const { run: r, task } = await lastRun(35);
    expect(r).toMatchObject({ state: "expired", class: "debris-half-done", recovery: "hold-resume" });
    expect(r.evidence.trigger).toBe("lease-expired");
    expect(r.evidence.note).toContain("lease expired");
    expect(task).toMatchObject({ state: "queued", continuation: { kind: "resume" } });
    expect(branchExists(run.branch)).toBe(true);
  });

  test("GitHub 502s while gathering facts: not classified, nothing deleted; asked again after a backoff", async () => {
    const run = await start(36);
    rig.fake.state.addBranch(REPO, run.branch);
    rig.fake.inject({ method: "GET", path: "repos/compare-commits-with-basehead", status: 502, times: 1 });
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    expect(exit.status).toBe(200);
    expect(exit.body).toMatchObject({ outcome: "classified", evidence: { pending: true } });
    expect(exit.body.class).toBeUndefined();
    expect(branchExists(run.branch)).toBe(true);
    let { run: r, task } = await lastRun(36);
    expect(r.class).toBeNull();
    expect(r.errors[0]).toMatchObject({ class: "github-502" });
    expect(task.state).toBe("claimed");
    // Inside its backoff the run is not asked about again: a broken run never holds the sweep.
    const compares = () => rig.fake.requestsFor("repos/compare-commits-with-basehead").length;
    const before = compares();
    await rig.sweep();
    expect(compares()).toBe(before);
    // A second outage after the backoff: counted in the ring, still nothing deleted.
    rig.clock.advance(31_000);
    rig.fake.inject({ method: "GET", path: "repos/compare-commits-with-basehead", status: 502, times: 1 });
    await rig.sweep();
    ({ run: r } = await lastRun(36));
    expect(r.class).toBeNull();
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0].count).toBe(2);
    expect(branchExists(run.branch)).toBe(true);
    // The backoff doubled: 31 s is not enough now, 61 s is.
    rig.clock.advance(31_000);
    await rig.sweep();
    expect((await lastRun(36)).run.class).toBeNull();
    rig.clock.advance(31_000);
    await rig.sweep();
    ({ run: r, task } = await lastRun(36));
    expect(r).toMatchObject({ class: "phantom", recovery: "delete-branch-requeue" });
    expect(branchExists(run.branch)).toBe(false);
    expect(task.state).toBe("queued");
  });

  test("turn cap: one escalation comment per run and class, with the last tool calls, however often the sweep runs", async () => {
    const run = await start(37);
    const exit = await w.exit(run.id, {
      leaseEpoch: run.leaseEpoch,
      exitCode: 1,
      turnCapHit: true,
      lastToolCalls: ["read_file", "edit", "run_tests", "edit", "run_tests"],
    });
    expect(exit.body).toMatchObject({ class: "turn-cap-spinning", recovery: "escalate" });
    for (let i = 0; i < 5; i++) await rig.sweep();
    const comments = rig.fake.state.commentsOn(REPO, 37);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("turn-cap-spinning");
    expect(comments[0]!.body).toContain("`run_tests` → `edit` → `run_tests`");
    expect((await lastRun(37)).task.state).toBe("blocked");
    expect(rig.labels(37)).toEqual(["agent:blocked"]);
  });

  test("a worker's question blocks the task with the question recorded and asked once", async () => {
    const run = await start(38);
    const exit = await w.exit(run.id, {
      leaseEpoch: run.leaseEpoch,
      exitCode: 0,
      question: "Should the API stay backwards compatible?",
    });
    expect(exit.body).toMatchObject({ class: "question", recovery: "block-question" });
    await rig.sweep();
    const t = await rig.task(38);
    expect(t.task.state).toBe("blocked");
    expect(t.decisions).toEqual([
      expect.objectContaining({ kind: "question", body: "Should the API stay backwards compatible?" }),
    ]);
    expect(rig.fake.state.commentsOn(REPO, 38)).toHaveLength(1);
  });

  test("merged: a run that exits after its PR merged settles the task", async () => {
    const run = await start(39);
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: run.branch, body: "Closes #39" });
    const mergeSha = rig.fake.state.mergePull(REPO, pr.number);
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 3 });
    expect(exit.body).toMatchObject({ class: "merged", recovery: "settle", prNumber: pr.number });
    const t = await rig.task(39);
    expect(t.task.state).toBe("done");
    expect(t.receipt).toMatchObject({ mergeSha, prNumber: pr.number });
    expect(rig.labels(39)).toEqual([]);
  });

  test("a sweep that expires 30 leases writes to GitHub at the installation's pace, and everything converges", async () => {
    rig = await startRig({ provider, effects: { spacingMs: 40 } });
    // The breaker would open on 30 runs ending alike; here the pace is the point.
    rig.config("limits:\n  maxConcurrentPerRepo: 100\n  maxConcurrentPerOrg: 100\nbreaker:\n  failures: 100\n");
    w = await rig.worker();
    const branches: string[] = [];
    for (let i = 40; i < 70; i++) {
      await rig.queue(i);
      const run = (await w.claim()).body.run;
      rig.fake.state.addBranch(REPO, run.branch); // empty: each costs a delete and a label swap
      branches.push(run.branch);
    }
    rig.clock.advance(1801_000);
    const from = rig.fake.requests.length;
    expect(await rig.sweep()).toMatchObject({ expired: 30, classified: 0 });
    rig.clock.advance(121_000); // past the grace for a late exit
    const swept = await rig.sweep();
    expect(swept).toMatchObject({ classified: 20 });
    await rig.sweep();
    const writes = rig.fake.requests
      .slice(from)
      .filter(
        (q) =>
          q.method !== "GET" &&
          !q.path.includes("/access_tokens") &&
          (q.path !== "/graphql" || q.graphql?.operationName === "SwapLabels"),
      );
    // per task: revoke the run's token, delete the branch, and one swap of agent:in-progress for agent:queued
    // (the ids of both labels and the issue came from the answers to the claim's label writes); swaps due at
    // once go out several to a request
    expect(writes.filter((q) => q.path === "/installation/token")).toHaveLength(30);
    const swaps = writes.filter((q) => q.graphql?.operationName === "SwapLabels");
    const swapped = swaps.flatMap((q) => Object.keys(q.graphql!.variables).filter((k) => /^issue\d+$/.test(k)));
    expect(swapped).toHaveLength(30);
    expect(swaps.length).toBeLessThanOrEqual(30);
    expect(writes.length).toBe(60 + swaps.length);
    // Paced: the writes take at least one spacing each after the first, and no 400 ms holds more than 11 of
    // them (arrival times jitter by a request's latency; the slots themselves are 40 ms apart).
    expect(writes[writes.length - 1]!.at - writes[0]!.at).toBeGreaterThanOrEqual((writes.length - 1) * 40 - 60);
    const busiest = Math.max(...writes.map((q) => writes.filter((x) => x.at >= q.at && x.at < q.at + 400).length));
    expect(busiest).toBeLessThanOrEqual(11);
    expect(branches.every((b) => !branchExists(b))).toBe(true);
    const tasks = await rig.app.database.db.task.findMany({ where: { issue: { gte: 40, lt: 70 } } });
    expect(tasks.every((t) => t.state === "queued" && t.attempt === 1)).toBe(true);
    expect(
      Array.from({ length: 30 }, (_, k) => rig.labels(40 + k)).every((l) => l.length === 1 && l[0] === "agent:queued"),
    ).toBe(true);
  });

  test("a claim answers at commit; a label write GitHub refuses is retried until the label is right", async () => {
    rig = await startRig({ provider });
    await rig.queue(80);
    w = await rig.worker();
    rig.fake.inject({ method: "POST", path: "issues/add-labels", status: 502, times: 2 });
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    expect(claim.body.run.attempt).toBe(1);
    const t = await rig.task(80);
    expect(t.task).toMatchObject({ state: "claimed", attempt: 1 });
    expect(rig.labels(80)).toEqual(["agent:in-progress"]);
    const label = t.effects.find(
      (e: { kind: string; payload: { label: string } }) =>
        e.kind === "label" && e.payload.label === "agent:in-progress",
    );
    expect(label).toMatchObject({ state: "done", attempts: 3 });
    expect(label.errors[0]).toMatchObject({ class: "github-502" });
    // Label writes are not answered for: the lost answers produced no second label.
    expect(rig.fake.state.labelsOf(REPO, 80)).toEqual(["agent:in-progress"]);
  });

  test("a repeated exit gets the recorded verdict again; runs whose task moved on stop being swept", async () => {
    const run = await start(81);
    const first = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    const again = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, evidence: first.body.evidence });
    // A run whose classification was pending when a person closed the issue is not owed anything.
    const run2 = (await w.claim()).body.run;
    rig.fake.inject({ method: "GET", path: "repos/compare-commits-with-basehead", status: 502, times: 1 });
    rig.fake.state.addBranch(REPO, run2.branch);
    await w.exit(run2.id, { leaseEpoch: run2.leaseEpoch, exitCode: 0 });
    rig.fake.state.closeIssue(REPO, 81, "not_planned");
    await rig.deliver("issues", "closed", { issue: 81, sender: "alice" });
    const compares = rig.fake.requestsFor("repos/compare-commits-with-basehead").length;
    rig.clock.advance(3600_000);
    await rig.sweep();
    expect(rig.fake.requestsFor("repos/compare-commits-with-basehead").length).toBe(compares);
    expect((await rig.task(81)).runs[1]).toMatchObject({ class: null, state: "exited" });
    expect(branchExists(run2.branch)).toBe(true); // nothing deleted for a run whose task had moved on
  });
});
