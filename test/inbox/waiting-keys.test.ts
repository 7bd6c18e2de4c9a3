/**
 * Keys that are backing off never hold up the rest of the inbox: the claim
 * asks the database for due heads only, so however many keys wait (one
 * installation rate-limited, a partial outage), a due delivery on another key
 * is claimed at once.
 */
import { Inbox } from "../../src/inbox/store.js";
import { inboxQueries } from "../../src/inbox/queries.js";
import { openDatabase, type Database } from "../../src/store/db.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { RigClock } from "../support/clock.js";

describe.each(providers)("waiting keys on %s", (provider) => {
  let db: TestDb;
  let database: Database;
  beforeEach(async () => {
    db = await testDatabase(provider, { migrated: true });
    database = await openDatabase(db.url, { poolSize: 2 });
  });
  afterEach(async () => {
    await database.close();
    await db.drop();
  });

  const delivery = (n: number, key: string) => ({
    deliveryId: `d${n}`,
    event: "issues",
    action: "labeled",
    installationId: "1",
    taskKey: key,
    payload: "{}",
  });

  test("200 keys backing off do not hide a due delivery on another key", async () => {
    const clock = new RigClock();
    const inbox = new Inbox(inboxQueries(database.db), database);
    for (let i = 0; i < 200; i++) await inbox.record(delivery(i, `1/o/r#${i}`));
    // Every one of them fails with a rate limit: each key waits a minute.
    for (;;) {
      const batch = await inbox.claim("p", 50, 60_000, new Set(), clock.now());
      if (batch.length === 0) break;
      for (const d of batch)
        await inbox.fail(
          d,
          "p",
          { failure: { class: "rate-limit", retryAfterMs: 60_000 }, class: "rate-limit", message: "rate limited" },
          clock.now(),
          () => 0.5,
        );
    }
    await inbox.record(delivery(999, "1/o/r#fresh"));
    const claimed = await inbox.claim("p", 1, 60_000, new Set(), clock.now());
    expect(claimed.map((d) => d.deliveryId)).toEqual(["d999"]);
    // Once they are due, they are claimed again, oldest first.
    clock.advance(120_000);
    const again = await inbox.claim("p", 3, 60_000, new Set(), clock.now());
    expect(again.map((d) => d.deliveryId)).toEqual(["d0", "d1", "d2"]);
  });
});
