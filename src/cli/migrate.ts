/**
 * `orchestra migrate`: applies pending migrations to the database of
 * DATABASE_URL (default ./data/orchestra.db). It opens the database itself
 * rather than asking a running service.
 */
import { ConfigError, parseEnv } from "../config/env.js";
import { maskUrl } from "../redact/redact.js";
import { openDatabase } from "../store/db.js";
import { migrate } from "../store/migrate.js";
import { EXIT, die, out } from "./io.js";

export async function migrateCommand(): Promise<void> {
  let url: string | undefined;
  try {
    url = parseEnv({ DATABASE_URL: process.env["DATABASE_URL"] }).databaseUrl;
  } catch (err) {
    if (err instanceof ConfigError) die(EXIT.usage, err.lines.join("; "));
    throw err;
  }
  const where = url ? maskUrl(url) : "./data/orchestra.db";
  const failed =
    (what: string) =>
    (err: unknown): never =>
      die(
        EXIT.failed,
        `${what} ${where} ` +
          `(${(err instanceof Error ? err.message : String(err)).split("\n").filter(Boolean).pop()}); ` +
          `check DATABASE_URL and that the database server is running`,
      );
  const database = await openDatabase(url).catch(failed("database unavailable at"));
  try {
    // The PostgreSQL pool connects on first use: a server that is not there shows up here.
    const report = await migrate(database, (line) => out(`${line}\n`)).catch(failed("migrations failed on"));
    out(
      `migrations: ${report.applied.length} applied, ${report.alreadyApplied} ` +
        `already applied (${database.provider}, ${database.where})\n`,
    );
  } finally {
    await database.close();
  }
}
