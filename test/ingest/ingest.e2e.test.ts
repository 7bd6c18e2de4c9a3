/**
 * Durable ingest through real HTTP: the real server, signed deliveries built
 * from GitHub's example payloads, on SQLite and (in CI) PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { sign } from "../../src/ingest/webhook.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { eventually, startOrchestra } from "../support/orchestra.js";
import { startIngest, type IngestRig } from "../support/ingest-rig.js";
import { examplePayload, sendWebhook } from "../support/webhooks.js";

const HOOK = "/api/github/webhooks";

describe.each(providers)("ingest on %s", (provider) => {
  let db: TestDb;
  let app: IngestRig;
  const seen: string[] = [];
  let stopping = false;

  beforeEach(async () => {
    seen.length = 0;
    stopping = false;
    db = await testDatabase(provider, { migrated: true });
    // The ingest half with one handler that records every issues.labeled delivery it handles.
    app = await startIngest({
      db,
      stopping: () => stopping,
      handlers: (events) =>
        events.on("issues.labeled", async (ctx) => {
          seen.push(ctx.deliveryId);
        }),
    });
  });
  afterEach(async () => {
    await app.stop();
    await db.drop();
  });

  const stored = () => app.database.db.delivery.count();
  const labeled = () => examplePayload("issues", "labeled", { installation: { id: 11 } });

  test("a signed delivery is stored, acknowledged 202, then processed", async () => {
    const id = randomUUID();
    const res = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: labeled(),
      secret: app.secret,
      deliveryId: id,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ delivery: id, stored: true, duplicate: false, replay: false });
    const row = await app.database.db.delivery.findUnique({ where: { deliveryId: id } });
    expect(row).toMatchObject({ event: "issues", action: "labeled", installationId: "11" });
    expect(row!.taskKey).toMatch(/^11\/.+#\d+$/);
    await eventually(() => (seen.includes(id) ? true : undefined), 5000, "handler to run");
    await eventually(async () =>
      (await app.database.db.delivery.findUnique({ where: { deliveryId: id } }))?.state === "done" ? true : undefined,
    );
  });

  test("a stopping service refuses a delivery with 503 and Retry-After, and stores nothing (GitHub redelivers it)", async () => {
    stopping = true;
    const res = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: labeled(),
      secret: app.secret,
      deliveryId: randomUUID(),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({ error: expect.stringContaining("the service is stopping") });
    expect(await stored()).toBe(0);
  });

  test("a bad signature is rejected with 401 and nothing is stored", async () => {
    const payload = JSON.stringify(labeled());
    const res = await fetch(app.url + HOOK, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": sign("not-the-secret", payload),
      },
      body: payload,
    });
    expect(res.status).toBe(401);
    expect(await stored()).toBe(0);
  });

  test("a body altered after signing is rejected", async () => {
    const body = JSON.stringify(labeled());
    const res = await fetch(app.url + HOOK, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": sign(app.secret, body),
      },
      body: body.replace('"labeled"', '"unlabeled"'),
    });
    expect(res.status).toBe(401);
    expect(await stored()).toBe(0);
  });

  test("a missing signature is rejected with 400 and nothing is stored", async () => {
    const res = await fetch(app.url + HOOK, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": randomUUID() },
      body: JSON.stringify(labeled()),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "missing required header(s): x-hub-signature-256" });
    expect(await stored()).toBe(0);
  });

  test("a signed body that is not JSON is a 400, nothing stored", async () => {
    const body = "not json";
    const res = await fetch(app.url + HOOK, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": sign(app.secret, body),
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(await stored()).toBe(0);
  });

  test("10 concurrent identical POSTs store one row and have one effect", async () => {
    const id = randomUUID();
    const payload = labeled();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        sendWebhook(app.url + HOOK, { event: "issues", payload, secret: app.secret, deliveryId: id }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.every((s) => s === 200 || s === 202)).toBe(true);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(await stored()).toBe(1);
    // One row, processed to the end: once it is done nothing can process it again.
    await eventually(
      async () =>
        (await app.database.db.delivery.findUnique({ where: { deliveryId: id } }))?.state === "done" ? true : undefined,
      10_000,
      `${id} done`,
    );
    expect(seen).toEqual([id]);
    // The same delivery again later is still a no-op.
    const again = await sendWebhook(app.url + HOOK, { event: "issues", payload, secret: app.secret, deliveryId: id });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    expect(await stored()).toBe(1);
  });

  test("unknown events and actions are stored and ignored, never a crash", async () => {
    const a = await sendWebhook(app.url + HOOK, {
      event: "star",
      payload: examplePayload("star", "created", { installation: { id: 11 } }),
      secret: app.secret,
      deliveryId: "star-1",
    });
    const b = await sendWebhook(app.url + HOOK, {
      event: "made_up_event",
      payload: { action: "frobnicated", installation: { id: 11 } },
      secret: app.secret,
      deliveryId: "odd-1",
    });
    const c = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: examplePayload("issues", "opened", { installation: { id: 11 } }),
      secret: app.secret,
      deliveryId: "opened-1",
    });
    expect([a.status, b.status, c.status]).toEqual([202, 202, 202]);
    for (const id of ["star-1", "odd-1", "opened-1"]) {
      await eventually(
        async () =>
          (await app.database.db.delivery.findUnique({ where: { deliveryId: id } }))?.state === "ignored"
            ? true
            : undefined,
        5000,
        `${id} ignored`,
      );
    }
    expect(seen).toEqual([]);
  });

  test("the same signed body under a new delivery id is a replay: answered 200, stored once, processed once", async () => {
    const payload = labeled();
    const send = (deliveryId: string) =>
      sendWebhook(app.url + HOOK, { event: "issues", payload, secret: app.secret, deliveryId });
    const first = await send("original");
    expect(first.status).toBe(202);
    await eventually(() => (seen.includes("original") ? true : undefined), 5000, "handler to run");
    // A captured body sent again with a fresh X-GitHub-Delivery: the signature still matches.
    const replayed = await send("replayed");
    expect(replayed.status).toBe(200);
    expect(await replayed.json()).toEqual({ delivery: "replayed", stored: false, duplicate: true, replay: true });
    // Several replays at once, in one batched insert, are refused the same way.
    const burst = await Promise.all(["r1", "r2", "r3"].map(send));
    expect(burst.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await stored()).toBe(1);
    // A body that differs by one byte (another event) is new work.
    const other = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: { ...payload, label: { ...(payload["label"] as object), name: "agent:queued " } },
      secret: app.secret,
      deliveryId: "other",
    });
    expect(other.status).toBe(202);
    await eventually(() => (seen.includes("other") ? true : undefined), 5000, "second handler run");
    expect(seen).toEqual(["original", "other"]);
  });

  test("two different bodies sent at once under new ids are both new", async () => {
    const answers = await Promise.all(
      [1, 2].map((n) =>
        sendWebhook(app.url + HOOK, {
          event: "issues",
          payload: { ...labeled(), issue: { ...(labeled()["issue"] as object), number: 900 + n } },
          secret: app.secret,
          deliveryId: `distinct-${n}`,
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([202, 202]);
    expect(await stored()).toBe(2);
  });

  test("an ignored delivery keeps a summary under 1 KB, never its body", async () => {
    const payload = examplePayload("star", "created", { installation: { id: 11 } });
    payload["padding"] = "x".repeat(50_000);
    const res = await sendWebhook(app.url + HOOK, {
      event: "star",
      payload,
      secret: app.secret,
      deliveryId: "big-star",
    });
    expect(res.status).toBe(202);
    const row = await app.database.db.delivery.findUnique({ where: { deliveryId: "big-star" } });
    expect(row).toMatchObject({ state: "ignored", event: "star", action: "created", installationId: "11" });
    expect(Buffer.byteLength(row!.payload)).toBeLessThan(1024);
    const bytes = Buffer.byteLength(JSON.stringify(payload));
    expect(JSON.parse(row!.payload)).toEqual({
      summary: "ignored delivery: the body is not kept",
      bytes,
      action: "created",
      installation: 11,
      repository: (payload["repository"] as { full_name: string }).full_name,
      sender: (payload["sender"] as { login: string }).login,
    });
    // Its digest is kept all the same: the body sent again under another id is a replay.
    const again = await sendWebhook(app.url + HOOK, {
      event: "star",
      payload,
      secret: app.secret,
      deliveryId: "star-2",
    });
    expect(await again.json()).toMatchObject({ replay: true });
  });

  test("when the database cannot store the delivery the answer is 503, and a redelivery later is stored", async () => {
    await db.sql(`ALTER TABLE "Delivery" RENAME TO "Delivery_offline"`);
    const id = randomUUID();
    const res = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: labeled(),
      secret: app.secret,
      deliveryId: id,
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "delivery not stored: database unavailable; redeliver it later" });
    await db.sql(`ALTER TABLE "Delivery_offline" RENAME TO "Delivery"`);
    expect(await stored()).toBe(0);
    const again = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: labeled(),
      secret: app.secret,
      deliveryId: id,
    });
    expect(again.status).toBe(202);
    expect(await stored()).toBe(1);
  });

  test("logs: one info line per processed delivery, requests only at debug", async () => {
    const id = randomUUID();
    const res = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: labeled(),
      secret: app.secret,
      deliveryId: id,
    });
    expect(res.status).toBe(202);
    expect((await app.admin("/api/v1/deliveries?limit=1")).status).toBe(200);
    const processed = await eventually(
      () => {
        const lines = app.logs.filter((l) => l["msg"] === "delivery processed" && l["delivery"] === id);
        return lines.length > 0 ? lines : undefined;
      },
      5000,
      "the processed line",
    );
    expect(processed).toHaveLength(1);
    expect(processed[0]).toMatchObject({ level: 30, event: "issues.labeled", result: "done", attempt: 1 });
    // The logger runs at info: no line at all for the webhook POST or the API call.
    const requestLines = app.logs.filter((l) => JSON.stringify(l).includes("/api/"));
    expect(requestLines).toEqual([]);
  });

  test("GET on the webhook path is 405", async () => {
    expect((await fetch(app.url + HOOK)).status).toBe(405);
  });

  test("health and readiness of the whole App", async () => {
    const whole = await startOrchestra({ db });
    try {
      const health = await fetch(whole.url + "/health");
      expect(health.status).toBe(200);
      const ready = await fetch(whole.url + "/ready");
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: "ready", database: provider });
    } finally {
      await whole.stop();
    }
  });
});

if (providers.includes("postgresql")) {
  describe("ingest on postgresql with the server gone", () => {
    test("connections refused → 503, and /ready says not ready", async () => {
      const db = await testDatabase("postgresql");
      const app = await startOrchestra({ db });
      try {
        const name = new URL(db.url).pathname.slice(1);
        // Refuse new connections and cut the existing ones: the database is unreachable.
        await db.sql(`SELECT 1`);
        const { default: pg } = await import("pg");
        const admin = new pg.Client({ connectionString: process.env["TEST_DATABASE_URL"] });
        await admin.connect();
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
        await admin.end();
        const res = await sendWebhook(app.url + HOOK, {
          event: "issues",
          payload: examplePayload("issues", "labeled", { installation: { id: 1 } }),
          secret: app.secret,
          deliveryId: randomUUID(),
        });
        expect(res.status).toBe(503);
        expect((await fetch(app.url + "/ready")).status).toBe(503);
      } finally {
        await app.stop().catch(() => {});
        await db.drop();
      }
    });
  });
}
