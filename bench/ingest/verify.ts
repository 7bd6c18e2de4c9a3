// After a run against Orchestra, compare what it acknowledged with what it
// stored. The schema is not read from Orchestra's source: all this relies on
// is the contract that each delivery is one row of "Delivery" keyed by
// "deliveryId".
import Database from "better-sqlite3";
import pg from "pg";

export interface StoreCheck {
  database: "sqlite" | "postgresql";
  /** Rows in "Delivery" that this run added (all rows for a fresh SQLite file). */
  storedRows: number;
  /** Deliveries the server acknowledged with a 2xx during the run. */
  acked: number;
  /** Acknowledged deliveries that are not in the store: must be 0. */
  ackedMissing: number;
  /** Stored rows beyond the acknowledged ones (e.g. a timed-out request that did land). */
  extraRows: number;
  error?: string;
}

export function sqlitePath(databaseUrl: string): string {
  return databaseUrl.replace(/^file:/, "").replace(/\?.*$/, "");
}

export function checkSqlite(file: string, ackedIds: string[]): StoreCheck {
  const base = { database: "sqlite" as const, acked: ackedIds.length };
  let db: Database.Database | undefined;
  try {
    // Opened read-write: after a kill the WAL may need recovering, which a
    // read-only handle cannot do.
    db = new Database(file, { fileMustExist: true });
    const { n } = db.prepare(`SELECT count(*) AS n FROM "Delivery"`).get() as { n: number };
    const stored = new Set(
      (db.prepare(`SELECT "deliveryId" AS id FROM "Delivery"`).all() as { id: string }[]).map((r) => r.id),
    );
    const missing = ackedIds.filter((id) => !stored.has(id)).length;
    return { ...base, storedRows: n, ackedMissing: missing, extraRows: n - (ackedIds.length - missing) };
  } catch (e) {
    return { ...base, storedRows: NaN, ackedMissing: NaN, extraRows: NaN, error: (e as Error).message };
  } finally {
    db?.close();
  }
}

async function withPg<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, statement_timeout: 60_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Rows before the run, so a shared PostgreSQL database can be reused. */
export async function pgRowCount(url: string): Promise<number> {
  try {
    return await withPg(url, async (c) => Number((await c.query(`SELECT count(*) AS n FROM "Delivery"`)).rows[0].n));
  } catch {
    // Before Orchestra's first start the table may not exist yet.
    return 0;
  }
}

export async function checkPostgres(url: string, rowsBefore: number, ackedIds: string[]): Promise<StoreCheck> {
  const base = { database: "postgresql" as const, acked: ackedIds.length };
  try {
    return await withPg(url, async (c) => {
      const n = Number((await c.query(`SELECT count(*) AS n FROM "Delivery"`)).rows[0].n) - rowsBefore;
      let found = 0;
      for (let i = 0; i < ackedIds.length; i += 5000) {
        const slice = ackedIds.slice(i, i + 5000);
        const r = await c.query(`SELECT count(*) AS n FROM "Delivery" WHERE "deliveryId" = ANY($1::text[])`, [slice]);
        found += Number(r.rows[0].n);
      }
      const missing = ackedIds.length - found;
      return { ...base, storedRows: n, ackedMissing: missing, extraRows: n - found };
    });
  } catch (e) {
    return { ...base, storedRows: NaN, ackedMissing: NaN, extraRows: NaN, error: (e as Error).message };
  }
}
