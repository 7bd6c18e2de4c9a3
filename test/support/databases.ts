/**
 * Test databases. SQLite always; PostgreSQL when TEST_DATABASE_URL names a
 * server where the role may create databases (.ci/run provides one). Each
 * test gets its own database, dropped afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type Database, type Provider } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";

export const pgUrl = process.env["TEST_DATABASE_URL"];

/** The providers this run exercises: both in CI. */
export const providers: Provider[] = pgUrl ? ["sqlite", "postgresql"] : ["sqlite"];

export interface TestDb {
  provider: Provider;
  url: string;
  /** Runs SQL on a connection of its own (to break things behind the service's back). */
  sql(text: string): Promise<void>;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function testDatabase(provider: Provider): Promise<TestDb> {
  if (provider === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "orchestra-test-"));
    const file = join(dir, "orchestra.db");
    return {
      provider,
      url: `file:${file}`,
      async sql(text) {
        const { default: Sqlite } = await import("better-sqlite3");
        const db = new Sqlite(file);
        try {
          db.exec(text);
        } finally {
          db.close();
        }
      },
      async drop() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (!pgUrl) throw new Error("TEST_DATABASE_URL is not set");
  const name = `orchestra_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = withDatabase(pgUrl, name);
  return {
    provider,
    url,
    async sql(text) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    },
    async drop() {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((err: unknown) => {
          // FORCE ends an autovacuum worker in the database only for a role with pg_signal_backend.
          if (/must be a member of the role whose process is being terminated/.test(String(err))) {
            throw new Error(`could not drop ${name}: ${String(err)}; grant pg_signal_backend to the test role (.ci/pg-setup.sh does)`);
          }
          throw err;
        });
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * A migrated database of `provider` for each test of the enclosing describe
 * (opened before, closed and dropped after). Read `.database` inside a test.
 */
export function eachMigratedDatabase(provider: Provider): { readonly database: Database } {
  const current = {} as { database: Database; testDb: TestDb };
  beforeEach(async () => {
    current.testDb = await testDatabase(provider);
    current.database = await openDatabase(current.testDb.url, { poolSize: 2 });
    await migrate(current.database, () => {});
  });
  afterEach(async () => {
    await current.database.close();
    await current.testDb.drop();
  });
  return current;
}
