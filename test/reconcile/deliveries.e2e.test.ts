/**
 * Missed deliveries end to end: the fake GitHub keeps a log of the webhook
 * deliveries it made (one item per attempt) and redelivers for real, signed,
 * to the App's webhook endpoint; the App's sweep reads the log as the App
 * (JWT) and asks for what never arrived. On SQLite and PostgreSQL.
 */
import { createServer } from "node:http";
import { REPO, INSTALLATION, startRig, type Rig } from "../support/lifecycle-rig.js";
import { eventually, freePort, TestOctokit } from "../support/orchestra.js";
import { providers } from "../support/databases.js";
import { fakeWebhookPayload, signatureOf } from "../support/webhooks.js";
import { startFakeGitHub } from "../fake-github/index.js";
import { ResponseSchemas } from "../fake-github/response-schemas.js";

const DAY = 24 * 3_600_000;

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function start(env?: Record<string, string>): Promise<Rig> {
    rig = await startRig({ provider, ...(env ? { env } : {}) });
    rig.fake.setWebhookTarget(`${rig.app.url}/api/github/webhooks`, rig.app.secret);
    return rig;
  }

  /** An issue labelled for the queue on GitHub whose `issues.labeled` delivery failed (never reached the App). */
  function missedQueueLabel(issue: number, opts: { deliveredAt?: Date } = {}): string {
    rig.fake.state.addIssue(REPO, {
      number: issue,
      title: `Issue ${issue}`,
      body: `Do thing ${issue}`,
      labels: ["agent:queued"],
      user: "alice",
    });
    const payload = fakeWebhookPayload(rig.fake, "issues", "labeled", {
      repo: REPO,
      issue,
      label: "agent:queued",
      sender: "alice",
    });
    return rig.fake.state.hookDeliveries.record({ event: "issues", status: 502, payload, ...opts }).guid;
  }

  /** One sweep of the loop a minute later (the deliveries sweep runs at most once a minute of the App's clock). */
  async function sweepLater(ms = 60_000) {
    rig.clock.advance(ms);
    const r = await rig.sweep();
    await rig.fake.state.hookDeliveries.idle();
    return { ...r, report: await lastReport() };
  }

  async function lastReport(): Promise<{ counts: Record<string, number>; detail: any }> {
    const row = await rig.app.database.db.sweepReport.findFirst({
      where: { kind: "deliveries" },
      orderBy: { seq: "desc" },
    });
    return { counts: JSON.parse(row!.counts), detail: row!.detail ? JSON.parse(row!.detail) : null };
  }

  async function processed(guid: string): Promise<void> {
    await eventually(
      async () => {
        const row = await rig.app.database.db.delivery.findUnique({ where: { deliveryId: guid } });
        return row && (row.state === "done" || row.state === "ignored") ? true : undefined;
      },
      10_000,
      `delivery ${guid} processed`,
    );
    await rig.settle();
  }

  const asked = () => rig.fake.requestsFor("apps/redeliver-webhook-delivery").length;
  const tasks = () => rig.app.database.db.task.count();

  test("a queue label whose delivery failed becomes exactly one task after one sweep; the next sweep asks nothing", async () => {
    await start();
    const guid = missedQueueLabel(1);
    expect(await rig.task(1)).toBeNull();

    const swept = await sweepLater();
    expect(swept.redelivered).toBe(1);
    expect(swept.report.counts).toMatchObject({ missing: 1, redelivered: 1, skipped: 0, errors: 0 });
    await processed(guid);
    expect(await tasks()).toBe(1);
    expect((await rig.task(1)).task).toMatchObject({ state: "queued", issue: 1 });
    // GitHub logged the redelivery as a second attempt of the same guid, answered by the real endpoint.
    expect(rig.fake.state.hookDeliveries.of(guid).map((a) => [a.status, a.redelivery])).toEqual([
      [502, false],
      [202, true],
    ]);
    // It was asked as the App (JWT), never with an installation token.
    const listing = rig.fake.requestsFor("apps/list-webhook-deliveries");
    expect(listing.every((r) => /^bearer ey/i.test(r.headers["authorization"] ?? ""))).toBe(true);

    const again = await sweepLater();
    expect(again.report.counts).toMatchObject({ missing: 0, redelivered: 0 });
    expect(asked()).toBe(1);
    expect(await tasks()).toBe(1);
  });

  test("the pace is the operator's: ORCHESTRA_DELIVERIES_SWEEP_SECONDS between sweeps, ORCHESTRA_REDELIVERIES_PER_SWEEP asked in each", async () => {
    await start({ ORCHESTRA_DELIVERIES_SWEEP_SECONDS: "20", ORCHESTRA_REDELIVERIES_PER_SWEEP: "2" });
    const guids = [11, 12, 13].map((n) => missedQueueLabel(n));

    const first = await sweepLater(20_000);
    expect(first.report.counts).toMatchObject({ missing: 3, redelivered: 2, deferred: 1, errors: 0 });
    // Within the 20 s nothing is read again; at 20 s the one left is asked for.
    const reports = () => rig.app.database.db.sweepReport.count({ where: { kind: "deliveries" } });
    const before = await reports();
    await sweepLater(10_000);
    expect({ reports: await reports(), asked: asked() }).toEqual({ reports: before, asked: 2 });
    const second = await sweepLater(10_000);
    expect(second.report.counts).toMatchObject({ redelivered: 1, deferred: 0 });
    for (const guid of guids) await processed(guid);
    expect(asked()).toBe(3);
    expect(await tasks()).toBe(3);
  });

  test("a guid is asked for at most once an hour; waiting() names its installation until it is recovered", async () => {
    await start();
    const nowhere = `http://127.0.0.1:${await freePort()}/api/github/webhooks`;
    rig.fake.setWebhookTarget(nowhere, rig.app.secret);
    const guid = missedQueueLabel(2);
    const deliveries = rig.app.orchestra.deliveries;
    expect(await deliveries.waiting()).toEqual(new Set()); // not read yet

    expect((await sweepLater()).redelivered).toBe(1);
    expect(rig.fake.state.hookDeliveries.of(guid).map((a) => a.status)).toEqual([502, 0]); // the redelivery failed too
    expect(await deliveries.waiting()).toEqual(new Set([INSTALLATION]));
    // Claims there wait for the truth, and the task says why.
    await rig.queue(9);
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(204);
    expect((await rig.task(9)).task.waitingFor).toMatchObject({ gate: "deliveries" });

    const within = await sweepLater();
    expect(within.report.counts).toMatchObject({ missing: 1, redelivered: 0, skipped: 1 });
    expect(asked()).toBe(1);
    expect(await deliveries.waiting()).toEqual(new Set([INSTALLATION]));

    rig.fake.setWebhookTarget(`${rig.app.url}/api/github/webhooks`, rig.app.secret);
    expect((await sweepLater(3_600_000)).redelivered).toBe(1);
    expect(asked()).toBe(2);
    await processed(guid);
    expect(await tasks()).toBe(2); // the recovered one, and issue 9 queued meanwhile
    // The inbox row is the evidence: recovered before the next sweep reads the log.
    expect(await deliveries.waiting()).toEqual(new Set());
    rig.clock.advance(6_000); // past the claims' 5 s cache of it
    expect((await w.claim()).status).toBe(200);
    expect((await sweepLater()).report.counts).toMatchObject({ missing: 0, redelivered: 0 });
    expect(asked()).toBe(2);
  });

  test("a delivery the inbox already holds is not redelivered, nor one older than GitHub's 3 days", async () => {
    await start();
    // The App stored this one, but GitHub gave up waiting for the answer and logged a failure.
    rig.fake.state.addIssue(REPO, { number: 3, title: "Issue 3", body: "x", labels: ["agent:queued"], user: "alice" });
    const payload = fakeWebhookPayload(rig.fake, "issues", "labeled", {
      repo: REPO,
      issue: 3,
      label: "agent:queued",
      sender: "alice",
    });
    const stored = await rig.deliverPayload("issues", payload);
    rig.fake.state.hookDeliveries.record({ event: "issues", guid: stored, status: 504, payload });
    const old = missedQueueLabel(4, { deliveredAt: new Date(rig.clock.now().getTime() - 4 * DAY) });

    const swept = await sweepLater();
    expect(swept.report.counts).toMatchObject({ read: 2, missing: 0, redelivered: 0, skipped: 1, errors: 0 });
    expect(swept.report.detail).toEqual({ expired: [old] });
    expect(asked()).toBe(0);
    expect(await tasks()).toBe(1);
    expect(await rig.app.orchestra.deliveries.waiting()).toEqual(new Set());
  });

  test("a listing that fails changes nothing; the next sweep recovers", async () => {
    await start();
    const guid = missedQueueLabel(5);
    const checkpoint = () => rig.app.database.db.checkpoint.findUnique({ where: { name: "hook-deliveries" } });
    const before = await checkpoint();
    rig.fake.inject({ path: "apps/list-webhook-deliveries", status: 502 });

    const failed = await sweepLater();
    expect(failed.errors).toBe(1);
    expect(failed.report.counts).toMatchObject({ read: 0, redelivered: 0, errors: 1 });
    expect(asked()).toBe(0);
    expect(await checkpoint()).toEqual(before);
    expect(
      rig.app.logs.some(
        (l) =>
          l["msg"] === "deliveries: GitHub's delivery log could not be read; nothing changed, the next sweep retries",
      ),
    ).toBe(true);

    const next = await sweepLater();
    expect(next.report.counts).toMatchObject({ missing: 1, redelivered: 1, errors: 0 });
    await processed(guid);
    expect((await rig.task(5)).task).toMatchObject({ state: "queued" });
  });

  test("dry run asks for nothing and reports the plan", async () => {
    await start({ ORCHESTRA_DRY_RUN: "true" });
    const guid = missedQueueLabel(6);
    const swept = await sweepLater();
    expect(swept.report.counts).toMatchObject({ missing: 1, redelivered: 0, wouldRedeliver: 1 });
    expect(swept.report.detail).toMatchObject({
      dryRun: true,
      wouldRedeliver: [{ guid, event: "issues.labeled", installationId: INSTALLATION }],
    });
    expect(asked()).toBe(0);
    expect(await rig.app.database.db.redelivery.count()).toBe(0);
    expect(await tasks()).toBe(0);
    expect(
      rig.app.logs.some((l) => l["msg"] === "deliveries: dry run, would ask GitHub to redeliver missed deliveries"),
    ).toBe(true);
  });

  test("GitHub calls per sweep over a log of 250 deliveries: 3 pages of 100 plus one request per missed delivery", async () => {
    await start();
    const nowhere = `http://127.0.0.1:${await freePort()}/api/github/webhooks`;
    rig.fake.setWebhookTarget(nowhere, rig.app.secret); // measure the sweep alone, not what the redeliveries cause
    const missed: string[] = [];
    for (let i = 0; i < 250; i++) {
      if ([10, 120, 200, 249].includes(i)) missed.push(missedQueueLabel(10 + missed.length));
      else
        rig.fake.state.hookDeliveries.push({
          event: "issues",
          action: "opened",
          installationId: INSTALLATION,
          status: 202,
        });
    }
    const deliveries = rig.app.orchestra.deliveries;
    rig.clock.advance(60_000);

    const from = rig.fake.requests.length;
    const first = await deliveries.sweep();
    const calls = rig.fake.requests.slice(from);
    const listing = calls.filter((r) => r.operationId === "apps/list-webhook-deliveries").length;
    console.log(
      `deliveries sweep over 250 deliveries (4 missed): ${calls.length} GitHub calls (${listing} listing pages, ${calls.length - listing} redeliveries)`,
    );
    expect(first).toMatchObject({ read: 250, missing: 4, redelivered: 4 });
    expect(listing).toBe(3);
    expect(calls.length).toBe(3 + 4);
    await rig.fake.state.hookDeliveries.idle();

    // The next sweep reads from its checkpoint: one page (the 4 failed redeliveries on top, then the checkpoint), nothing asked within the hour.
    rig.clock.advance(60_000);
    const from2 = rig.fake.requests.length;
    const second = await deliveries.sweep();
    const calls2 = rig.fake.requests.slice(from2);
    console.log(`next deliveries sweep: ${calls2.length} GitHub call(s)`);
    expect(second).toMatchObject({ missing: 4, redelivered: 0, skipped: 4 });
    expect(calls2.length).toBe(1);

    rig.fake.setWebhookTarget(`${rig.app.url}/api/github/webhooks`, rig.app.secret);
    rig.clock.advance(3_600_000);
    expect(await deliveries.sweep()).toMatchObject({ redelivered: 4 });
    await rig.fake.state.hookDeliveries.idle();
    for (const guid of missed) await processed(guid);
    expect(await tasks()).toBe(4);
  });
});

test("the fake's delivery log: GitHub's shapes, cursor paging, JWT only, redelivery signed to the target with the same guid", async () => {
  const fake = await startFakeGitHub();
  const received: Array<{ headers: Record<string, unknown>; body: string }> = [];
  const target = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(202).end("{}");
    });
  });
  await new Promise<void>((r) => target.listen(0, "127.0.0.1", () => r()));
  try {
    fake.setWebhookTarget(`http://127.0.0.1:${(target.address() as { port: number }).port}/hook`, "s3cret");
    fake.state.addInstallation(5, "acme");
    for (let i = 0; i < 5; i++)
      fake.state.hookDeliveries.push({
        event: "issues",
        status: 200,
        payload: { action: "opened", installation: { id: 5 } },
      });
    const failed = fake.state.hookDeliveries.record({
      event: "issues",
      status: 0,
      payload: { action: "labeled", installation: { id: 5 }, repository: { id: 9 } },
    });
    const app = new TestOctokit({
      auth: { appId: fake.appId, privateKey: fake.privateKey },
      baseUrl: fake.apiUrl,
    });

    const page1 = await app.rest.apps.listWebhookDeliveries({ per_page: 4 });
    expect(page1.data.map((d) => d.id)).toEqual([failed.id, failed.id - 1, failed.id - 2, failed.id - 3]);
    expect(page1.data[0]).toMatchObject({
      guid: failed.guid,
      status_code: 0,
      status: "failed to connect",
      action: "labeled",
      installation_id: 5,
      repository_id: 9,
      redelivery: false,
    });
    const cursor = new URL(/<([^>]+)>; rel="next"/.exec(page1.headers.link!)![1]!).searchParams.get("cursor")!;
    const page2 = await app.rest.apps.listWebhookDeliveries({ per_page: 4, cursor });
    expect(page2.data).toHaveLength(2);
    expect(page2.headers.link).toBeUndefined();

    const answer = await app.rest.apps.redeliverWebhookDelivery({ delivery_id: failed.id });
    expect(answer.status).toBe(202);
    await fake.state.hookDeliveries.idle();
    expect(received).toHaveLength(1);
    expect(received[0]!.headers["x-github-delivery"]).toBe(failed.guid);
    expect(received[0]!.headers["x-hub-signature-256"]).toBe(signatureOf("s3cret", received[0]!.body));
    expect(fake.state.hookDeliveries.of(failed.guid).map((a) => [a.status, a.redelivery])).toEqual([
      [0, false],
      [202, true],
    ]);

    // An installation token is not the App: GitHub refuses it here.
    const token = fake.state.issueToken(5).token;
    const asInstallation = await fetch(`${fake.apiUrl}/app/hook/deliveries`, {
      headers: { authorization: `token ${token}`, accept: "application/vnd.github+json", "user-agent": "test" },
    });
    expect(asInstallation.status).toBe(401);

    const schemas = new ResponseSchemas();
    const problems = fake.requests
      .filter((r) => r.operationId?.startsWith("apps/") && r.status < 300)
      .map((r) => schemas.check(r.operationId!, r.status, r.response))
      .filter(Boolean);
    expect(problems).toEqual([]);
    fake.assertNoViolations();
  } finally {
    target.close();
    await fake.close();
  }
});
