/**
 * Atomic lists of SQL statements on the driver adapter under the Prisma
 * client, for the hot write path (the fenced apply): Prisma's per-query
 * planning costs more CPU than these statements themselves.
 *
 * Each step may check what its statement did (rows changed, rows read) and
 * name a reason to give up; then nothing of the list is kept. On SQLite the
 * list runs synchronously inside one better-sqlite3 transaction on the
 * service's one connection, so no other query can interleave with it (an
 * asynchronous BEGIN … COMMIT on a shared connection would let other
 * requests' statements join — and roll back with — the transaction). On
 * PostgreSQL it runs on a pooled connection of its own.
 *
 * Statements use `?` placeholders; values are converted the way Prisma's
 * adapters convert them, so rows written here read back through the client
 * unchanged.
 */
import type { ArgType, SqlDriverAdapter, SqlQueryable } from "@prisma/driver-adapter-utils";
import type { Database } from "./db.js";

export interface StepResult {
  changes: number;
  rows: Record<string, unknown>[];
}

export interface Step {
  sql: string;
  args: unknown[];
  /** A reason to give the whole list up, or null to go on. */
  check?: (r: StepResult) => string | null;
}

/** A step's check gave up: nothing of the list was written. */
export class StepRefused extends Error {
  override readonly name = "StepRefused";
  constructor(readonly reason: string) {
    super(reason);
  }
}

export function argType(v: unknown): ArgType {
  const scalarType =
    typeof v === "number"
      ? Number.isInteger(v)
        ? "int"
        : "float"
      : typeof v === "bigint"
        ? "bigint"
        : typeof v === "boolean"
          ? "boolean"
          : v instanceof Date
            ? "datetime"
            : v === null || v === undefined
              ? "unknown"
              : "string";
  return { scalarType, arity: "scalar" };
}

/** `?` placeholders as PostgreSQL wants them. */
export function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** A value as the SQLite adapter binds it (dates as ISO-8601 with an explicit offset, booleans as 0/1). */
function sqliteValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString().replace("Z", "+00:00");
  return v;
}

interface NativeStatement {
  reader: boolean;
  all(...args: unknown[]): Record<string, unknown>[];
  run(...args: unknown[]): { changes: number };
}
interface NativeSqlite {
  prepare(sql: string): NativeStatement;
  transaction(fn: () => void): () => void;
}

const prepared = new WeakMap<NativeSqlite, Map<string, NativeStatement>>();

/** The better-sqlite3 connection behind the adapter (the same one the client uses). */
function nativeSqlite(raw: SqlDriverAdapter): NativeSqlite {
  const client = (raw as unknown as { client?: NativeSqlite }).client;
  if (!client || typeof client.transaction !== "function")
    throw new Error(
      "the SQLite adapter does not expose its connection; check the pinned @prisma/adapter-better-sqlite3 version",
    );
  return client;
}

/** A statement prepared once per connection and kept. */
function statementOf(db: NativeSqlite, sql: string): NativeStatement {
  let cache = prepared.get(db);
  if (!cache) prepared.set(db, (cache = new Map<string, NativeStatement>()));
  let s = cache.get(sql);
  if (!s) cache.set(sql, (s = db.prepare(sql)));
  return s;
}

function runSqlite(raw: SqlDriverAdapter, steps: Step[]): void {
  const db = nativeSqlite(raw);
  const statement = (sql: string) => statementOf(db, sql);
  db.transaction(() => {
    for (const step of steps) {
      const s = statement(step.sql);
      const args = step.args.map(sqliteValue);
      const result: StepResult = s.reader
        ? { changes: 0, rows: s.all(...args) }
        : { changes: s.run(...args).changes, rows: [] };
      const why = step.check?.(result);
      if (why) throw new StepRefused(why);
    }
  })();
}

/**
 * SQLite only: runs one prepared statement once per row of `rows`, in one
 * transaction, and answers each row's change count. The statement is
 * prepared once per connection, whatever the number of rows, which is what
 * makes a batched insert cheap (SQL that grows with the batch would be parsed
 * and planned again for every batch size).
 */
export function eachRowSqlite(raw: SqlDriverAdapter, sql: string, rows: unknown[][]): number[] {
  const db = nativeSqlite(raw);
  const s = statementOf(db, sql);
  const changes: number[] = [];
  db.transaction(() => {
    for (const row of rows) changes.push(s.run(...row.map(sqliteValue)).changes);
  })();
  return changes;
}

async function runOn(q: SqlQueryable, step: Step): Promise<StepResult> {
  const query = {
    sql: numbered(step.sql),
    args: step.args.map((a) => (a === undefined ? null : a)),
    argTypes: step.args.map(argType),
  };
  if (/^\s*(SELECT|WITH|EXPLAIN)\b/i.test(step.sql)) {
    const r = await q.queryRaw(query);
    return { changes: 0, rows: r.rows.map((row) => Object.fromEntries(r.columnNames.map((c, i) => [c, row[i]]))) };
  }
  return { changes: await q.executeRaw(query), rows: [] };
}

async function runPostgres(raw: SqlDriverAdapter, steps: Step[]): Promise<void> {
  const tx = await raw.startTransaction();
  const none = { args: [], argTypes: [] };
  try {
    for (const step of steps) {
      // Run first: `check?.(await …)` would skip the statement itself when there is no check.
      const result = await runOn(tx, step);
      const why = step.check?.(result);
      if (why) throw new StepRefused(why);
    }
  } catch (err) {
    try {
      await tx.executeRaw({ sql: "ROLLBACK", ...none });
    } finally {
      await tx.rollback();
    }
    throw err;
  }
  try {
    await tx.executeRaw({ sql: "COMMIT", ...none });
  } catch (err) {
    await tx.rollback();
    throw err;
  }
  await tx.commit();
}

/**
 * A read on the hot path, without Prisma's planning. Columns come back as
 * the database stores them: use `dateOf` for date-time columns.
 */
export async function select(
  database: Pick<Database, "raw" | "provider">,
  sql: string,
  args: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  if (database.provider === "sqlite") return statementOf(nativeSqlite(database.raw), sql).all(...args.map(sqliteValue));
  return (await runOn(database.raw, { sql, args })).rows;
}

/** A date-time column read by `select`: SQLite's ISO text with an offset, or PostgreSQL's UTC timestamp text. */
export function dateOf(v: unknown): Date | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v;
  if (typeof v === "number") return new Date(v);
  const text = typeof v === "string" ? v : JSON.stringify(v);
  // timestamp(3) without a zone is UTC in this schema.
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(" ", "T")}Z`);
}

/** Runs the steps in one transaction: all of them, or (on a refused check or an error) none. */
export async function atomically(database: Pick<Database, "raw" | "provider">, steps: Step[]): Promise<void> {
  if (database.provider === "sqlite") runSqlite(database.raw, steps);
  else await runPostgres(database.raw, steps);
}

/** A unique index refused the row (a concurrent writer inserted the same key first). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { kind?: string; originalCode?: string } } | null;
  return (
    e?.code === "P2002" ||
    e?.code === "SQLITE_CONSTRAINT_UNIQUE" ||
    e?.code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    e?.cause?.kind === "UniqueConstraintViolation" ||
    e?.cause?.originalCode === "23505"
  );
}
