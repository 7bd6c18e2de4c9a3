/**
 * Opening the database. One URL decides the provider: no `DATABASE_URL` (or a
 * `file:` URL) is the embedded SQLite file, a `postgres://` URL is PostgreSQL
 * for several replicas. Everything above this file sees one `Db` type.
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { SqlDriverAdapter, SqlDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type { PrismaClient as SqliteClient } from "./generated/sqlite/client.js";
import { startCheckpointer } from "./checkpointer.js";
import { clientOptions } from "./compiler-wasm.js";
import { maskUrl } from "../redact/redact.js";
import type * as SqliteModels from "./generated/sqlite/client.js";
import type * as PgModels from "./generated/postgresql/client.js";

export type Provider = "sqlite" | "postgresql";

/**
 * The client every store module is written against. The two generated clients
 * are not assignable to each other as wholes, but they are generated from one
 * schema (scripts/sync-schemas.mjs, checked by test/store/schemas.test.ts) and
 * their model types are: the checks below fail to compile if they drift.
 */
export type Db = SqliteClient;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const modelsMatch: [
  Same<SqliteModels.Delivery, PgModels.Delivery>,
  Same<SqliteModels.Worker, PgModels.Worker>,
  Same<SqliteModels.Task, PgModels.Task>,
  Same<SqliteModels.Run, PgModels.Run>,
  Same<SqliteModels.CompletionReceipt, PgModels.CompletionReceipt>,
  Same<SqliteModels.Decision, PgModels.Decision>,
  Same<SqliteModels.IdempotentResponse, PgModels.IdempotentResponse>,
  Same<SqliteModels.Effect, PgModels.Effect>,
  Same<SqliteModels.Installation, PgModels.Installation>,
  Same<SqliteModels.TaskLedger, PgModels.TaskLedger>,
  Same<SqliteModels.Counter, PgModels.Counter>,
  Same<SqliteModels.FleetIssue, PgModels.FleetIssue>,
] = [true, true, true, true, true, true, true, true, true, true, true, true];
void modelsMatch;

export interface Database {
  db: Db;
  /**
   * The driver adapter under `db` (same connection or pool), for the one hot
   * path where the client's per-query planning costs more than the write:
   * the batched inbox insert and the fenced apply (store/sql.ts). Everything
   * else goes through `db`.
   */
  raw: SqlDriverAdapter;
  provider: Provider;
  /** Human-readable location without credentials, for logs and /ready. */
  where: string;
  close(): Promise<void>;
}

export const DEFAULT_SQLITE_PATH = "data/orchestra.db";

export function providerOf(url: string | undefined): Provider {
  if (!url || url.startsWith("file:")) return "sqlite";
  if (/^postgres(ql)?:\/\//.test(url)) return "postgresql";
  throw new Error(`unsupported DATABASE_URL scheme: ${url.split(":")[0]}`);
}

/** The SQLite file path a URL names, relative paths against the working directory. */
export function sqlitePath(url: string | undefined, cwd = process.cwd()): string {
  if (!url) return resolve(cwd, DEFAULT_SQLITE_PATH);
  const path = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return path === ":memory:" ? path : resolve(cwd, path);
}

/** The URL as it may be shown: its password masked (see config/redact.ts). */
export const redact = maskUrl;

/**
 * Opens the database the URL names. Only that provider's client and driver
 * are loaded: each generated client costs some 13-16 MB of memory, which a
 * replica on the other provider never needs.
 */
export async function openDatabase(url: string | undefined, opts: { poolSize?: number } = {}): Promise<Database> {
  const provider = providerOf(url);
  if (provider === "sqlite") {
    const [{ PrismaBetterSQLite3 }, { PrismaClient: SqliteClient }] = await Promise.all([
      import("@prisma/adapter-better-sqlite3"),
      import("./generated/sqlite/client.js"),
    ]);
    const path = sqlitePath(url);
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    // busy timeout: a second process (the CLI, a test) may hold the write lock briefly.
    const factory = new PrismaBetterSQLite3({ url: `file:${path}`, timeout: 5000 });
    const raw = await factory.connect();
    const db = new SqliteClient(clientOptions("sqlite", shared(factory, raw)));
    await db.$connect();
    // WAL lets readers (the processor, /ready) run beside the ingest writer;
    // synchronous=NORMAL in WAL mode survives a killed process (only an OS
    // crash can lose the last commits), which is the failure ingest must survive.
    await db.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await db.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
    await db.$queryRawUnsafe("PRAGMA foreign_keys = ON");
    if (path === ":memory:") return { db, raw, provider, where: path, close: () => db.$disconnect() };
    // Checkpoints move to a worker thread (checkpointer.ts); if it fails, the
    // connection takes them back so the WAL cannot grow without bound.
    await db.$queryRawUnsafe("PRAGMA wal_autocheckpoint = 0");
    const checkpointer = startCheckpointer(path, (message) => {
      process.emitWarning(`SQLite checkpoints fell back to the main connection: ${message}`);
      void db.$queryRawUnsafe("PRAGMA wal_autocheckpoint = 1000").catch(() => {});
    });
    return {
      db,
      raw,
      provider,
      where: path,
      close: async () => {
        await checkpointer.stop();
        await db.$disconnect();
      },
    };
  }
  const [{ PrismaPg }, { PrismaClient: PgClient }] = await Promise.all([
    import("@prisma/adapter-pg"),
    import("./generated/postgresql/client.js"),
  ]);
  const factory = new PrismaPg({
    connectionString: url!,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: 5000,
    // A statement queued behind someone else's lock fails after 10 s instead
    // of holding a pooled connection (and the replica's shutdown) forever.
    options: "-c lock_timeout=10000",
  });
  const raw = await factory.connect();
  const pg = new PgClient(clientOptions("postgresql", shared(factory, raw)));
  await pg.$connect();
  return {
    db: pg as unknown as Db,
    raw,
    provider,
    where: redact(url!),
    close: () => pg.$disconnect(),
  };
}

/** A factory that hands the client an adapter that is already connected, so `raw` shares it. */
function shared(factory: SqlDriverAdapterFactory, adapter: SqlDriverAdapter): SqlDriverAdapterFactory {
  return { provider: factory.provider, adapterName: factory.adapterName, connect: () => Promise.resolve(adapter) };
}
