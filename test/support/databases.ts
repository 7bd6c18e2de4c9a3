/**
 * Test databases. SQLite always; PostgreSQL when TEST_DATABASE_URL names a
 * server where the role may create databases (.ci/run provides one). Each
 * test gets its own database, dropped afterwards: empty, or (`migrated`) a
 * copy of one migrated once per run, which is most of what starting an App
 * for a test used to cost on PostgreSQL.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type Database, type Provider } from "../../src/store/db.js";
import { listMigrations, migrate } from "../../src/store/migrate.js";

export const pgUrl = process.env["TEST_DATABASE_URL"];

/** The providers this run exercises: both in CI. */
export const providers: Provider[] = pgUrl ? ["sqlite", "postgresql"] : ["sqlite"];

/**
 * For tests the database cannot decide: what reaches GitHub and git, how the CLI renders an answer, how many calls
 * a flow costs. They run once per run, on SQLite: a whole describe with `describe.each(oneProvider)`, or single
 * tests inside a `describe.each(providers)` with `onceForAll(provider)` in place of `test`. The PostgreSQL suite
 * is for what the database does decide (every room's queries, transactions, locks, replicas), and those tests run
 * on both.
 */
export const oneProvider: Provider[] = ["sqlite"];

const notDefined = (() => {}) as unknown as typeof test;

/** `test` on the first provider, nothing on the others (see oneProvider). */
export function onceForAll(provider: Provider): typeof test {
  return provider === oneProvider[0] ? test : notDefined;
}

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

/** The migrations a template holds, by content: a changed migration makes a new template. */
const migrationsKey = (provider: Provider) =>
  createHash("sha256")
    .update(
      listMigrations(provider)
        .map((m) => `${m.name}:${m.checksum}`)
        .join("\n"),
    )
    .digest("hex")
    .slice(0, 16);

async function migrateAt(url: string): Promise<void> {
  const database = await openDatabase(url, { poolSize: 1 });
  try {
    await migrate(database, () => {});
  } finally {
    await database.close();
  }
}

let sqliteTemplate: Promise<string> | undefined;

/** A migrated SQLite file for this process to copy (closed, so the copy needs no WAL beside it). */
function sqliteTemplateFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const file = join(mkdtempSync(join(tmpdir(), "orchestra-template-")), "orchestra.db");
    await migrateAt(`file:${file}`);
    process.once("exit", () => rmSync(join(file, ".."), { recursive: true, force: true }));
    return file;
  })();
  return sqliteTemplate;
}

let pgTemplate: Promise<string> | undefined;

/**
 * The name of a migrated PostgreSQL database to create test databases from.
 * Made once per server and set of migrations; the jest workers take turns
 * under an advisory lock, and it appears under its name only when complete.
 */
function pgTemplateName(): Promise<string> {
  pgTemplate ??= (async () => {
    const name = `orchestra_tpl_${migrationsKey("postgresql")}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    try {
      await admin.query("SELECT pg_advisory_lock(72707370)");
      const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (found.rowCount === 0) {
        const building = `${name}_${randomBytes(4).toString("hex")}`;
        await admin.query(`CREATE DATABASE ${building}`);
        await migrateAt(withDatabase(pgUrl!, building));
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  return pgTemplate;
}

export async function testDatabase(provider: Provider, opts: { migrated?: boolean } = {}): Promise<TestDb> {
  if (provider === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "orchestra-test-"));
    const file = join(dir, "orchestra.db");
    if (opts.migrated) copyFileSync(await sqliteTemplateFile(), file);
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
  const template = opts.migrated ? await pgTemplateName() : null;
  await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
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
            throw new Error(
              `could not drop ${name}: ${String(err)}; grant pg_signal_backend to the test role (.ci/pg-setup.sh does)`,
            );
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
    current.testDb = await testDatabase(provider, { migrated: true });
    current.database = await openDatabase(current.testDb.url, { poolSize: 2 });
  });
  afterEach(async () => {
    await current.database.close();
    await current.testDb.drop();
  });
  return current;
}
