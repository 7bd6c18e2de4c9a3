/**
 * Applies the committed migrations in `prisma/<provider>/migrations/` at
 * start-up. The bookkeeping table is Prisma's own `_prisma_migrations`, with
 * the same columns and checksums, so `prisma migrate status` and a later
 * `prisma migrate deploy` agree with what ran here.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Database, Db } from "./db.js";
import { packageRoot } from "../paths.js";

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** Prisma's advisory lock key for migrations, so a CLI deploy and a replica never interleave. */
const PG_MIGRATION_LOCK = 72707369;

export function listMigrations(provider: Database["provider"]): Migration[] {
  const dir = join(packageRoot(), "prisma", provider, "migrations");
  if (!existsSync(dir)) throw new Error(`migrations folder missing: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Splits a generated migration into statements. Prisma's generated DDL never
 * carries a semicolon inside a statement body, and both drivers prepare one
 * statement at a time.
 */
export function statements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\r?\n|$)/)
    .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
    .filter((s) => s.length > 0);
}

const BOOKKEEPING: Record<Database["provider"], string> = {
  sqlite: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
    "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
    "started_at" DATETIME NOT NULL DEFAULT current_timestamp,\
 "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`,
  postgresql: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
    "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
    "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`,
};

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
}

async function applied(db: Pick<Db, "$queryRawUnsafe">): Promise<AppliedRow[]> {
  return db.$queryRawUnsafe<AppliedRow[]>(
    `SELECT "migration_name", "checksum", "finished_at" FROM "_prisma_migrations" WHERE "rolled_back_at" IS NULL`,
  );
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: number;
  modified: string[];
}

export async function migrate(
  database: Database,
  log: (line: string) => void = () => {},
  opts: { through?: string } = {},
): Promise<MigrationReport> {
  const { db, provider } = database;
  // `through`: stop after this migration (tests of data migrations start from an older schema).
  const all = listMigrations(provider).filter((m) => opts.through === undefined || m.name <= opts.through);
  const run = async (tx: Pick<Db, "$queryRawUnsafe" | "$executeRawUnsafe">): Promise<MigrationReport> => {
    if (provider === "postgresql") {
      // Another replica may be migrating: wait for it as long as it takes.
      await tx.$executeRawUnsafe("SET LOCAL lock_timeout = 0");
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${PG_MIGRATION_LOCK})`);
    }
    await tx.$executeRawUnsafe(BOOKKEEPING[provider]);
    const done = await applied(tx);
    const byName = new Map(done.map((r) => [r.migration_name, r]));
    const report: MigrationReport = { applied: [], alreadyApplied: 0, modified: [] };
    for (const m of all) {
      const row = byName.get(m.name);
      if (row && row.finished_at !== null) {
        report.alreadyApplied++;
        if (row.checksum !== m.checksum) report.modified.push(m.name);
        continue;
      }
      if (row)
        throw new Error(
          `migration ${m.name} started earlier and never finished; ` +
            `inspect the database, then delete its row from _prisma_migrations`,
        );
      log(`applying migration ${m.name}`);
      const steps = statements(m.sql);
      for (const s of steps) await tx.$executeRawUnsafe(s);
      const now = new Date().toISOString();
      const marks = provider === "sqlite" ? "?,?,?,?,NULL,?,?" : "$1,$2,$3,$4,NULL,$5,$6";
      await tx.$executeRawUnsafe(
        `INSERT INTO "_prisma_migrations" ("id","checksum","finished_at",` +
          `"migration_name","logs","started_at","applied_steps_count") VALUES (${marks})`,
        ...(provider === "sqlite"
          ? [randomUUID(), m.checksum, now, m.name, now, steps.length]
          : [randomUUID(), m.checksum, new Date(now), m.name, new Date(now), steps.length]),
      );
      report.applied.push(m.name);
    }
    return report;
  };
  // One transaction: a crash mid-migration leaves the previous schema, not half of one.
  const report = await db.$transaction((tx) => run(tx), { timeout: 120_000, maxWait: 60_000 });
  for (const name of report.modified) log(`warning: migration ${name} was changed after it was applied`);
  return report;
}

/** Names of the committed migrations, without reading them (readiness lists them once, at start-up). */
export function migrationNames(provider: Database["provider"]): string[] {
  const dir = join(packageRoot(), "prisma", provider, "migrations");
  if (!existsSync(dir)) throw new Error(`migrations folder missing: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/** Which of `committed` the database has not applied: one query. */
export async function pendingOf(database: Pick<Database, "db">, committed: readonly string[]): Promise<string[]> {
  let done: AppliedRow[];
  try {
    done = await applied(database.db);
  } catch (err) {
    // No bookkeeping table yet means nothing is applied; any other error is not "pending".
    if (/_prisma_migrations|no such table|does not exist/i.test(String(err))) return [...committed];
    throw err;
  }
  const finished = new Set(done.filter((r) => r.finished_at !== null).map((r) => r.migration_name));
  return committed.filter((name) => !finished.has(name));
}
