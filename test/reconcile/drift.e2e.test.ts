/**
 * Drift repair end to end: the reconcile sweep reads the repository's
 * agent-labelled issues (GraphQL, validated against GitHub's schema by the
 * fake) and brings tasks and labels together — missed queue labels, missed
 * closes, hand-edited labels, superseded parents, a lost installation — with
 * a failing listing changing nothing.
 */
import { INSTALLATION, REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { onceForAll, providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  const anyDb = onceForAll(provider);
  let rig: Rig;
  /** What a rig started on another's GitHub and database does not close itself. */
  let shared: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
    for (const s of shared) await s.close();
    shared = [];
  });

  /** The next sweep runs reconcile (it runs every 5 minutes of the clock). */
  /** The next sweep runs reconcile (it runs every 5 minutes of the clock); `timeoutMs` for its writes to be performed. */
  async function reconcile(timeoutMs?: number, advanced = 0) {
    rig.clock.advance(5 * 60_000 + 1000 - advanced);
    return rig.sweep({ timeoutMs });
  }
  const graphqlCalls = (from: number) => rig.fake.requests.slice(from).filter((r) => r.path.endsWith("graphql")).length;

  test("a queue label whose webhook never came becomes exactly one task; an untrusted one is removed with a reply", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addIssue(REPO, { number: 1, title: "Missed", body: "Do it", labels: [], user: "alice" });
    rig.fake.state.labelIssue(REPO, 1, "agent:queued", "alice");
    rig.fake.state.addIssue(REPO, { number: 2, title: "Sneaky", body: "", labels: [], user: "eve" });
    rig.fake.state.labelIssue(REPO, 2, "agent:queued", "eve");
    await reconcile();
    await reconcile();
    expect(await rig.app.database.db.task.count({ where: { repo: REPO, issue: 1 } })).toBe(1);
    expect((await rig.task(1)).task.state).toBe("queued");
    expect(await rig.task(2)).toBeNull();
    expect(rig.labels(2)).toEqual([]);
    expect(rig.fake.state.commentsOn(REPO, 2)).toHaveLength(1);
  });

  test("a close whose webhook was lost ends the task and clears its label; the run's heartbeat gets 409", async () => {
    rig = await startRig({ provider });
    await rig.queue(3);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    // The next reconcile is five minutes away; the run keeps its lease meanwhile.
    rig.clock.advance(4 * 60_000);
    expect((await w.heartbeat(run.id, run.leaseEpoch)).status).toBe(200);
    rig.fake.state.closeIssue(REPO, 3); // no webhook
    await reconcile();
    expect((await rig.task(3)).task.state).toBe("cancelled");
    expect(rig.labels(3)).toEqual([]);
    expect((await w.heartbeat(run.id, run.leaseEpoch)).status).toBe(409);
  });

  test("a label write that lands while the labels are read is not taken for a hand edit", async () => {
    let duringRead: (() => Promise<void>) | null = null;
    rig = await startRig({
      provider,
      effects: { start: false },
      hooks: { afterLabelsRead: async () => duringRead?.() },
    });
    await rig.queue(6);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    // The next reconcile is five minutes away; the run keeps its lease meanwhile.
    rig.clock.advance(4 * 60_000);
    expect((await w.heartbeat(run.id, run.leaseEpoch)).status).toBe(200);
    // The claim's label write halfway: its label added, the queue label's removal in flight.
    const removal = rig.fake.hold("issues/remove-label");
    rig.startEffects();
    await removal.reached;
    expect(rig.labels(6)).toEqual(["agent:queued", "agent:in-progress"]);
    // GitHub answers the read with both labels; the write is done before they are compared.
    duringRead = async () => {
      duringRead = null;
      removal.release();
      await rig.settle();
    };
    expect((await reconcile(undefined, 4 * 60_000)).reconciled).toBe(0);
    expect(rig.labels(6)).toEqual(["agent:in-progress"]);
    expect(rig.fake.state.commentsOn(REPO, 6)).toEqual([]);
    expect((await rig.task(6)).task.state).toBe("claimed");
  });

  test("labels changed by hand are restored with one comment; a label on an issue with no task goes", async () => {
    rig = await startRig({ provider });
    await rig.queue(4);
    rig.fake.state.labelIssue(REPO, 4, "agent:failed", "alice"); // two state labels at once
    rig.fake.state.addIssue(REPO, { number: 5, title: "Stray", body: "", labels: [], user: "alice" });
    rig.fake.state.labelIssue(REPO, 5, "agent:in-progress", "alice");
    await reconcile();
    expect(rig.labels(4)).toEqual(["agent:queued"]);
    expect(rig.labels(5)).toEqual([]);
    await reconcile();
    expect(rig.fake.state.commentsOn(REPO, 4).filter((c) => c.body.includes("changed by hand"))).toHaveLength(1);
  });

  test("a failed parent whose sub-issues are all closed loses its label with exactly one comment, across sweeps and a restart", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxAttempts: 1\n");
    await rig.queue(10);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    // The next reconcile is five minutes away; the run keeps its lease meanwhile.
    rig.clock.advance(4 * 60_000);
    expect((await w.heartbeat(run.id, run.leaseEpoch)).status).toBe(200);
    await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    expect((await rig.task(10)).task.state).toBe("failed");
    for (const n of [11, 12]) {
      rig.fake.state.addIssue(REPO, { number: n, title: `Part ${n}`, body: "", labels: [], user: "alice" });
      rig.fake.state.addSubIssue(REPO, 10, REPO, n);
      rig.fake.state.closeIssue(REPO, n);
    }
    await reconcile();
    await reconcile();
    expect((await rig.task(10)).task.state).toBe("done");
    expect(rig.labels(10)).toEqual([]);
    const db = rig.db;
    const { fake, clock } = rig;
    await rig.app.stop();
    shared = [fake, { close: () => db.drop() }];
    rig = await startRig({ provider, db, fake, clock });
    await reconcile();
    expect(rig.fake.state.commentsOn(REPO, 10).filter((c) => c.body.includes("sub-issue"))).toHaveLength(1);
  });

  test("a failing listing removes nothing; the next run repairs", async () => {
    rig = await startRig({ provider });
    await rig.queue(20);
    rig.fake.state.closeIssue(REPO, 20);
    rig.fake.inject({ method: "POST", path: "graphql", status: 502, body: { message: "Bad gateway" }, times: 1 });
    const swept = await reconcile();
    expect(swept.errors).toBeGreaterThan(0);
    expect((await rig.task(20)).task.state).toBe("queued");
    await reconcile();
    expect((await rig.task(20)).task.state).toBe("cancelled");
  });

  test("an uninstalled installation stops: its work is cancelled and it is no longer called", async () => {
    rig = await startRig({ provider });
    await rig.queue(30);
    const from = rig.fake.requests.length;
    await rig.deliverPayload(
      "installation",
      fakeWebhookPayload(rig.fake, "installation", "deleted", { repo: REPO, sender: "alice" }, { action: "deleted" }),
    );
    expect((await rig.task(30)).task.state).toBe("cancelled");
    await reconcile();
    await reconcile();
    // Calls as the App itself (its installations, its delivery log) go on; the installation is not called.
    const calls = rig.fake.requests
      .slice(from)
      .filter((r) => !r.path.includes("/access_tokens") && !r.path.startsWith("/app/"));
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([]);
    expect(INSTALLATION).toBeGreaterThan(0);
  });

  anyDb(
    "GitHub calls per reconcile of 250 labelled issues: one GraphQL query per 100, plus the writes needed",
    async () => {
      rig = await startRig({ provider });
      for (let n = 100; n < 350; n++) {
        rig.fake.state.addIssue(REPO, { number: n, title: `Issue ${n}`, body: "", labels: [], user: "alice" });
        rig.fake.state.labelIssue(REPO, n, "agent:blocked", "alice");
        rig.fake.state.closeIssue(REPO, n);
      }
      // Nothing to repair but the stray labels on closed issues: 250 label writes.
      const from = rig.fake.requests.length;
      await reconcile(90_000); // 250 label writes through the executor
      const calls = rig.fake.requests.slice(from).filter((r) => !r.path.includes("/access_tokens"));
      const queries = graphqlCalls(from);
      const writes = calls.filter((r) => r.method !== "GET" && !r.path.endsWith("graphql"));
      console.log(
        `reconcile of 250 labelled issues: ${queries} GraphQL queries, ${calls.length - queries - writes.length} REST reads, ${writes.length} writes`,
      );
      expect(queries).toBe(3); // pages of 100
      const again = rig.fake.requests.length;
      await reconcile();
      expect(graphqlCalls(again)).toBe(1); // the labels are gone: one page
    },
    120_000,
  );
});
