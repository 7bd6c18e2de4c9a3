/**
 * The missed-deliveries sweep against a scripted delivery log (no HTTP) and
 * a real database: paging and its saved cursor, the bounds, positive
 * evidence only, redelivery failures, two replicas, and waiting().
 */
import { pino } from "pino";
import { GitHubError } from "../../src/github/port.js";
import { nextCursor, toHookDelivery, type AppHooks, type HookDelivery } from "../../src/github/app-hooks.js";
import { MissedDeliveries } from "../../src/reconcile/deliveries.js";
import { reconcileQueries } from "../../src/reconcile/queries.js";
import { CHECKPOINT, type DeliveriesLimits } from "../../src/reconcile/deliveries-model.js";
import { openDatabase, type Database } from "../../src/store/db.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** GitHub's delivery log: newest first, `perPage` a page, the cursor is the id a page starts at. */
class Log implements AppHooks {
  items: HookDelivery[] = [];
  pages: Array<string | null> = [];
  asked: number[] = [];
  failPage: ((cursor: string | null) => Error | null) | null = null;
  failRedeliver: ((id: number) => Error | null) | null = null;
  private seq = 1000;
  constructor(
    private readonly clock: { now(): Date },
    private readonly perPage = 10,
  ) {}

  add(d: Partial<HookDelivery> & { statusCode: number }): HookDelivery {
    const id = ++this.seq;
    const item: HookDelivery = {
      guid: `g${id}`,
      deliveredAt: this.clock.now(),
      redelivery: false,
      event: "issues",
      action: "labeled",
      installationId: 1,
      ...d,
      id,
    };
    this.items.push(item);
    return item;
  }

  async listDeliveries(cursor?: string | null) {
    this.pages.push(cursor ?? null);
    const err = this.failPage?.(cursor ?? null);
    if (err) throw err;
    const all = [...this.items].sort((a, b) => b.id - a.id);
    const start = cursor ? all.findIndex((i) => i.id <= Number(cursor)) : 0;
    const items = start < 0 ? [] : all.slice(start, start + this.perPage);
    const next = start >= 0 ? all[start + this.perPage] : undefined;
    return { items, next: next ? String(next.id) : null };
  }

  async redeliver(id: number) {
    const err = this.failRedeliver?.(id);
    if (err) throw err;
    this.asked.push(id);
    // GitHub logs the attempt; here it failed again (the App is still unreachable).
    const of = this.items.find((i) => i.id === id)!;
    this.add({ ...of, statusCode: 0, redelivery: true, deliveredAt: this.clock.now() });
  }
}

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let t: TestDb;
  let database: Database;
  let clock: { at: number; now(): Date };
  let log: Log;

  beforeEach(async () => {
    t = await testDatabase(provider, { migrated: true });
    database = await openDatabase(t.url, { poolSize: 3 });
    clock = { at: Date.parse("2026-06-01T12:00:00Z"), now: () => new Date(clock.at) };
    log = new Log(clock);
  });
  afterEach(async () => {
    await database.close();
    await t.drop();
  });

  const sweeper = (limits: Partial<DeliveriesLimits> = {}, dryRun = false) =>
    new MissedDeliveries({
      queries: reconcileQueries(database.db),
      hooks: log,
      clock,
      log: pino({ level: "silent" }),
      dryRun,
      limits,
    });
  const inbox = (guid: string) =>
    database.db.delivery.create({
      data: { deliveryId: guid, event: "issues", taskKey: "1/acme/app#1", payload: "{}" },
    });
  const checkpoint = async () => (await database.db.checkpoint.findUnique({ where: { name: CHECKPOINT } }))?.value;

  test("pages past the bound are read from the saved cursor next time; new deliveries after that", async () => {
    const failed = [3, 17, 24].map((i) => i); // positions, oldest = 0
    const items = Array.from({ length: 25 }, (_, i) => log.add({ statusCode: failed.includes(i) ? 502 : 200 }));
    const s = sweeper({ pages: 2 });

    const first = await s.sweep();
    expect(log.pages).toEqual([null, String(items[14]!.id)]);
    expect(first).toMatchObject({ read: 20, missing: 2, redelivered: 2 });
    expect(log.asked).toEqual([items[17]!.id, items[24]!.id]);
    expect(JSON.parse((await checkpoint())!)).toMatchObject({
      newest: items[24]!.id,
      backlog: { cursor: String(items[4]!.id), floor: null },
    });

    const fresh = log.add({ statusCode: 502 });
    log.pages = [];
    clock.at += MINUTE;
    const second = await s.sweep();
    // The rest of the backlog (one page), then the top down to the checkpoint (one page).
    expect(log.pages).toEqual([String(items[4]!.id), null]);
    expect(second.redelivered).toBe(2);
    expect(log.asked.slice(2).sort()).toEqual([items[3]!.id, fresh.id].sort());
    expect(JSON.parse((await checkpoint())!)).toMatchObject({ backlog: null });
  });

  test("a listing that fails on its second page changes nothing", async () => {
    for (let i = 0; i < 15; i++) log.add({ statusCode: i === 12 ? 502 : 200 });
    const s = sweeper();
    await s.sweep(); // the checkpoint as a previous sweep left it
    const before = await checkpoint();
    const asked = log.asked.length;
    log.add({ statusCode: 502 });
    for (let i = 0; i < 12; i++) log.add({ statusCode: 200 });
    log.failPage = (cursor) => (cursor ? new GitHubError("list webhook deliveries", 502, "Bad Gateway", true) : null);
    clock.at += MINUTE;
    expect(await s.sweep()).toMatchObject({ errors: 1, redelivered: 0 });
    expect(log.asked.length).toBe(asked);
    expect(await checkpoint()).toBe(before);
    const row = await database.db.sweepReport.findFirst({ where: { kind: "deliveries" }, orderBy: { seq: "desc" } });
    expect(JSON.parse(row!.detail!).listing).toContain("502");

    log.failPage = null;
    clock.at += MINUTE;
    expect(await s.sweep()).toMatchObject({ errors: 0, redelivered: 1 });
  });

  test("at most N redeliveries a sweep, the oldest first; a guid asked within the hour waits", async () => {
    const failed = Array.from({ length: 5 }, () => {
      clock.at += 1000;
      return log.add({ statusCode: 502 });
    });
    const s = sweeper({ redeliveries: 2 });
    expect(await s.sweep()).toMatchObject({ missing: 5, redelivered: 2, deferred: 3 });
    expect(log.asked).toEqual([failed[0]!.id, failed[1]!.id]);
    clock.at += MINUTE;
    expect(await s.sweep()).toMatchObject({ missing: 5, redelivered: 2, skipped: 2, deferred: 1 });
    expect(log.asked.slice(2)).toEqual([failed[2]!.id, failed[3]!.id]);
    clock.at += HOUR;
    const later = await s.sweep();
    expect(later.redelivered).toBe(2);
    // The redeliveries themselves failed: each guid is asked by its newest attempt.
    expect(log.asked.slice(4)).toHaveLength(2);
  });

  test("a redelivery that may have been sent waits an hour; a rate limit stops the sweep and is asked again next time", async () => {
    const [a, b, c] = [log.add({ statusCode: 502 }), log.add({ statusCode: 502 }), log.add({ statusCode: 502 })];
    log.failRedeliver = (id) =>
      id === a.id
        ? new GitHubError("redeliver webhook delivery", 502, "Bad Gateway", true, { mayHaveSent: true })
        : id === b.id
          ? new GitHubError("redeliver webhook delivery", 403, "secondary rate limit", true, { retryAfterMs: MINUTE })
          : null;
    const s = sweeper();
    expect(await s.sweep()).toMatchObject({ redelivered: 0, errors: 2, deferred: 1 });
    expect(await database.db.redelivery.findUnique({ where: { guid: a.guid } })).toMatchObject({
      lastError: expect.stringContaining("502"),
    });
    log.failRedeliver = null;
    clock.at += MINUTE;
    expect(await s.sweep()).toMatchObject({ redelivered: 2, skipped: 1 });
    expect(log.asked).toEqual([b.id, c.id]);
  });

  test("a saved cursor GitHub refuses is dropped; a full set of failed guids pauses reading at a page boundary", async () => {
    for (let i = 0; i < 30; i++) log.add({ statusCode: 502 });
    const s = sweeper({ pending: 5, redeliveries: 0 });
    expect(await s.sweep()).toMatchObject({ read: 10, missing: 10 });
    const saved = JSON.parse((await checkpoint())!);
    expect(saved.backlog).toMatchObject({ cursor: "1020" });
    clock.at += MINUTE;
    expect(await s.sweep()).toMatchObject({ read: 0, missing: 10 }); // still full: nothing read
    expect(log.pages).toHaveLength(1);
    log.failPage = (cursor) =>
      cursor ? new GitHubError("list webhook deliveries", 422, "Invalid cursor", false) : null;
    clock.at += MINUTE;
    expect(await sweeper({ redeliveries: 0 }).sweep()).toMatchObject({ errors: 1 });
    expect(JSON.parse((await checkpoint())!)).toEqual({ ...saved, backlog: null });
  });

  test("two replicas sweeping at once ask for each guid once", async () => {
    for (let i = 0; i < 6; i++) log.add({ statusCode: i % 2 ? 200 : 502 });
    const [r1, r2] = await Promise.all([sweeper().sweep(), sweeper().sweep()]);
    expect(r1.redelivered + r2.redelivered).toBe(3);
    expect(new Set(log.asked).size).toBe(3);
    expect(log.asked).toHaveLength(3);
  });

  test("waiting(): installations with a failed delivery that no success and no inbox row has recovered, within the window", async () => {
    const s = sweeper({}, true);
    const one = log.add({ statusCode: 502, installationId: 1 });
    const two = log.add({ statusCode: 0, installationId: 2 });
    log.add({ statusCode: 500, installationId: null, event: "installation", action: "created" });
    log.add({ statusCode: 200, installationId: 3 });
    log.add({ statusCode: 200, installationId: 4, guid: "g-ok" });
    log.add({ statusCode: 502, installationId: 4, guid: "g-ok", redelivery: true }); // any 2xx attempt counts
    expect(await s.waiting()).toEqual(new Set());
    await s.sweep();
    expect(await s.waiting()).toEqual(new Set([1, 2]));

    log.add({ ...two, statusCode: 202, redelivery: true, deliveredAt: clock.now() });
    clock.at += MINUTE;
    await s.sweep();
    expect(await s.waiting()).toEqual(new Set([1]));
    await inbox(one.guid); // recovered the moment the inbox holds it, before any sweep
    expect(await s.waiting()).toEqual(new Set());

    const three = log.add({ statusCode: 502, installationId: 3 });
    clock.at += MINUTE;
    await s.sweep();
    expect(await s.waiting()).toEqual(new Set([3]));
    clock.at = three.deliveredAt.getTime() + 3 * 24 * HOUR + 1; // past GitHub's window: nothing can recover it
    expect(await s.waiting()).toEqual(new Set());
    expect(log.asked).toEqual([]); // dry run
  });
});

test("the adapter reads GitHub's items and Link cursors strictly", () => {
  expect(nextCursor('<https://api.github.com/app/hook/deliveries?per_page=100&cursor=v1_42>; rel="next"')).toBe(
    "v1_42",
  );
  expect(nextCursor(undefined)).toBeNull();
  expect(() => nextCursor('<https://api.github.com/app/hook/deliveries?page=2>; rel="next"')).toThrow(GitHubError);
  const raw = {
    id: 1,
    guid: "g",
    delivered_at: "2026-01-01T00:00:00Z",
    redelivery: false,
    status_code: 502,
    event: "issues",
    action: "labeled",
    installation_id: 7,
  };
  expect(toHookDelivery(raw)).toMatchObject({
    id: 1,
    guid: "g",
    statusCode: 502,
    installationId: 7,
    action: "labeled",
  });
  expect(() => toHookDelivery({ ...raw, status_code: undefined })).toThrow(GitHubError);
});
