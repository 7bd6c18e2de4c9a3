/**
 * `/ready` through the real server: the public answer carries the status and
 * a generic reason only; the admin token adds where the database is, its
 * error text and the missing migrations. The answer is at most 5 s old on
 * the App's clock: while it is fresh, breaking the database behind the
 * service's back changes nothing, however many probes ask.
 */
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { startOrchestra, type Running } from "../support/orchestra.js";
import { RigClock } from "../support/clock.js";

describe.each(providers)("/ready on %s", (provider) => {
  let db: TestDb;
  let app: Running;
  let clock: RigClock;

  beforeEach(async () => {
    clock = new RigClock();
    db = await testDatabase(provider, { migrated: true });
    app = await startOrchestra({ db, clock });
  });
  afterEach(async () => {
    await app.stop();
    await db.drop();
  });

  const ready = async (token?: string) => {
    const res = await fetch(app.url + "/ready", token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { detail?: Record<string, unknown> },
    };
  };

  test("ready: the public answer has no detail; the admin answer says where and how fresh", async () => {
    const pub = await ready();
    expect(pub).toEqual({ status: 200, body: { status: "ready", database: provider, mode: "app" } });
    const wrong = await ready("not-the-admin-token-but-long-enough-0000");
    expect(wrong).toEqual(pub);
    const admin = await ready(app.adminToken);
    expect(admin.status).toBe(200);
    expect(admin.body.detail).toMatchObject({ where: app.database.where, cacheMs: 5000 });
    expect(admin.body.detail!["ageMs"]).toBeLessThan(5000);
  });

  test("migrations removed behind its back: the cached answer holds for 5 s, then 503 with the names for the operator only", async () => {
    expect((await ready()).status).toBe(200);
    // However long the flood takes on a busy machine, the answer stays fresh until the clock is moved.
    clock.hold();
    await db.sql(`DELETE FROM "_prisma_migrations" WHERE "migration_name" = '0010_edges'`);
    // A flood while the answer is fresh: no query sees the change.
    const flood = await Promise.all(Array.from({ length: 200 }, () => ready()));
    expect(flood.every((r) => r.status === 200)).toBe(true);

    clock.advance(5_001);
    const pub = await ready();
    expect(pub).toEqual({
      status: 503,
      body: { status: "not ready", reason: "migrations not applied", database: provider },
    });
    expect(JSON.stringify(pub.body)).not.toContain("0010_edges");
    const admin = await ready(app.adminToken);
    expect(admin.status).toBe(503);
    expect(admin.body.detail).toMatchObject({
      where: app.database.where,
      pending: ["0010_edges"],
      hint: expect.stringContaining("orchestra migrate"),
    });
  });

  if (provider === "postgresql") {
    test("the database gone: a generic reason for anyone, the error text for the operator", async () => {
      const name = new URL(db.url).pathname.slice(1);
      const { default: pg } = await import("pg");
      const admin = new pg.Client({ connectionString: process.env["TEST_DATABASE_URL"] });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND usename = current_user`,
          [name],
        );
        const pub = await ready();
        expect(pub).toEqual({
          status: 503,
          body: { status: "not ready", reason: "database unreachable", database: provider },
        });
        const detail = (await ready(app.adminToken)).body.detail!;
        expect(typeof detail["error"]).toBe("string");
        expect((detail["error"] as string).length).toBeGreaterThan(0);
        expect(detail["where"]).toBe(app.database.where);
        expect(detail["where"]).toMatch(/^postgresql:\/\/[^:]+:\*\*\*@/);
      } finally {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
        await admin.end();
      }
    });
  }
});
