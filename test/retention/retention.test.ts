/**
 * Retention on every provider: rows of every kind at various ages and states,
 * pruned with a fixed clock — exactly the old finished ones go; parked,
 * unfinished, young and history rows stay. Deletes are batched; the inbox
 * still recognises a redelivery GitHub may still send; the scheduled pruner
 * runs at most once an interval on the injected clock; the settings are
 * validated; and the sweep loop runs it.
 */
import type { Database } from "../../src/store/db.js";
import { openDatabase } from "../../src/store/db.js";
import { Inbox } from "../../src/inbox/store.js";
import { inboxQueries } from "../../src/inbox/queries.js";
import { parseEnv } from "../../src/config/env.js";
import { errorsOf } from "../support/env-errors.js";
import { prune, Retention } from "../../src/retention/retention.js";
import { DEFAULT_RETENTION, MIN_DELIVERIES_DAYS, type RetentionPolicy } from "../../src/config/defaults.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { startRig } from "../support/lifecycle-rig.js";

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const NOW = new Date("2026-03-01T12:00:00.000Z");
const ago = (ms: number, now = NOW) => new Date(now.getTime() - ms);

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let tdb: TestDb;
  let database: Database;
  beforeEach(async () => {
    tdb = await testDatabase(provider, { migrated: true });
    database = await openDatabase(tdb.url, { poolSize: 2 });
  });
  afterEach(async () => {
    await database.close();
    await tdb.drop();
  });

  const delivery = (deliveryId: string, state: string, age: number) =>
    database.db.delivery.create({
      data: {
        deliveryId,
        event: "issues",
        action: "opened",
        installationId: "1",
        taskKey: "1/acme/app#1",
        payload: "{}",
        state,
        receivedAt: ago(age),
        nextAttemptAt: ago(age),
        processedAt: state === "done" || state === "ignored" ? ago(age) : null,
      },
    });
  const effect = (id: string, state: string, age: number, createdAge = age) =>
    database.db.effect.create({
      data: {
        id,
        key: id,
        installationId: 1,
        repo: "acme/app",
        kind: "comment",
        payload: "{}",
        state,
        nextAttemptAt: ago(createdAge),
        createdAt: ago(createdAge),
        doneAt: ["done", "dropped", "dry-run"].includes(state) ? ago(age) : null,
      },
    });
  const idempotent = (key: string, age: number) =>
    database.db.idempotentResponse.create({ data: { key, status: 200, body: "{}", createdAt: ago(age) } });
  const report = (kind: string, age: number) =>
    database.db.sweepReport.create({ data: { kind, at: ago(age), counts: "{}" } });
  const audit = (actor: string, age: number) =>
    database.db.auditEntry.create({
      data: { at: ago(age), repo: "acme/app", actor, input: "comment 1: orchestra retry", why: "untrusted" },
    });

  /** History a year old, and the tables retention does not touch. */
  async function seedHistory(): Promise<void> {
    const old = ago(365 * DAY);
    const { db } = database;
    await db.task.create({
      data: {
        id: "t1",
        installationId: 1,
        repo: "acme/app",
        issue: 1,
        title: "t",
        body: "b",
        state: "done",
        queuedAt: old,
        branch: "agent/1",
        createdAt: old,
        updatedAt: old,
      },
    });
    await db.run.create({
      data: {
        id: "r1",
        taskId: "t1",
        attempt: 1,
        mode: "worker",
        state: "exited",
        leaseEpoch: "e1",
        leaseExpiresAt: old,
        branch: "agent/1",
        startedAt: old,
        endedAt: old,
      },
    });
    await db.decision.create({
      data: {
        id: "d1",
        taskId: "t1",
        runId: "r1",
        kind: "correction",
        body: "use the other API",
        author: "alice",
        createdAt: old,
      },
    });
    await db.decisionDelivery.create({
      data: { decisionId: "d1", runId: "r1", firstAt: old, lastAt: old, receiptAt: old },
    });
    await db.completionReceipt.create({
      data: {
        id: "c1",
        taskId: "t1",
        runId: "r1",
        prNumber: 7,
        mergeSha: "m".repeat(40),
        headSha: "h".repeat(40),
        mergedAt: old,
      },
    });
    await db.redelivery.create({ data: { guid: "g-old", requestedAt: old } });
    await db.checkpoint.create({ data: { name: "deliveries", value: "cursor", updatedAt: old } });
  }

  async function seedEverything(): Promise<void> {
    await seedHistory();
    // Inbox: finished and older than 7 days goes; everything else stays.
    await delivery("done-8d", "done", 8 * DAY);
    await delivery("ignored-8d", "ignored", 8 * DAY);
    await delivery("done-7d-exactly", "done", 7 * DAY);
    await delivery("done-6d", "done", 6 * DAY);
    await delivery("done-71h", "done", 71 * HOUR);
    await delivery("parked-100d", "parked", 100 * DAY);
    await delivery("pending-100d", "pending", 100 * DAY);
    await delivery("processing-100d", "processing", 100 * DAY);
    // Effects: finished more than 14 days ago goes.
    await effect("done-15d", "done", 15 * DAY);
    await effect("dropped-15d", "dropped", 15 * DAY);
    await effect("dry-run-15d", "dry-run", 15 * DAY);
    await effect("done-13d", "done", 13 * DAY);
    await effect("done-1d-created-30d", "done", 1 * DAY, 30 * DAY);
    await effect("pending-100d", "pending", 100 * DAY);
    await effect("running-100d", "running", 100 * DAY);
    await effect("parked-100d", "parked", 100 * DAY);
    await idempotent("k-25h", 25 * HOUR);
    await idempotent("k-23h", 23 * HOUR);
    await report("old", 15 * DAY);
    await report("young", 13 * DAY);
    await audit("mallory-31d", 31 * DAY);
    await audit("eve-29d", 29 * DAY);
  }

  const left = async () => ({
    deliveries: (await database.db.delivery.findMany({ orderBy: { seq: "asc" } })).map((d) => d.deliveryId),
    effects: (await database.db.effect.findMany({ orderBy: { seq: "asc" } })).map((e) => e.id),
    idempotency: (await database.db.idempotentResponse.findMany({ orderBy: { key: "asc" } })).map((i) => i.key),
    sweepReports: (await database.db.sweepReport.findMany({ orderBy: { seq: "asc" } })).map((r) => r.kind),
    audit: (await database.db.auditEntry.findMany({ orderBy: { seq: "asc" } })).map((a) => a.actor),
    history: [
      await database.db.task.count(),
      await database.db.run.count(),
      await database.db.decision.count(),
      await database.db.decisionDelivery.count(),
      await database.db.completionReceipt.count(),
      await database.db.redelivery.count(),
      await database.db.checkpoint.count(),
    ],
  });

  test("exactly the old finished rows go: parked, unfinished, young and history rows stay", async () => {
    await seedEverything();
    const result = await prune(database, DEFAULT_RETENTION, NOW);
    expect(result).toMatchObject({
      dryRun: false,
      complete: true,
      counts: { deliveries: 2, effects: 3, idempotency: 1, sweepReports: 1, audit: 1 },
    });
    expect(result.cutoffs.deliveries.toISOString()).toBe("2026-02-22T12:00:00.000Z");
    expect(await left()).toEqual({
      deliveries: ["done-7d-exactly", "done-6d", "done-71h", "parked-100d", "pending-100d", "processing-100d"],
      effects: ["done-13d", "done-1d-created-30d", "pending-100d", "running-100d", "parked-100d"],
      idempotency: ["k-23h"],
      sweepReports: ["young"],
      audit: ["eve-29d"],
      history: [1, 1, 1, 1, 1, 1, 1],
    });
    // Nothing more to do: a second run deletes nothing.
    expect((await prune(database, DEFAULT_RETENTION, NOW)).counts).toEqual({
      deliveries: 0,
      effects: 0,
      idempotency: 0,
      sweepReports: 0,
      audit: 0,
    });
  });

  test("a dry run counts the same rows and deletes nothing", async () => {
    await seedEverything();
    const before = await left();
    const result = await prune(database, DEFAULT_RETENTION, NOW, { dryRun: true });
    expect(result).toMatchObject({
      dryRun: true,
      counts: { deliveries: 2, effects: 3, idempotency: 1, sweepReports: 1, audit: 1 },
    });
    expect(await left()).toEqual(before);
  });

  test("the ages follow the policy", async () => {
    await seedEverything();
    const policy: RetentionPolicy = {
      ...DEFAULT_RETENTION,
      deliveriesDays: 4,
      effectsDays: 100,
      idempotencyHours: 1,
      sweepReportsDays: 1,
      auditDays: 365,
    };
    expect((await prune(database, policy, NOW)).counts).toEqual({
      deliveries: 4,
      effects: 0,
      idempotency: 2,
      sweepReports: 2,
      audit: 0,
    });
    expect((await left()).deliveries).toEqual(["done-71h", "parked-100d", "pending-100d", "processing-100d"]);
  });

  test("more rows than a batch: bounded statements, the rest on the next run", async () => {
    const old = ago(10 * DAY);
    await database.db.delivery.createMany({
      data: Array.from({ length: 2_500 }, (_, i) => ({
        deliveryId: `bulk-${i}`,
        event: "push",
        taskKey: "1/acme/app",
        payload: "{}",
        state: i % 2 ? "done" : "ignored",
        receivedAt: old,
        nextAttemptAt: old,
        processedAt: old,
      })),
    });
    await delivery("parked-old", "parked", 10 * DAY);
    const progress: number[] = [];
    const first = await prune(database, DEFAULT_RETENTION, NOW, {
      batchSize: 1_000,
      maxBatches: 2,
      onProgress: (kind, n) => kind === "deliveries" && progress.push(n),
    });
    expect(first).toMatchObject({ complete: false, counts: { deliveries: 2_000 } });
    expect(progress).toEqual([1_000, 2_000]);
    expect(await database.db.delivery.count()).toBe(501);
    // The oldest go first (arrival order).
    expect(
      await database.db.delivery.findFirst({
        where: { state: { not: "parked" } },
        orderBy: { seq: "asc" },
        select: { deliveryId: true },
      }),
    ).toEqual({ deliveryId: "bulk-2000" });
    const second = await prune(database, DEFAULT_RETENTION, NOW, { batchSize: 1_000, maxBatches: 2 });
    expect(second).toMatchObject({ complete: true, counts: { deliveries: 500 } });
    expect((await database.db.delivery.findMany()).map((d) => d.deliveryId)).toEqual(["parked-old"]);
    // Without a cap (the CLI), one run goes on until nothing is left.
    const older = ago(20 * DAY);
    await database.db.effect.createMany({
      data: Array.from({ length: 1_201 }, (_, i) => ({
        id: `e${i}`,
        key: `e${i}`,
        installationId: 1,
        repo: "acme/app",
        kind: "label",
        payload: "{}",
        state: "done",
        nextAttemptAt: older,
        createdAt: older,
        doneAt: older,
      })),
    });
    expect(await prune(database, DEFAULT_RETENTION, NOW, { batchSize: 500 })).toMatchObject({
      complete: true,
      counts: { effects: 1_201 },
    });
  });

  test("a redelivery GitHub may still send is still a duplicate after pruning; only past the window is its row gone", async () => {
    const inbox = new Inbox(inboxQueries(database.db), database);
    const incoming = {
      deliveryId: "72f2f0e0-guid",
      event: "issues",
      action: "labeled",
      installationId: "1",
      taskKey: "1/acme/app#3",
      payload: "{}",
    };
    expect(await inbox.record(incoming)).toBe("new");
    // Processed, and GitHub's 3-day redelivery window is at its very end.
    await database.db.delivery.update({
      where: { deliveryId: incoming.deliveryId },
      data: { state: "done", processedAt: ago(3 * DAY), receivedAt: ago(3 * DAY) },
    });
    for (const policy of [DEFAULT_RETENTION, { ...DEFAULT_RETENTION, deliveriesDays: MIN_DELIVERIES_DAYS }]) {
      expect((await prune(database, policy, NOW)).counts.deliveries).toBe(0);
      expect(await inbox.record(incoming)).toBe("duplicate");
    }
    expect(await database.db.delivery.count()).toBe(1);
    // A week and a day later GitHub can no longer redeliver it; the row goes.
    expect((await prune(database, DEFAULT_RETENTION, new Date(NOW.getTime() + 5 * DAY))).counts.deliveries).toBe(1);
    expect(await database.db.delivery.count()).toBe(0);
  });

  test("scheduled: at most once an interval on the injected clock, sooner while a backlog is left, one log line when it deleted something", async () => {
    const clock = { t: NOW.getTime(), now: () => new Date(clock.t) };
    const lines: Array<[Record<string, unknown>, string]> = [];
    const log = {
      info: (obj: Record<string, unknown>, msg: string) => void lines.push([obj, msg]),
    } as unknown as ConstructorParameters<typeof Retention>[0]["log"];
    const retention = new Retention({ database, policy: DEFAULT_RETENTION, clock, log, batchSize: 100, maxBatches: 2 });
    const old = ago(31 * DAY);
    await database.db.auditEntry.createMany({
      data: Array.from({ length: 250 }, (_, i) => ({
        at: old,
        repo: "acme/app",
        actor: `a${i}`,
        input: "x",
        why: "y",
      })),
    });

    const first = await retention.sweep();
    expect(first).toMatchObject({ complete: false, counts: { audit: 200 } });
    expect(lines).toEqual([
      [expect.objectContaining({ audit: 200, total: 200, more: true }), "retention: pruned old rows"],
    ]);
    expect(await retention.sweep()).toBeNull(); // not due yet
    clock.t += 61_000; // a backlog brings the next run forward to a minute
    expect(await retention.sweep()).toMatchObject({ complete: true, counts: { audit: 50 } });
    expect(lines).toHaveLength(2);
    clock.t += 59 * 60_000;
    expect(await retention.sweep()).toBeNull();
    clock.t += 2 * 60_000;
    expect(await retention.sweep()).toMatchObject({ complete: true, counts: { audit: 0 } });
    expect(lines).toHaveLength(2); // nothing deleted, nothing logged
    expect(retention.dueAt?.getTime()).toBe(clock.t + 60 * 60_000);

    const off = new Retention({ database, policy: { ...DEFAULT_RETENTION, intervalMinutes: 0 }, clock, log });
    await audit("old", 60 * DAY);
    expect(await off.sweep()).toBeNull();
    expect(await database.db.auditEntry.count()).toBe(1);
  });

  test("the service's sweep loop prunes when due, with the injected clock", async () => {
    const rig = await startRig({ provider, env: { ORCHESTRA_RETENTION_AUDIT_DAYS: "2" } });
    try {
      const { db } = rig.app.database;
      const now = rig.clock.now();
      await db.auditEntry.create({
        data: { at: new Date(now.getTime() - 3 * DAY), repo: "acme/app", actor: "old", input: "x", why: "y" },
      });
      await db.auditEntry.create({
        data: { at: new Date(now.getTime() - DAY), repo: "acme/app", actor: "young", input: "x", why: "y" },
      });
      // The start-up sweep pruned (nothing); the next run is an hour later.
      expect((await rig.sweep()).pruned).toBe(0);
      expect(await db.auditEntry.count()).toBe(2);
      rig.clock.advance(HOUR + 1000);
      expect((await rig.sweep()).pruned).toBe(1);
      expect((await db.auditEntry.findMany()).map((a) => a.actor)).toEqual(["young"]);
      expect(rig.app.logs.filter((l) => l["msg"] === "retention: pruned old rows")).toEqual([
        expect.objectContaining({ level: 30, audit: 1, total: 1 }),
      ]);
    } finally {
      await rig.stop();
    }
  });
});

describe("retention settings", () => {
  test("defaults", () => {
    expect(parseEnv({}).retention).toEqual({
      deliveriesDays: 7,
      effectsDays: 14,
      idempotencyHours: 24,
      sweepReportsDays: 14,
      auditDays: 30,
      intervalMinutes: 60,
    });
    expect(parseEnv({}).retention).toEqual(DEFAULT_RETENTION);
  });

  test("values within bounds are taken", () => {
    const env = {
      ORCHESTRA_RETENTION_DELIVERIES_DAYS: "4",
      ORCHESTRA_RETENTION_EFFECTS_DAYS: "1",
      ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS: "1",
      ORCHESTRA_RETENTION_SWEEP_REPORTS_DAYS: "90",
      ORCHESTRA_RETENTION_AUDIT_DAYS: "365",
      ORCHESTRA_RETENTION_INTERVAL_MINUTES: "0",
    };
    expect(parseEnv(env).retention).toEqual({
      deliveriesDays: 4,
      effectsDays: 1,
      idempotencyHours: 1,
      sweepReportsDays: 90,
      auditDays: 365,
      intervalMinutes: 0,
    });
  });

  test.each([
    [
      "deliveries inside GitHub's redelivery window",
      "ORCHESTRA_RETENTION_DELIVERIES_DAYS",
      "3",
      /^ORCHESTRA_RETENTION_DELIVERIES_DAYS must be at least 4 days: GitHub redelivers a delivery with the same id for 3 days, .*duplicate.* \(got "3"\)$/,
    ],
    [
      "deliveries zero",
      "ORCHESTRA_RETENTION_DELIVERIES_DAYS",
      "0",
      /^ORCHESTRA_RETENTION_DELIVERIES_DAYS must be at least 4 days/,
    ],
    [
      "deliveries in words",
      "ORCHESTRA_RETENTION_DELIVERIES_DAYS",
      "seven",
      /^ORCHESTRA_RETENTION_DELIVERIES_DAYS must be a whole number of days, e.g. 7 \(got "seven"\)$/,
    ],
    [
      "deliveries fractional",
      "ORCHESTRA_RETENTION_DELIVERIES_DAYS",
      "7.5",
      /^ORCHESTRA_RETENTION_DELIVERIES_DAYS must be a whole number of days/,
    ],
    [
      "effects zero",
      "ORCHESTRA_RETENTION_EFFECTS_DAYS",
      "0",
      /^ORCHESTRA_RETENTION_EFFECTS_DAYS must be at least 1 day \(got "0"\)$/,
    ],
    [
      "effects negative",
      "ORCHESTRA_RETENTION_EFFECTS_DAYS",
      "-14",
      /^ORCHESTRA_RETENTION_EFFECTS_DAYS must be a whole number of days, e.g. 14/,
    ],
    [
      "effects absurd",
      "ORCHESTRA_RETENTION_EFFECTS_DAYS",
      "99999999",
      /^ORCHESTRA_RETENTION_EFFECTS_DAYS must be at most 36500 days/,
    ],
    [
      "idempotency zero",
      "ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS",
      "0",
      /^ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS must be at least 1 hour \(got "0"\)$/,
    ],
    [
      "idempotency with a unit",
      "ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS",
      "24h",
      /^ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS must be a whole number of hours, e.g. 24/,
    ],
    [
      "sweep reports zero",
      "ORCHESTRA_RETENTION_SWEEP_REPORTS_DAYS",
      "0",
      /^ORCHESTRA_RETENTION_SWEEP_REPORTS_DAYS must be at least 1 day/,
    ],
    [
      "audit in words",
      "ORCHESTRA_RETENTION_AUDIT_DAYS",
      "a month",
      /^ORCHESTRA_RETENTION_AUDIT_DAYS must be a whole number of days, e.g. 30/,
    ],
    [
      "interval negative",
      "ORCHESTRA_RETENTION_INTERVAL_MINUTES",
      "-1",
      /^ORCHESTRA_RETENTION_INTERVAL_MINUTES must be a whole number of minutes, e.g. 60/,
    ],
  ])("%s → one line naming the setting", (_name, name, value, pattern) => {
    const lines = errorsOf({ [name]: value });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
  });
});
