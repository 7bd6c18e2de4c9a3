/**
 * No task stuck in `claimed`: a run's recovery that can never finish — its
 * pull request GitHub keeps refusing, facts that cannot be gathered time
 * after time, a missing base branch — blocks the task after the bounded tries
 * of the retry schedule, with its diagnostic, exactly one comment that names
 * the command resuming it, and its concurrent slot freed.
 */
import { randomUUID } from "node:crypto";
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { fakeWebhookPayload } from "../support/webhooks.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  let w: WorkerClient;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** One live lease per repository, so a slot held by a stuck task shows. */
  async function start(issue: number): Promise<{ id: string; leaseEpoch: string; branch: string }> {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxConcurrentPerRepo: 1\n");
    await rig.queue(issue);
    w = await rig.worker();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    return claim.body.run;
  }

  async function comment(issue: number, body: string): Promise<void> {
    const c = rig.fake.state.addComment(REPO, issue, { body, user: "alice" });
    await rig.deliverPayload(
      "issue_comment",
      fakeWebhookPayload(rig.fake, "issue_comment", "created", {
        repo: REPO,
        issue,
        comment: c.id,
        sender: "alice",
      }),
      randomUUID(),
    );
  }

  /** The task is blocked with one comment naming `orchestra resume`, and its slot is free for the next issue. */
  async function expectBlocked(issue: number, diagnostic: string): Promise<void> {
    const t = await rig.task(issue);
    expect(t.task).toMatchObject({ state: "blocked", lease: null });
    expect(t.task.diagnostic).toContain(diagnostic);
    expect(rig.labels(issue)).toEqual(["agent:blocked"]);
    const comments = rig.fake.state.commentsOn(REPO, issue);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("`orchestra resume`");
    expect(comments[0]!.body).not.toMatch(/\blabel\b/);
    await rig.queue(issue + 100);
    const next = await w.claim();
    expect(next.status).toBe(200);
    expect(next.body.task.issue).toBe(issue + 100);
  }

  test("a pull request GitHub keeps refusing to open: blocked once its effect is parked, not claimed forever", async () => {
    const run = await start(40);
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 2 });
    rig.fake.state.addCheckRun(REPO, { headSha: head, name: "test", status: "completed", conclusion: "success" });
    rig.fake.inject({
      method: "POST",
      path: "pulls/create",
      status: 422,
      body: {
        message: "Validation Failed",
        errors: [{ resource: "PullRequest", field: "base", code: "invalid" }],
      },
      times: Infinity,
    });
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0, testsPassed: true });
    expect(exit.body).toMatchObject({ class: "debris-publishable", recovery: "publish" });
    const t = await rig.task(40);
    expect(t.effects.find((e: { kind: string }) => e.kind === "create-pull")).toMatchObject({
      state: "parked",
      attempts: 3,
    });
    await expectBlocked(40, "its pull request could not be opened");
    expect(rig.fake.state.repo(REPO).branches.has(run.branch)).toBe(true);
    // Sweeps after it change nothing and say nothing more.
    for (let i = 0; i < 3; i++) {
      rig.clock.advance(3600_000);
      await rig.sweep();
    }
    expect(rig.fake.state.commentsOn(REPO, 40)).toHaveLength(1);
    expect((await rig.task(40)).task.state).toBe("blocked");
  });

  test("a missing base branch: the facts are asked for a bounded number of times, then the task is blocked", async () => {
    const run = await start(41);
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const main = rig.fake.state.repo(REPO).branches.get("main")!;
    rig.fake.state.deleteBranch(REPO, "main");
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1 });
    expect(exit.status).toBe(200);
    expect(exit.body.class).toBeUndefined();
    const compares = () => rig.fake.requestsFor("repos/compare-commits-with-basehead").length;
    // The exit asked once; three sweeps after each backoff ask again, and the task still waits.
    for (let i = 0; i < 3; i++) {
      rig.clock.advance(31 * 60_000);
      await rig.sweep();
      expect((await rig.task(41)).task.state).toBe("claimed");
    }
    expect(compares()).toBe(4);
    const run1 = (await rig.task(41)).runs[0];
    expect(run1.errors.at(-1)).toMatchObject({ message: expect.stringContaining("base branch main was not found") });
    // The fifth try is the last.
    rig.clock.advance(31 * 60_000);
    await rig.sweep();
    expect(compares()).toBe(5);
    await expectBlocked(41, "base branch main was not found");
    for (let i = 0; i < 3; i++) {
      rig.clock.advance(31 * 60_000);
      await rig.sweep();
    }
    expect(compares()).toBe(5);
    expect(rig.fake.state.commentsOn(REPO, 41)).toHaveLength(1);

    // Fixed on GitHub: `orchestra resume` queues it again to continue on its branch.
    rig.fake.state.repo(REPO).branches.set("main", main);
    await comment(41, "orchestra resume");
    expect((await rig.task(41)).task).toMatchObject({ state: "queued", attempt: 0 });
  });

  test("GitHub down for the whole retry window while the facts are gathered: blocked after it, not before", async () => {
    const run = await start(42);
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    rig.fake.inject({
      method: "GET",
      path: "git/get-ref",
      status: 502,
      body: { message: "Bad Gateway" },
      times: Infinity,
    });
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1 });
    expect(exit.status).toBe(200);
    // Two-hour steps: at 2 h and 4 h the outage is still inside the six-hour window.
    for (let i = 0; i < 2; i++) {
      rig.clock.advance(2 * 3600_000);
      await rig.sweep();
      expect((await rig.task(42)).task.state).toBe("claimed");
    }
    rig.clock.advance(2 * 3600_000 + 60_000);
    await rig.sweep();
    await expectBlocked(42, "Bad Gateway");
    expect((await rig.task(42)).task.diagnostic).toContain("retry window");
  });
});
