/**
 * Why the database could not be opened or migrated, told as the one line a
 * start-up failure gets: the setting, what is wrong, and advice that fits the
 * provider. SQLite has no server: what goes wrong is a path, and who may
 * write it (the file, and its directory, where SQLite keeps the -wal and -shm
 * files). PostgreSQL is a server: it does not answer, or it refuses the
 * user, the password or the database the URL names.
 *
 * The facts are gathered first (sqliteFacts reads the file system) and the
 * line is decided from them by pure functions. Nothing here prints text the
 * driver derived from the URL's user information: the host, port, user and
 * database come from the URL, parsed the way the driver parses it, and
 * config/database-url.ts refuses any URL the two would read differently.
 */
import { accessSync, constants, statSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import type { StartupProblem } from "../config/problem.js";
import { maskUrl } from "../redact/redact.js";
import { sqlitePath } from "./db.js";

/** What the file system says about a SQLite database's path, as this process sees it. */
export interface SqliteFacts {
  path: string;
  file: "missing" | "file" | "directory";
  /** The file is there and this process may read and write it. */
  fileWritable: boolean;
  /** The nearest directory on the way to the file that exists: the file's own directory when it exists. */
  dir: string;
  /** This process may create files in `dir`. */
  dirWritable: boolean;
  /** A component of the path that is a file where a directory should be. */
  notADirectory: string | null;
  /** Owner and mode of what cannot be written, e.g. `owned by uid 0, mode 755`. */
  owner: { file: string; dir: string };
}

const describe = (s: Stats | null): string =>
  s ? `owned by uid ${s.uid}, mode ${(s.mode & 0o777).toString(8).padStart(3, "0")}` : "";

function stat(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function may(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

export function sqliteFacts(path: string): SqliteFacts {
  const s = stat(path);
  let dir = dirname(path);
  let notADirectory: string | null = null;
  for (;;) {
    const d = stat(dir);
    if (d && !d.isDirectory()) notADirectory = dir;
    if ((d && d.isDirectory()) || dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  return {
    path,
    file: !s ? "missing" : s.isDirectory() ? "directory" : "file",
    fileWritable: Boolean(s) && may(path, constants.R_OK | constants.W_OK),
    dir,
    dirWritable: may(dir, constants.W_OK | constants.X_OK),
    notADirectory,
    owner: { file: describe(s), dir: describe(stat(dir)) },
  };
}

/** The driver's or the file system's error code: `EACCES`, `SQLITE_READONLY`, … */
const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
};

/** The last non-empty line of an error's message: Prisma puts the reason there. */
export function lastLine(err: unknown): string {
  return (
    (err instanceof Error ? err.message : String(err))
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .pop() ?? "unknown error"
  );
}

const CANNOT_WRITE = new Set(["EACCES", "EPERM", "EROFS", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM"]);

/** The line for a SQLite database that failed to open or migrate (`url` undefined: the default under ./data). */
export function sqliteProblem(
  url: string | undefined,
  facts: SqliteFacts,
  err: { code: string | undefined; why: string },
  user: string,
): StartupProblem {
  const { path, dir } = facts;
  const db =
    url === undefined
      ? `DATABASE_URL is unset: the embedded SQLite database ${path}`
      : `DATABASE_URL=${maskUrl(url)}: the SQLite database ${path}`;
  const elsewhere =
    url === undefined
      ? "start the service from a directory it can write (./data is relative to it), or set DATABASE_URL=file:<path>"
      : "or set DATABASE_URL=file:<a path it can write>";
  if (facts.file === "directory")
    return { kind: "config", line: `${db} is a directory; set DATABASE_URL=file:<path of a file in it>` };
  if (facts.notADirectory)
    return {
      kind: "config",
      line: `${db} cannot be created: ${facts.notADirectory} is a file, not a directory; set DATABASE_URL=file:<path>`,
    };
  if (facts.file === "file" && !facts.fileWritable)
    return {
      kind: "permission",
      line:
        `${db} is not writable by ${user} (${facts.owner.file}): ` +
        `make it readable and writable for that user, or run the service as its owner`,
    };
  if (!facts.dirWritable) {
    const needs = facts.file === "file" ? "needs its -wal and -shm files beside it, but" : "cannot be created:";
    return {
      kind: "permission",
      line:
        `${db} ${needs} ${user} may not create files in ${dir} (${facts.owner.dir}); ` +
        `make ${dir} writable for that user, ${elsewhere}`,
    };
  }
  if (err.code === "EROFS") return { kind: "permission", line: `${db} is on a read-only file system; ${elsewhere}` };
  if (err.code && CANNOT_WRITE.has(err.code))
    return { kind: "permission", line: `${db} cannot be written by ${user} (${err.why}); ${elsewhere}` };
  if (err.code === "SQLITE_NOTADB" || err.code === "SQLITE_CORRUPT")
    return {
      kind: "config",
      line:
        `${db} cannot be read as a SQLite database (${err.why}): it is another kind of file, or damaged; ` +
        `point DATABASE_URL at Orchestra's database, or at a path that does not exist yet for a new one`,
    };
  if (err.code === "SQLITE_FULL" || err.code === "ENOSPC")
    return { kind: "unavailable", line: `${db} cannot be written: the disk holding ${dir} is full` };
  return { kind: "unavailable", line: `${db} cannot be opened (${err.why})` };
}

/** Where a PostgreSQL URL points, parsed as the driver parses it (config/database-url.ts has refused the rest). */
function target(url: string): { at: string; user: string; database: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    u = new URL(url.replace("@/", "@localhost/"));
  }
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return {
    at: `${u.hostname || "localhost"}:${u.port || "5432"}`,
    user: decode(u.username) || "(the default user)",
    database: decode(u.pathname.slice(1)),
  };
}

/** The driver adapter's classification of a PostgreSQL error (`kind`, and the server's SQLSTATE as `code`). */
function causeOf(err: unknown): { kind?: string; code?: string; originalCode?: string } {
  const e = err as { meta?: { driverAdapterError?: { cause?: unknown } }; cause?: unknown } | null;
  const cause = e?.meta?.driverAdapterError?.cause ?? e?.cause;
  return cause && typeof cause === "object" ? cause : {};
}

/** The line for a PostgreSQL database that failed to open or migrate. */
export function postgresProblem(url: string, err: unknown): StartupProblem {
  const { at, user, database } = target(url);
  const db = `DATABASE_URL ${maskUrl(url)}`;
  const cause = causeOf(err);
  const sqlstate = cause.originalCode ?? cause.code;
  switch (cause.kind ?? "") {
    case "DatabaseNotReachable":
      return {
        kind: "unavailable",
        line: `${db}: no PostgreSQL server answers at ${at}; start it, or correct the host and port in DATABASE_URL`,
      };
    case "AuthenticationFailed":
      return {
        kind: "config",
        line:
          `${db}: the PostgreSQL server at ${at} refused the password of user ${user}; correct the user name or ` +
          `password in DATABASE_URL (percent-encoded: %40 for @, %3A for :, %2F for /)`,
      };
    case "DatabaseDoesNotExist":
      return {
        kind: "config",
        line:
          `${db}: there is no database ${database} on the PostgreSQL server at ${at}; ` +
          `create it (createdb) or correct its name`,
      };
    case "DatabaseAccessDenied":
      return {
        kind: "config",
        line:
          `${db}: the PostgreSQL server at ${at} does not let user ${user} connect to database ${database}; ` +
          `grant it CONNECT, or check the server's pg_hba.conf`,
      };
    case "TlsConnectionError":
      return {
        kind: "config",
        line: `${db}: TLS with the PostgreSQL server at ${at} failed (${lastLine(err)}); check sslmode in DATABASE_URL`,
      };
    case "TooManyConnections":
      return {
        kind: "unavailable",
        line: `${db}: the PostgreSQL server at ${at} has no connection left; try again, or raise its max_connections`,
      };
  }
  if (sqlstate === "42501")
    return {
      kind: "permission",
      line:
        `${db}: user ${user} may not create Orchestra's tables in database ${database} (${lastLine(err)}); ` +
        `grant it CREATE on the schema, or let the owner run orchestra migrate`,
    };
  return {
    kind: "unavailable",
    line: `${db}: the PostgreSQL server at ${at} did not answer as expected (${lastLine(err)}); check that it is up`,
  };
}

/** The line for a database that failed to open or migrate, with the facts it needs gathered. */
export function databaseProblem(url: string | undefined, err: unknown, user: string): StartupProblem {
  if (url !== undefined && !url.startsWith("file:")) return postgresProblem(url, err);
  const path = sqlitePath(url);
  return sqliteProblem(url, sqliteFacts(path), { code: codeOf(err), why: lastLine(err) }, user);
}
