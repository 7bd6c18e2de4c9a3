/**
 * A hot key (thousands of deliveries on one issue) costs a claim what a quiet
 * one does: the claim reads each key's head (src/inbox/heads.ts), never the
 * backlog behind it. Proved by the database's own account of the claim's
 * query (the plan on SQLite, the rows it read on PostgreSQL), not by timing;
 * and the heads stay right while deliveries are stored, finished, parked and
 * replayed, from two inboxes at once.
 */
import { Inbox, type ClaimedDelivery } from "../../src/inbox/store.js";
import { inboxQueries } from "../../src/inbox/queries.js";
import { DUE_HEADS } from "../../src/inbox/heads.js";
import { numbered, select } from "../../src/store/sql.js";
import { openDatabase, type Database } from "../../src/store/db.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { RigClock } from "../support/clock.js";

const BACKLOG = 2_000;

describe.each(providers)("a hot key on %s", (provider) => {
  let db: TestDb;
  let database: Database;
  beforeEach(async () => {
    db = await testDatabase(provider, { migrated: true });
    database = await openDatabase(db.url, { poolSize: 4 });
  });
  afterEach(async () => {
    await database.close();
    await db.drop();
  });

  const delivery = (id: string, key: string) => ({
    deliveryId: id,
    event: "issue_comment",
    action: "created",
    installationId: "1",
    taskKey: key,
    payload: "{}",
  });

  /** Every key with an open delivery has exactly one head, its oldest open delivery; no other row is a head. */
  async function expectHeadsRight(): Promise<void> {
    const rows = await database.db.delivery.findMany({ orderBy: { seq: "asc" } });
    const oldestOpen = new Map<string, number>();
    for (const r of rows)
      if ((r.state === "pending" || r.state === "processing") && !oldestOpen.has(r.taskKey))
        oldestOpen.set(r.taskKey, r.seq);
    const heads = rows.filter((r) => r.head).map((r) => r.seq);
    expect(heads).toEqual([...oldestOpen.values()].sort((a, b) => a - b));
  }

  /** How many rows the claim's query read, as the database reports it. */
  async function rowsRead(now: Date): Promise<number | string[]> {
    const sql = DUE_HEADS + "10";
    if (provider === "sqlite") {
      const plan = await select(database, `EXPLAIN QUERY PLAN ${sql}`, [now, now]);
      return plan.map((r) => String(r["detail"]));
    }
    await database.raw.executeRaw({ sql: `ANALYZE "Delivery"`, args: [], argTypes: [] });
    const out = await database.raw.queryRaw({
      sql: `EXPLAIN (ANALYZE, FORMAT TEXT) ${numbered(sql)}`,
      args: [now, now],
      argTypes: [
        { scalarType: "datetime", arity: "scalar" },
        { scalarType: "datetime", arity: "scalar" },
      ],
    });
    return rowsIn(out.rows.map((r) => String(r[0])).join("\n"));
  }

  /** The rows a PostgreSQL plan, run with ANALYZE, says it read: scanned, and removed by a filter. */
  function rowsIn(plan: string): number {
    const scanned = [...plan.matchAll(/Scan.*actual time=[^)]* rows=(\d+)/g)].map((m) => Number(m[1]));
    const removed = [...plan.matchAll(/Rows Removed by (?:Filter|Index Recheck): (\d+)/g)].map((m) => Number(m[1]));
    return [...scanned, ...removed].reduce((a, b) => a + b, 0);
  }

  test(`the claim reads the heads, not the ${BACKLOG} deliveries behind one`, async () => {
    const clock = new RigClock();
    const inbox = new Inbox(inboxQueries(database.db), database);
    await Promise.all(Array.from({ length: BACKLOG }, (_, i) => inbox.record(delivery(`hot-${i}`, "1/o/r#1"))));
    await inbox.record(delivery("quiet", "1/o/r#2"));
    await expectHeadsRight();
    // The hot key's head is in flight here: the quiet key is claimed, and the backlog is not read to find it.
    const [hot] = await inbox.claim("p", 1, 60_000, new Set(), clock.now());
    expect(hot!.deliveryId).toBe("hot-0");
    const read = await rowsRead(clock.now());
    if (typeof read === "number") expect(read).toBeLessThanOrEqual(4);
    else expect(read.join("\n")).toMatch(/USING (COVERING )?INDEX Delivery_head_seq_idx \(head=\?/);
    const next = await inbox.claim("p", 5, 60_000, new Set(["1/o/r#1"]), clock.now());
    expect(next.map((d) => d.deliveryId)).toEqual(["quiet"]);
    // Finishing the head hands the key to the next delivery, in arrival order.
    expect(await inbox.complete(hot!.seq, "p", "done", clock.now())).toBe(true);
    await expectHeadsRight();
    const after = await inbox.claim("p", 5, 60_000, new Set(), clock.now());
    expect(after.map((d) => d.deliveryId)).toEqual(["hot-1"]);
  });

  test(`the newest pull_request delivery about a key is read from the index, not through the ${BACKLOG} comments after it`, async () => {
    const inbox = new Inbox(inboxQueries(database.db), database);
    await inbox.record({ ...delivery("pr", "1/o/r#1"), event: "pull_request", payload: '{"n":1}' });
    await Promise.all(Array.from({ length: BACKLOG }, (_, i) => inbox.record(delivery(`hot-${i}`, "1/o/r#1"))));
    expect(await inboxQueries(database.db).newestPayload("1/o/r#1", "pull_request")).toBe('{"n":1}');
    const sql = `SELECT "payload" FROM "Delivery" WHERE "taskKey" = ? AND "event" = ? ORDER BY "seq" DESC LIMIT 1`;
    const args = ["1/o/r#1", "pull_request"];
    if (provider === "sqlite") {
      const plan = await select(database, `EXPLAIN QUERY PLAN ${sql}`, args);
      expect(plan.map((r) => String(r["detail"])).join("\n")).toMatch(
        /USING INDEX Delivery_taskKey_event_seq_idx \(taskKey=\? AND event=\?\)/,
      );
      return;
    }
    await database.raw.executeRaw({ sql: `ANALYZE "Delivery"`, args: [], argTypes: [] });
    const text = (await select(database, `EXPLAIN (ANALYZE, FORMAT TEXT) ${sql}`, args))
      .map((r) => String(Object.values(r)[0]))
      .join("\n");
    expect(text).toContain("Delivery_taskKey_event_seq_idx");
    expect(rowsIn(text)).toBeLessThanOrEqual(2);
  });

  test("a head whose processor died is claimed again when its lease runs out; a parked one passes the key on", async () => {
    const clock = new RigClock();
    const inbox = new Inbox(inboxQueries(database.db), database, { maxAttempts: 1 });
    for (const id of ["a", "b", "c"]) await inbox.record(delivery(id, "1/o/r#7"));
    const [a] = await inbox.claim("dead", 1, 10_000, new Set(), clock.now());
    expect(await inbox.claim("p", 5, 10_000, new Set(), clock.now())).toEqual([]);
    clock.advance(10_001);
    const [again] = await inbox.claim("p", 5, 10_000, new Set(), clock.now());
    expect(again!.deliveryId).toBe(a!.deliveryId);
    // A deterministic failure parks it: the key moves on to b.
    const out = await inbox.fail(
      again!,
      "p",
      { failure: { class: "deterministic" }, class: "TypeError", message: "bad" },
      clock.now(),
    );
    expect(out.state).toBe("parked");
    await expectHeadsRight();
    const [b] = await inbox.claim("p", 5, 10_000, new Set(), clock.now());
    expect(b!.deliveryId).toBe("b");
    // Replayed, a is older than b and c: it is the head again once b is finished.
    expect(await inbox.replay("a", clock.now())).toBe(true);
    expect(await inbox.complete(b!.seq, "p", "done", clock.now())).toBe(true);
    await expectHeadsRight();
    const order: string[] = [];
    for (;;) {
      const [d] = await inbox.claim("p", 5, 10_000, new Set(), clock.now());
      if (!d) break;
      order.push(d.deliveryId);
      await inbox.complete(d.seq, "p", "done", clock.now());
    }
    expect(order).toEqual(["a", "c"]);
  });

  test("two inboxes storing and finishing one key at once keep one head, and its order", async () => {
    const clock = new RigClock();
    const [one, two] = [new Inbox(inboxQueries(database.db), database), new Inbox(inboxQueries(database.db), database)];
    const done: string[] = [];
    const drain = async (inbox: Inbox, owner: string) => {
      for (let idle = 0; idle < 20;) {
        const claimed: ClaimedDelivery[] = await inbox.claim(owner, 1, 60_000, new Set(), clock.now());
        if (claimed.length === 0) {
          idle++;
          await new Promise((r) => setImmediate(r));
          continue;
        }
        idle = 0;
        for (const d of claimed) {
          done.push(d.deliveryId);
          await inbox.complete(d.seq, owner, "done", clock.now());
        }
      }
    };
    const store = async (inbox: Inbox, prefix: string) => {
      for (let i = 0; i < 60; i++) await inbox.record(delivery(`${prefix}-${i}`, "1/o/r#3"));
    };
    await Promise.all([store(one, "x"), store(two, "y"), drain(one, "p1"), drain(two, "p2")]);
    await drain(one, "p1");
    await expectHeadsRight();
    const rows = await database.db.delivery.findMany({ orderBy: { seq: "asc" } });
    expect(rows.every((r) => r.state === "done")).toBe(true);
    // Processed one at a time, in arrival order.
    expect(done).toEqual(rows.map((r) => r.deliveryId));
  });
});
