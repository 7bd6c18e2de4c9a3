/**
 * A hot key's backlog, through the real server and the fake GitHub: a
 * delivery that can never act is answered and stored as ignored at once (it
 * never waits behind its task key, and holds nothing up), and a backlog of
 * check-run deliveries that all say the same about one PR head is processed
 * once, as its newest, the older ones stored as ignored with a note naming it;
 * so is a backlog of Orchestra's own label changes echoed back.
 * GitHub's example payloads, on SQLite and PostgreSQL.
 */
import { INSTALLATION, REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { addCiRun, checkRunCompleted } from "../support/ci-runs.js";
import { providers } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { fakeWebhookPayload, type Payload } from "../support/webhooks.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const send = async (event: string, payload: Payload) => {
    const { status, deliveryId } = await rig.post(event, payload);
    expect(status).toBe(202);
    return deliveryId;
  };
  const row = (deliveryId: string) => rig.app.database.db.delivery.findUniqueOrThrow({ where: { deliveryId } });
  const ignored = async () =>
    Object.fromEntries(
      (
        (await (await rig.app.admin("/api/v1/ignored")).json()) as { counters: Array<{ name: string; value: number }> }
      ).counters.map((c) => [c.name, c.value]),
    );
  const labeled = (issue: number, overrides: Record<string, unknown> = {}) => {
    if (!rig.fake.state.repo(REPO).issues.has(issue))
      rig.fake.state.addIssue(REPO, { number: issue, title: `Issue ${issue}`, body: "b", labels: ["agent:queued"] });
    return fakeWebhookPayload(
      rig.fake,
      "issues",
      "labeled",
      { repo: REPO, issue, label: "agent:queued", sender: "alice" },
      overrides,
    );
  };

  test("a suspended installation's delivery, and one naming no installation, are stored ignored at the ack", async () => {
    rig = await startRig({ provider });
    const inst = rig.fake.state.installations.get(INSTALLATION)!;
    const installationEvent = (action: string) =>
      fakeWebhookPayload(
        rig.fake,
        "installation",
        action,
        { repo: REPO, sender: "alice" },
        { installation: rig.fake.json.installation(inst), repositories: undefined },
      );
    inst.suspendedAt = rig.clock.now();
    await rig.deliverPayload("installation", installationEvent("suspend"));
    // The list of unmanaged installations ingest keeps is at most 5 s old.
    rig.clock.advance(10_000);

    // Nothing is processed meanwhile: what the deliveries are stored as is the ack's doing alone.
    await rig.app.orchestra.processor.stop();
    const suspended = await send("issues", labeled(2));
    const orphan = labeled(3);
    delete orphan["installation"];
    const none = await send("issues", orphan);
    expect(await row(suspended)).toMatchObject({
      state: "ignored",
      head: false,
      attempts: 0,
      note: `unmanaged: installation ${INSTALLATION}: the App's installation is suspended`,
    });
    expect((await row(suspended)).processedAt).not.toBeNull();
    expect(await row(none)).toMatchObject({
      state: "ignored",
      head: false,
      note: "unmanaged: issues.labeled names no installation",
      taskKey: `-/${REPO}#3`,
    });
    expect(await ignored()).toMatchObject({ "ignored.unmanaged": 2 });
    const listed = (await (await rig.app.admin("/api/v1/deliveries?state=ignored")).json()) as {
      deliveries: Array<{ deliveryId: string; note: string | null }>;
    };
    expect(listed.deliveries.find((d) => d.deliveryId === suspended)?.note).toContain("suspended");

    // Unsuspended: the next delivery on the same key is its head at once and is processed.
    rig.app.orchestra.processor.start();
    inst.suspendedAt = null;
    await rig.deliverPayload("installation", installationEvent("unsuspend"));
    const later = await rig.deliverPayload("issues", labeled(2, { issue: { updated_at: "2026-01-02T00:00:00Z" } }));
    expect(await row(later)).toMatchObject({ state: "done", taskKey: `${INSTALLATION}/${REPO}#2` });
    expect((await rig.task(2)).task.state).toBe("queued");
    expect(await ignored()).toMatchObject({ "ignored.unmanaged": 2 });
  });

  test("a backlog of check-run deliveries on one PR head is processed once, as the newest", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    const { pr, head } = await rig.inReview(w, 5);
    const run = addCiRun(
      rig.fake,
      REPO,
      head,
      Array.from({ length: 12 }, (_, i) => ({ name: `build (${i})`, conclusion: "cancelled" as const })),
    );
    const repo = rig.fake.state.repo(REPO);
    const jobs = rig.fake.state.jobsOf(repo, run);
    expect(jobs).toHaveLength(12);

    // The processor is busy elsewhere while CI reports: the deliveries wait on the PR's key.
    await rig.app.orchestra.processor.stop();
    const ids: string[] = [];
    for (const job of jobs) ids.push(await send("check_run", checkRunCompleted(rig.fake, REPO, job.id)));
    const rows = await Promise.all(ids.map(row));
    expect(new Set(rows.map((r) => r.taskKey))).toEqual(new Set([`${INSTALLATION}/${REPO}#${pr}`]));
    expect(rows.map((r) => r.state)).toEqual(ids.map(() => "pending"));

    const from = rig.fake.requests.length;
    rig.app.orchestra.processor.start();
    const newest = ids[ids.length - 1]!;
    await eventually(async () => ((await row(newest)).state === "done" ? true : undefined), 10_000, "newest done");
    await rig.settle();

    const after = await Promise.all(ids.map(row));
    expect(after.map((r) => r.state)).toEqual([...ids.slice(1).map(() => "ignored"), "done"]);
    for (const r of after.slice(0, -1)) {
      expect(r.note).toBe(`collapsed into ${newest}: a later delivery on this key says the same and is processed`);
      expect(r.attempts).toBe(0);
    }
    expect(await ignored()).toMatchObject({ "ignored.collapsed": 11 });
    expect(rig.app.logs.some((l) => l["msg"]?.toString().includes("collapsed into it") && l["collapsed"] === 11)).toBe(
      true,
    );
    // The newest acted for all: one read of the PR and its checks, one rerun of the failed jobs.
    expect(rig.fake.state.reruns.filter((r) => r.kind === "failed-jobs")).toEqual([
      expect.objectContaining({ id: run.id }),
    ]);
    const reads = rig.fake.requests
      .slice(from)
      .filter((r) => r.method === "GET" && !r.path.includes("/access_tokens"))
      .map((r) => r.operationId);
    expect(reads.filter((op) => op === "checks/list-for-ref")).toHaveLength(1);
    expect((await rig.task(5)).task.state).toBe("review");
  });

  test("Orchestra's own label changes echoed back in a backlog are processed once, as the newest", async () => {
    rig = await startRig({ provider });
    await rig.queue(4);
    const echo = (action: "labeled" | "unlabeled", label: string, at: number) =>
      fakeWebhookPayload(
        rig.fake,
        "issues",
        action,
        { repo: REPO, issue: 4, label, sender: "orchestra-test[bot]" },
        { issue: { updated_at: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString() } },
      );
    // One echo processed: the App has read its own login (it tells its echoes by their sender from then on).
    await rig.deliverPayload("issues", echo("labeled", "agent:queued", 0));
    await rig.app.orchestra.processor.stop();
    const ids = [
      await send("issues", echo("unlabeled", "agent:queued", 1)),
      await send("issues", echo("labeled", "agent:in-progress", 2)),
      await send("issues", echo("unlabeled", "agent:in-progress", 3)),
      await send("issues", echo("labeled", "agent:queued", 4)),
    ];
    const before = await ignored();
    rig.app.orchestra.processor.start();
    const newest = ids[ids.length - 1]!;
    await eventually(async () => ((await row(newest)).state === "done" ? true : undefined), 10_000, "newest done");
    const after = await Promise.all(ids.map(row));
    expect(after.map((r) => [r.state, r.note])).toEqual([
      ...ids
        .slice(1)
        .map(() => [
          "ignored",
          `collapsed into ${newest}: a later delivery on this key says the same and is processed`,
        ]),
      ["done", null],
    ]);
    const now = await ignored();
    expect(now["ignored.collapsed"]! - before["ignored.collapsed"]!).toBe(3);
    // The newest is the one processed: Orchestra's echo, only counted.
    expect(now["ignored.own-echo"]! - before["ignored.own-echo"]!).toBe(1);
    expect((await rig.task(4)).task.state).toBe("queued");
  });
});
