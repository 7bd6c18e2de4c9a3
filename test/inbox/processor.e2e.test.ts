/**
 * The inbox processor: retries with backoff, parking with visible errors,
 * order per task key, and two processors on one PostgreSQL inbox.
 */
import { randomUUID } from "node:crypto";
import type { EventRouter } from "../../src/events/router.js";
import { openDatabase } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { Inbox, type ClaimedDelivery } from "../../src/inbox/store.js";
import { inboxQueries } from "../../src/inbox/queries.js";
import { Processor } from "../../src/inbox/processor.js";
import { durationText } from "../../src/retry/schedule.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { startIngest, type IngestRig } from "../support/ingest-rig.js";
import { examplePayload, nthUpdate, sendWebhook } from "../support/webhooks.js";

const HOOK = "/api/github/webhooks";
const quiet = { info() {}, warn() {}, error() {} };

describe.each(providers)("processor on %s", (provider) => {
  let db: TestDb;
  let app: IngestRig | undefined;
  beforeEach(async () => {
    db = await testDatabase(provider, { migrated: true });
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await db.drop();
  });

  test("a delivery failing deterministically is retried with backoff and parked after N attempts with its errors and the reason listed", async () => {
    const attemptsAt: number[] = [];
    const later: string[] = [];
    const failing = (events: EventRouter) => {
      events.on("issues.labeled", async () => {
        attemptsAt.push(Date.now());
        throw new Error(`GitHub answered 502 (attempt ${attemptsAt.length})`);
      });
      events.on("issues.unlabeled", async (ctx) => {
        later.push(ctx.deliveryId);
      });
    };
    app = await startIngest({
      db,
      handlers: failing,
      retry: { maxAttempts: 3, baseMs: 150, capMs: 1000 },
    });
    const id = randomUUID();
    const res = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: examplePayload("issues", "labeled", { installation: { id: 3 } }),
      secret: app.secret,
      deliveryId: id,
    });
    expect(res.status).toBe(202);

    const parked = await eventually(
      async () => {
        const r = await app!.admin("/api/v1/deliveries?state=parked");
        const body = (await r.json()) as {
          deliveries: Array<{
            deliveryId: string;
            attempts: number;
            errors: Array<{ message: string; class: string; at: string }>;
          }>;
        };
        return body.deliveries.find((d) => d.deliveryId === id);
      },
      10_000,
      "delivery to be parked",
    );
    expect(parked.attempts).toBe(3);
    expect(parked.errors.map((e) => e.message)).toEqual([
      "GitHub answered 502 (attempt 1)",
      "GitHub answered 502 (attempt 2)",
      "GitHub answered 502 (attempt 3)",
      `parked after a failure that retrying does not fix (a 4xx other than a rate limit, a validation or programming error): 3 attempts over ${durationText(Date.parse(parked.errors[2]!.at) - Date.parse(parked.errors[0]!.at))}. Fix the cause, then run: orchestra replay ${id}`,
    ]);
    // A thrown Error is not known to be transient: no retry window for it.
    expect(parked.errors.slice(0, 3).map((e) => e.class)).toEqual(["Error", "Error", "Error"]);
    expect(attemptsAt).toHaveLength(3);
    // Backoff, not a hot loop: each gap is at least the jittered base delay.
    expect(attemptsAt[1]! - attemptsAt[0]!).toBeGreaterThanOrEqual(150 * 0.75 - 5);
    expect(attemptsAt[2]! - attemptsAt[1]!).toBeGreaterThanOrEqual(300 * 0.75 - 5);
    // Parked means parked: a delivery stored after it was parked is claimed and handled, and the parked one is not tried again.
    const after = randomUUID();
    expect(
      (
        await sendWebhook(app.url + HOOK, {
          event: "issues",
          payload: examplePayload("issues", "unlabeled", { installation: { id: 3 } }),
          secret: app.secret,
          deliveryId: after,
        })
      ).status,
    ).toBe(202);
    await eventually(
      () => (later.includes(after) ? true : undefined),
      10_000,
      "the delivery stored after the parked one handled",
    );
    expect(attemptsAt).toHaveLength(3);
    expect(app.logs.some((l) => String(l["msg"]).includes("delivery parked after 3 attempts"))).toBe(true);

    // Replay puts it back with a fresh budget; its history stays.
    const replay = await app.admin(`/api/v1/deliveries/${id}/replay`, { method: "POST" });
    expect(replay.status).toBe(200);
    await eventually(() => (attemptsAt.length >= 4 ? true : undefined), 5000, "replayed attempt");
    const again = await app.admin(`/api/v1/deliveries/${id}/replay`, { method: "POST" });
    expect([200, 409]).toContain(again.status);
  });

  test("the operator API wants the admin token", async () => {
    app = await startIngest({ db });
    expect((await fetch(app.url + "/api/v1/deliveries")).status).toBe(401);
    expect((await fetch(app.url + "/api/v1/deliveries", { headers: { authorization: "Bearer wrong" } })).status).toBe(
      401,
    );
    expect((await app.admin("/api/v1/deliveries?state=bogus")).status).toBe(400);
    expect((await app.admin("/api/v1/deliveries/nope/replay", { method: "POST" })).status).toBe(409);
  });

  test("deliveries of one task key are handled one at a time, in order; other keys run beside them", async () => {
    const order: string[] = [];
    let running = 0;
    let maxParallel = 0;
    // Handlers wait at a gate the test opens once the first delivery of every key is being handled at once.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow = (events: EventRouter) =>
      events.on("issues.labeled", async (ctx) => {
        running++;
        maxParallel = Math.max(maxParallel, running);
        await gate;
        order.push(`${ctx.payload.issue.number}:${ctx.deliveryId}`);
        running--;
      });
    app = await startIngest({ db, handlers: slow, processor: { concurrency: 4 } });
    const sends: Array<Promise<Response>> = [];
    for (let i = 0; i < 5; i++) {
      for (const issue of [1, 2, 3]) {
        // Each says something else (another label): deliveries that say the same are collapsed (inbox/collapse.ts).
        const payload = examplePayload("issues", "labeled", {
          installation: { id: 3 },
          issue: { number: issue, updated_at: nthUpdate(i) },
          label: { name: `label-${i}` },
        });
        // Sequential per key so arrival order is defined; keys interleave.
        sends.push(
          sendWebhook(app.url + HOOK, { event: "issues", payload, secret: app.secret, deliveryId: `k${issue}-${i}` }),
        );
        await sends[sends.length - 1];
      }
    }
    await eventually(() => (running === 3 ? true : undefined), 10_000, "one delivery of each key handled at once");
    open();
    await eventually(() => (order.length === 15 ? true : undefined), 10_000, "all 15 handled");
    for (const issue of [1, 2, 3]) {
      expect(order.filter((o) => o.startsWith(`${issue}:`))).toEqual(
        [0, 1, 2, 3, 4].map((i) => `${issue}:k${issue}-${i}`),
      );
    }
    expect(maxParallel).toBeGreaterThan(1);
  });
});

if (providers.includes("postgresql")) {
  test("two processors on one PostgreSQL inbox never process one delivery twice", async () => {
    const db = await testDatabase("postgresql");
    const a = await openDatabase(db.url, { poolSize: 4 });
    const b = await openDatabase(db.url, { poolSize: 4 });
    try {
      await migrate(a);
      const inbox = new Inbox(inboxQueries(a.db), a);
      const total = 300;
      for (let i = 0; i < total; i++) {
        await inbox.record({
          deliveryId: `d${i}`,
          event: "issues",
          action: "labeled",
          installationId: "1",
          taskKey: `1/o/r#${i % 40}`,
          payload: "{}",
        });
      }
      const handledBy = new Map<string, string[]>();
      const handler = (who: string) => async (d: ClaimedDelivery) => {
        handledBy.set(d.deliveryId, [...(handledBy.get(d.deliveryId) ?? []), who]);
        // Yield a few turns of the event loop, so the two replicas' claims interleave; no clock involved.
        for (let turns = Math.floor(Math.random() * 4); turns > 0; turns--) await new Promise(setImmediate);
        return "done" as const;
      };
      const pa = new Processor(new Inbox(inboxQueries(a.db), a), handler("a"), quiet, {
        concurrency: 6,
        pollMs: 10,
        owner: "replica-a",
      });
      const pb = new Processor(new Inbox(inboxQueries(b.db), b), handler("b"), quiet, {
        concurrency: 6,
        pollMs: 10,
        owner: "replica-b",
      });
      pa.start();
      pb.start();
      await eventually(
        async () => ((await a.db.delivery.count({ where: { state: "done" } })) === total ? true : undefined),
        30_000,
        "all processed",
      );
      await pa.stop();
      await pb.stop();
      expect(handledBy.size).toBe(total);
      const twice = [...handledBy].filter(([, who]) => who.length !== 1);
      expect(twice).toEqual([]);
      const byA = [...handledBy.values()].filter((w) => w[0] === "a").length;
      // Both replicas took part, so the claim race was really exercised.
      expect(byA).toBeGreaterThan(0);
      expect(total - byA).toBeGreaterThan(0);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
}
