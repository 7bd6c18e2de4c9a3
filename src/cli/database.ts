/**
 * The service's database as a CLI command opens it: never created by
 * opening (a SQLite file that is not there is reported, not made empty), one
 * connection, and asked once before anything else, since the PostgreSQL pool
 * connects on first use. Commands word the failures their own way.
 */
import { existsSync } from "node:fs";
import { openDatabase, providerOf, redact, sqlitePath, type Database } from "../store/db.js";
import { select } from "../store/sql.js";

export type Opened =
  | { ok: true; database: Database }
  /** A SQLite file that is not there, at `path`. */
  | { ok: false; problem: "missing"; path: string }
  /** It could not be opened (`url` is masked; null: the default). */
  | { ok: false; problem: "unopenable"; url: string | null; why: string }
  /** It was opened but did not answer. */
  | { ok: false; problem: "unreachable"; where: string; why: string };

/** Opens the database of `url` (default ./data/orchestra.db); the caller closes an opened one. */
export async function openExisting(url: string | undefined): Promise<Opened> {
  if (providerOf(url) === "sqlite") {
    const path = sqlitePath(url);
    if (path !== ":memory:" && !existsSync(path)) return { ok: false, problem: "missing", path };
  }
  let database: Database;
  try {
    database = await openDatabase(url, { poolSize: 1 });
  } catch (err) {
    return { ok: false, problem: "unopenable", url: url ? redact(url) : null, why: reason(err) };
  }
  try {
    await select(database, "SELECT 1 AS ok");
  } catch (err) {
    await database.close();
    return { ok: false, problem: "unreachable", where: database.where, why: reason(err) };
  }
  return { ok: true, database };
}

/** Why a database call failed, in one line: the driver adapter's error kind and its details, or the message. */
export function reason(err: unknown): string {
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause && typeof cause === "object" && typeof (cause as { kind?: unknown }).kind === "string") {
    const { kind, ...rest } = cause as Record<string, unknown>;
    const details = Object.entries(rest)
      .filter(([, v]) => typeof v === "string" || typeof v === "number")
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(", ");
    return details ? `${String(kind)}: ${details}` : String(kind);
  }
  return (
    (err instanceof Error ? err.message : String(err))
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .pop() ?? "unknown error"
  );
}
