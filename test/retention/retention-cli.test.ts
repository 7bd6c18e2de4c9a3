/**
 * `orchestra prune` (the built command, against the database directly):
 * `--dry-run --json` prints what would go and deletes nothing; a real run
 * deletes it; an unreachable or missing database and a bad setting each say
 * what to do.
 */
import { childEnv } from "../support/cli.js";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type Database } from "../../src/store/db.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";

const DAY = 24 * 3600_000;
const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");

/** The command from an empty directory (no .env is read), with only the environment given. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const cwd = mkdtempSync(join(tmpdir(), "orchestra-prune-"));
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, env: childEnv(env), timeout: 30_000 }, (err, stdout, stderr) => {
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

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

  async function seed(): Promise<void> {
    const now = Date.now();
    const at = (days: number) => new Date(now - days * DAY);
    const { db } = database;
    for (const [id, state, days] of [
      ["old-done", "done", 9],
      ["old-ignored", "ignored", 9],
      ["young", "done", 2],
      ["parked", "parked", 90],
    ] as const) {
      await db.delivery.create({
        data: {
          deliveryId: id,
          event: "issues",
          taskKey: "1/acme/app#1",
          payload: "{}",
          state,
          receivedAt: at(days),
          nextAttemptAt: at(days),
        },
      });
    }
    for (const [id, state, days] of [
      ["old-done", "done", 20],
      ["parked", "parked", 90],
      ["pending", "pending", 90],
    ] as const) {
      await db.effect.create({
        data: {
          id,
          key: id,
          installationId: 1,
          repo: "acme/app",
          kind: "comment",
          payload: "{}",
          state,
          nextAttemptAt: at(days),
          createdAt: at(days),
          doneAt: state === "done" ? at(days) : null,
        },
      });
    }
    await db.idempotentResponse.create({ data: { key: "k", status: 200, body: "{}", createdAt: at(2) } });
    await db.auditEntry.create({ data: { at: at(40), repo: "acme/app", actor: "mallory", input: "x", why: "y" } });
  }

  const rows = async () => [
    await database.db.delivery.count(),
    await database.db.effect.count(),
    await database.db.idempotentResponse.count(),
    await database.db.auditEntry.count(),
  ];

  test("prune --dry-run --json prints the counts and deletes nothing; prune then deletes them", async () => {
    await seed();
    expect(await rows()).toEqual([4, 3, 1, 1]);
    const dry = await cli(["prune", "--dry-run", "--json"], { DATABASE_URL: tdb.url });
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    const answer = JSON.parse(dry.stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({
      dryRun: true,
      counts: { deliveries: 2, effects: 1, idempotency: 1, sweepReports: 0, audit: 1 },
      total: 5,
      retention: { deliveriesDays: 7, effectsDays: 14, idempotencyHours: 24, auditDays: 30 },
      database: { provider },
    });
    expect(Object.keys(answer["cutoffs"] as object)).toEqual([
      "deliveries",
      "effects",
      "idempotency",
      "sweepReports",
      "audit",
    ]);
    expect(await rows()).toEqual([4, 3, 1, 1]);

    // The settings are read from the environment.
    const longer = await cli(["prune", "--dry-run", "--json"], {
      DATABASE_URL: tdb.url,
      ORCHESTRA_RETENTION_DELIVERIES_DAYS: "10",
      ORCHESTRA_RETENTION_AUDIT_DAYS: "60",
    });
    expect(JSON.parse(longer.stdout)).toMatchObject({
      counts: { deliveries: 0, effects: 1, idempotency: 1, audit: 0 },
      total: 2,
    });

    const real = await cli(["prune"], { DATABASE_URL: tdb.url });
    expect(real.stderr).toBe("");
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(/^deleted 5 row\(s\) \(/);
    expect(real.stdout).toMatch(/deliveries \(done, ignored\) +2 +older than /);
    expect(real.stdout).toContain("kept: parked deliveries and effects");
    expect(await rows()).toEqual([2, 2, 0, 0]);
    expect((await database.db.delivery.findMany({ orderBy: { seq: "asc" } })).map((d) => d.deliveryId)).toEqual([
      "young",
      "parked",
    ]);
    expect((await database.db.effect.findMany({ orderBy: { seq: "asc" } })).map((e) => e.id)).toEqual([
      "parked",
      "pending",
    ]);
  });
});

describe("orchestra prune errors", () => {
  test("an unreachable PostgreSQL server: exit 1, says where and what to check, no password", async () => {
    const r = await cli(["prune", "--dry-run"], {
      DATABASE_URL: "postgresql://orchestra:hunter2@127.0.0.1:9/orchestra",
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /^orchestra: database unreachable at postgresql:\/\/orchestra:\*\*\*@127\.0\.0\.1:9\/orchestra \(.+\); check DATABASE_URL and that the database server is running, then run orchestra prune again\n$/,
    );
    expect(r.stderr).not.toContain("hunter2");
  });

  test("a SQLite file that is not there is not created: exit 1, says where it looked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orchestra-none-"));
    try {
      const r = await cli(["prune"], { DATABASE_URL: `file:${join(dir, "missing.db")}` });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `orchestra: no database at ${join(dir, "missing.db")}; set DATABASE_URL to the service's database (file:/path/to/orchestra.db or postgresql://user:password@host:5432/db), or run from the service's working directory\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a setting below its minimum: exit 2, the setting named", async () => {
    const r = await cli(["prune", "--dry-run"], { ORCHESTRA_RETENTION_DELIVERIES_DAYS: "2" });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^orchestra: ORCHESTRA_RETENTION_DELIVERIES_DAYS must be at least 4 days: GitHub redelivers/,
    );
  });
});
