/**
 * The fleet issue end to end: signed webhooks and workers drive task state
 * changes in a repository with `fleetIssue: true`, the App's clock is moved
 * past each debounce window, and the fake GitHub's request log shows what
 * reached GitHub — one issue, at most one edit per batch, none when nothing
 * shown changed; a new issue when it is deleted; nothing while it is closed;
 * nothing with `fleetIssue` off; a recorded plan in dry run.
 */
import { INSTALLATION, REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { FLEET_SETTLE_MS } from "../../src/machine/fleet.js";

const WINDOW_S = 120;
const W = WINDOW_S * 1000;
const ENV = { ORCHESTRA_FLEET_DEBOUNCE_SECONDS: String(WINDOW_S) };

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** The App's clock to just after a debounce window starts: a burst then falls in one window. */
  function windowStart(): void {
    rig.clock.advance(W - (rig.clock.now().getTime() % W) + 100);
  }
  /** The App's clock past the current window's end, then wait until what fell due is performed. */
  async function afterWindow(): Promise<void> {
    rig.clock.advance(W - (rig.clock.now().getTime() % W) + FLEET_SETTLE_MS + 100);
    await rig.settle();
  }
  const calls = (from: number, op: string) => rig.fake.requests.slice(from).filter((r) => r.operationId === op).length;
  const fleetIssues = () => [...rig.fake.state.repo(REPO).issues.values()].filter((i) => i.title === "Orchestra fleet");
  const fleetEffects = (state?: string) =>
    rig.app.database.db.effect.findMany({
      where: { kind: "fleet-issue", ...(state ? { state } : {}) },
      orderBy: { seq: "asc" },
    });
  const refresh = () =>
    rig.app.orchestra.tasks.raise(
      { subject: { installationId: INSTALLATION, repo: REPO, issue: 0 } },
      { kind: "fleet-refresh", why: "test" },
    );
  /** Queues a new issue numbered after everything in the repository (fleet issues take numbers too). */
  async function queueNext(): Promise<number> {
    const n = rig.fake.state.repo(REPO).lastNumber + 1;
    await rig.queue(n);
    return n;
  }

  test("ten state changes in one window: one issue, created once; each later batch one edit; a batch showing nothing new, none", async () => {
    rig = await startRig({ provider, env: ENV });
    rig.config("fleetIssue: true\nlimits:\n  maxAttempts: 1\n");
    windowStart();
    const burst = rig.fake.requests.length;
    for (const n of [1, 2, 3, 4, 5]) await rig.queue(n); // 1-5: queued
    const laptop = await rig.worker("laptop");
    const ci = await rig.worker("ci-runner");
    const r1 = (await laptop.claim()).body; // 6: #1 claimed
    const r2 = (await ci.claim()).body; // 7: #2 claimed
    const r3 = (await laptop.claim()).body; // 8: #3 claimed
    expect(
      (
        await laptop.call("POST", `/api/v1/runs/${r3.run.id}/decision-requests`, {
          leaseEpoch: r3.run.leaseEpoch,
          question: "Keep the old API?",
        })
      ).status,
    ).toBe(201); // 9: #3 blocked
    const r4 = (await ci.claim()).body; // 10: #4 claimed
    expect((await ci.exit(r4.run.id, { leaseEpoch: r4.run.leaseEpoch, exitCode: 0 })).body).toMatchObject({
      class: "phantom",
    }); // 11: #4 failed
    expect([r1, r2, r3, r4].map((c) => c.task.issue)).toEqual([1, 2, 3, 4]);
    expect((await rig.task(4)).task.state).toBe("failed");

    // The burst is one pending effect of the repository (no task's), not yet performed: nothing of it reached GitHub.
    expect(await fleetEffects("pending")).toEqual([expect.objectContaining({ taskId: null, repo: REPO })]);
    expect(calls(burst, "issues/create") + calls(burst, "issues/update")).toBe(0);

    const first = rig.fake.requests.length;
    await afterWindow();
    // One issue, created with the state after the burst; looked for once first (no number stored yet), as the App's bot.
    expect(fleetIssues()).toHaveLength(1);
    expect({
      create: calls(first, "issues/create"),
      update: calls(first, "issues/update"),
      get: calls(first, "issues/get"),
      list: calls(first, "issues/list-for-repo"),
      app: calls(first, "apps/get-authenticated"),
    }).toEqual({ create: 1, update: 0, get: 0, list: 1, app: 1 });
    const issue = fleetIssues()[0]!;
    expect(issue.user).toBe("orchestra-test[bot]");
    const body = issue.body!;
    expect(body).toContain("### Queue (1)");
    expect(body).toContain("| 1 | #5 Issue 5 | 0 | nothing: claimable now |");
    expect(body).toContain("### In progress (2)");
    // Leases of 5 minutes, taken at the window's start, shown just after its end (2 minutes on).
    expect(body).toMatch(/\| #1 Issue 1 \| laptop \| 1 \| [23] min left \|/);
    expect(body).toMatch(/\| #2 Issue 2 \| ci-runner \| 1 \| [23] min left \|/);
    expect(body).toContain("### In review (0)");
    expect(body).toContain("| #3 Issue 3 | question: “Keep the old API?” |");
    expect(body).toContain("| #4 Issue 4 | 1 | `phantom` (delete-branch-requeue) |");
    expect(body).toContain("edits by hand are overwritten");
    expect(await rig.app.database.db.fleetIssue.findUnique({ where: { repo: REPO } })).toMatchObject({
      number: issue.number,
    });

    // Batch two: a PR in review, a retried task, a heartbeat (not shown): one edit.
    const head = rig.fake.state.addBranch(REPO, "agent/issue-1", { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, {
      head: "agent/issue-1",
      title: "Thing 1",
      body: "Closes #1",
      user: "agent-bot",
    });
    expect(
      (
        await laptop.exit(r1.run.id, {
          leaseEpoch: r1.run.leaseEpoch,
          exitCode: 0,
          branch: "agent/issue-1",
          headSha: head,
        })
      ).body.outcome,
    ).toBe("review");
    expect(
      (
        await rig.app.admin(`/api/v1/tasks/${r4.task.id}/retry`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        })
      ).status,
    ).toBe(200);
    expect((await ci.heartbeat(r2.run.id, r2.run.leaseEpoch)).status).toBe(200);
    expect(await fleetEffects("pending")).toHaveLength(1);
    const second = rig.fake.requests.length;
    await afterWindow();
    expect({
      create: calls(second, "issues/create"),
      update: calls(second, "issues/update"),
      get: calls(second, "issues/get"),
      list: calls(second, "issues/list-for-repo"),
    }).toEqual({ create: 0, update: 1, get: 1, list: 0 });
    const edited = rig.fake.state.issue(REPO, issue.number).body!;
    expect(edited).toContain(`| #1 Issue 1 | #${pr.number} |`);
    expect(edited).toContain("### Queue (2)");
    expect(edited).toContain("| 2 | #4 Issue 4 | 0 | nothing: claimable now |");

    // Nothing changed since: a refresh (as reconcile raises it) reads the issue and edits nothing.
    await refresh();
    const third = rig.fake.requests.length;
    await afterWindow();
    expect({ update: calls(third, "issues/update"), get: calls(third, "issues/get") }).toEqual({ update: 0, get: 1 });
    expect((await fleetEffects()).at(-1)).toMatchObject({ state: "done", note: `#${issue.number} already shows this` });
    expect(rig.fake.state.issue(REPO, issue.number).body).toBe(edited);
    // A heartbeat is no change the issue shows: no effect.
    expect((await ci.heartbeat(r2.run.id, r2.run.leaseEpoch)).status).toBe(200);
    expect(await fleetEffects("pending")).toHaveLength(0);

    // Orchestra's own edit comes back as issues.edited: not task input. A queue label on the fleet issue is taken off.
    const echo = await rig.deliver(
      "issues",
      "edited",
      { issue: issue.number, sender: "orchestra-test[bot]" },
      { sender: { type: "Bot" } },
    );
    expect((await rig.app.database.db.delivery.findUnique({ where: { deliveryId: echo } }))?.state).toBe("ignored");
    rig.fake.state.labelIssue(REPO, issue.number, "agent:queued", "alice");
    await rig.deliver("issues", "labeled", { issue: issue.number, label: "agent:queued", sender: "alice" });
    expect(await rig.task(issue.number)).toBeNull();
    expect(rig.labels(issue.number)).toEqual([]);
    expect(await fleetEffects("pending")).toHaveLength(0);
  });

  test("ten state changes against an existing issue, in one window: one edit, no new issue", async () => {
    rig = await startRig({ provider, env: ENV });
    rig.config("fleetIssue: true\n");
    windowStart();
    const first = await queueNext();
    await afterWindow();
    const [issue] = fleetIssues();
    expect(issue).toBeDefined();

    windowStart();
    const from = rig.fake.requests.length;
    const queued: number[] = [];
    for (let i = 0; i < 5; i++) queued.push(await queueNext()); // 1-5: queued
    const w = await rig.worker("night-shift");
    const claimed = [(await w.claim()).body, (await w.claim()).body]; // 6-7: the first two claimed
    expect(claimed.map((c) => c.task.issue)).toEqual([first, queued[0]]);
    const act = (issue: number, action: string) =>
      rig.task(issue).then((t) =>
        rig.app.admin(`/api/v1/tasks/${t.task.id}/${action}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }),
      );
    expect((await act(queued[1]!, "hold")).status).toBe(200); // 8: held (blocked)
    expect((await act(queued[2]!, "cancel")).status).toBe(200); // 9: cancelled
    expect((await act(queued[1]!, "retry")).status).toBe(200); // 10: queued again
    expect(await fleetEffects("pending")).toHaveLength(1);
    expect(calls(from, "issues/update") + calls(from, "issues/create")).toBe(0);

    const performed = rig.fake.requests.length;
    await afterWindow();
    expect({ create: calls(performed, "issues/create"), update: calls(performed, "issues/update") }).toEqual({
      create: 0,
      update: 1,
    });
    expect(fleetIssues().map((i) => i.number)).toEqual([issue!.number]);
    const body = rig.fake.state.issue(REPO, issue!.number).body!;
    expect(body).toContain("### In progress (2)");
    expect(body).toContain("### Queue (3)");
    expect(body).not.toContain(`#${queued[2]} Issue ${queued[2]}`); // cancelled: not shown
  });

  test("deleted (with or without the webhook): a new issue; a lost row: found again by its marker; closed: left alone until reopened", async () => {
    rig = await startRig({ provider, env: ENV });
    rig.config("fleetIssue: true\n");
    windowStart();
    const one = await queueNext();
    await afterWindow();
    const [original] = fleetIssues();
    expect(original).toBeDefined();

    // Deleted, and GitHub says so: the stored number is forgotten and one new issue opened.
    const deleted = fakeWebhookPayload(rig.fake, "issues", "deleted", {
      repo: REPO,
      issue: original!.number,
      sender: "alice",
    });
    rig.fake.state.deleteIssue(REPO, original!.number);
    await rig.deliverPayload("issues", deleted);
    expect(await fleetEffects("pending")).toHaveLength(1);
    let from = rig.fake.requests.length;
    await afterWindow();
    expect(calls(from, "issues/create")).toBe(1);
    const [second] = fleetIssues();
    expect(second!.number).not.toBe(original!.number);
    expect(second!.body).toContain(`| 1 | #${one} Issue ${one} |`);

    // Deleted without a webhook: the next change's edit finds it gone (410) and opens one more.
    rig.fake.state.deleteIssue(REPO, second!.number);
    await queueNext();
    from = rig.fake.requests.length;
    await afterWindow();
    expect(calls(from, "issues/get")).toBe(1);
    expect(rig.fake.requests.slice(from).find((r) => r.operationId === "issues/get")!.status).toBe(410);
    expect(calls(from, "issues/create")).toBe(1);
    const [third] = fleetIssues();
    expect(third!.number).toBeGreaterThan(second!.number);

    // The stored row lost: the App's own issue with the marker is found and edited, no duplicate.
    await rig.app.database.db.fleetIssue.deleteMany({});
    const three = await queueNext();
    from = rig.fake.requests.length;
    await afterWindow();
    expect({
      list: calls(from, "issues/list-for-repo"),
      create: calls(from, "issues/create"),
      update: calls(from, "issues/update"),
    }).toEqual({ list: 1, create: 0, update: 1 });
    expect(fleetIssues().map((i) => i.number)).toEqual([third!.number]);
    expect(rig.fake.state.issue(REPO, third!.number).body).toContain(`#${three} Issue ${three}`);

    // Closed by a person: not edited while closed; reopened: brought up to date at once.
    rig.fake.state.closeIssue(REPO, third!.number, "not_planned");
    await rig.deliver("issues", "closed", { issue: third!.number, sender: "alice" });
    const four = await queueNext();
    from = rig.fake.requests.length;
    await afterWindow();
    expect({ update: calls(from, "issues/update"), create: calls(from, "issues/create") }).toEqual({
      update: 0,
      create: 0,
    });
    expect((await fleetEffects()).at(-1)!.note).toBe(
      `not updated: #${third!.number} was closed; reopen it to have it kept current`,
    );
    expect(rig.fake.state.issue(REPO, third!.number).body).not.toContain(`#${four} Issue ${four}`);
    rig.fake.state.setIssueState(rig.fake.state.issue(REPO, third!.number), "open", "alice");
    await rig.deliver("issues", "reopened", { issue: third!.number, sender: "alice" });
    from = rig.fake.requests.length;
    await afterWindow();
    expect(calls(from, "issues/update")).toBe(1);
    expect(rig.fake.state.issue(REPO, third!.number).body).toContain(`#${four} Issue ${four}`);
    expect(fleetIssues().filter((i) => i.state === "open")).toHaveLength(1);
  });

  test("fleetIssue off: no issue; turned on: one; turned off again: updates stop and the issue stays", async () => {
    rig = await startRig({ provider, env: ENV });
    windowStart();
    const from = rig.fake.requests.length;
    await queueNext();
    await (await rig.worker()).claim();
    await afterWindow();
    expect(await fleetEffects()).toEqual([]);
    expect(calls(from, "issues/create")).toBe(0);

    // Turned on: the push that changes the configuration shows the issue without waiting for a task to change.
    await rig.pushConfig("fleetIssue: true\n");
    await afterWindow();
    expect(fleetIssues()).toHaveLength(1);
    const shown = fleetIssues()[0]!;

    // A change recorded while on, then turned off before it is due: dropped, not performed.
    await queueNext();
    expect(await fleetEffects("pending")).toHaveLength(1);
    await rig.pushConfig("fleetIssue: false\n");
    const off = rig.fake.requests.length;
    await afterWindow();
    expect((await fleetEffects()).at(-1)).toMatchObject({
      state: "dropped",
      note: expect.stringContaining("fleetIssue is off"),
    });
    await queueNext();
    await afterWindow();
    expect(await fleetEffects("pending")).toHaveLength(0);
    expect(calls(off, "issues/update") + calls(off, "issues/create") + calls(off, "issues/get")).toBe(0);
    expect(rig.fake.state.issue(REPO, shown.number)).toMatchObject({ state: "open", body: shown.body });
  });

  test("reconcile refreshes the issue (no edit when nothing changed) and takes a queue label off it instead of queueing it", async () => {
    rig = await startRig({ provider, env: ENV });
    rig.config("fleetIssue: true\n");
    windowStart();
    await queueNext();
    await afterWindow();
    const [issue] = fleetIssues();
    // Labelled while Orchestra heard nothing of it: reconcile finds the label.
    rig.fake.state.labelIssue(REPO, issue!.number, "agent:queued", "alice");
    rig.clock.advance(5 * 60_000 + 1_000);
    // Reconcile ran and repaired one difference: the label, not a new task.
    expect((await rig.sweep()).reconciled).toBe(1);
    expect(await rig.task(issue!.number)).toBeNull();
    expect(rig.labels(issue!.number)).toEqual([]);
    expect(await fleetEffects("pending")).toHaveLength(1);
    const from = rig.fake.requests.length;
    await afterWindow();
    expect({
      get: calls(from, "issues/get"),
      update: calls(from, "issues/update"),
      create: calls(from, "issues/create"),
    }).toEqual({ get: 1, update: 0, create: 0 });
  });

  test("dry run: no GitHub write, the plan recorded; a paused repository still gets its issue", async () => {
    rig = await startRig({ provider, env: ENV });
    rig.config("fleetIssue: true\ndryRun: true\n");
    windowStart();
    const from = rig.fake.requests.length;
    const one = await queueNext();
    await queueNext();
    await afterWindow();
    expect(rig.writesSince(from)).toEqual([]);
    expect(await fleetEffects()).toEqual([
      expect.objectContaining({
        state: "dry-run",
        dryRun: true,
        note: `would have: bring the "Orchestra fleet" issue of ${REPO} up to date (create it if there is none)`,
      }),
    ]);
    expect(fleetIssues()).toEqual([]);

    // Paused: claims stop, the view does not.
    await rig.pushConfig("fleetIssue: true\npaused: true\n");
    await queueNext();
    await afterWindow();
    const [issue] = fleetIssues();
    expect(issue!.body).toContain(
      `> **Nothing is claimed here now:** ${REPO} is paused (\`paused: true\` in \`.github/orchestra.yml\`)`,
    );
    expect(issue!.body).toContain(`| 1 | #${one} Issue ${one} | 0 | \`paused\`:`);
  });
});
