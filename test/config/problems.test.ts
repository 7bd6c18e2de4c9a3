/**
 * How start-up failures are told, table by table: DATABASE_URL as the driver
 * would read it, a SQLite path from the file system's facts, a PostgreSQL
 * error from the driver adapter's classification, a failed listen from its
 * code. Each becomes one line naming the setting and a kind (the exit code);
 * the real process runs every kind end to end in start.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseUrlProblem } from "../../src/config/database-url.js";
import { postgresProblem, sqliteFacts, sqliteProblem, type SqliteFacts } from "../../src/store/problems.js";
import { listenProblem } from "../../src/app/listen.js";

describe("databaseUrlProblem", () => {
  test.each<[string, string, RegExp | null]>([
    ["PostgreSQL", "postgresql://u:p@db:5432/orchestra", null],
    ["postgres:// and a query", "postgres://u@db/orchestra?sslmode=require", null],
    ["a password holding a raw @ (the last @ before the path ends the password)", "postgresql://u:a@b@db/o", null],
    ["a password holding escaped / ? # @", "postgresql://u:a%2Fb%3Fc%23d%40e@db:5432/o", null],
    ["a password holding a raw : and a malformed escape", "postgresql://u:a:b%zz@db/o", null],
    ["an IPv6 host", "postgresql://u:p@[::1]:5432/o", null],
    ["no host (the driver's default host)", "postgresql://u:p@/o", null],
    ["SQLite", "file:/var/lib/orchestra/o.db", null],
    ["file: and nothing", "file:", /^must name a file after file:$/],
    ["another scheme", "mysql://u:p@db/o", /^must be file:<path> for SQLite or postgresql:\/\//],
    ["no database", "postgresql://u:p@db:5432", /^must be file:<path>/],
    ["a port that is not a number", "postgres://u:pw@h:notaport/db", /^must have a port number .*, not "notaport"$/],
    ["port 0", "postgres://u:pw@h:0/db", /^must have a port number from 1 to 65535 after the host, not "0"$/],
    ["a port past 65535", "postgres://u:pw@h:70000/db", /not "70000"$/],
    [
      "a raw / in the password",
      "postgresql://u:Hk7q@Zr9x/Pw3m@127.0.0.1:5432/o",
      /percent-encoded .* read as the host$/,
    ],
    ["a raw # in the password", "postgresql://u:Hk7q#Zr9x@127.0.0.1:5432/o", /percent-encoded/],
    ["a raw ? in the password", "postgresql://u:Hk7q?Zr9x@127.0.0.1:5432/o", /percent-encoded/],
    ["a password that reads as a port", "postgresql://u:12/Zr9x@127.0.0.1:5432/o", /percent-encoded/],
    ["a host that is not a host", "postgresql://u:p@[zz/o", /^must be a valid URL/],
  ])("%s: %s", (_name, url, problem) => {
    const got = databaseUrlProblem(url);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });
});

describe("sqliteProblem", () => {
  const base: SqliteFacts = {
    path: "/srv/o/data/orchestra.db",
    file: "missing",
    fileWritable: false,
    dir: "/srv/o/data",
    dirWritable: true,
    notADirectory: null,
    owner: { file: "", dir: "owned by uid 0, mode 755" },
  };
  const user = "user nobody (uid 65534)";
  test.each<[string, string | undefined, Partial<SqliteFacts>, string | undefined, string, string]>([
    [
      "./data cannot be created",
      undefined,
      { dir: "/srv/o", dirWritable: false },
      "EACCES",
      "permission",
      "DATABASE_URL is unset: the embedded SQLite database /srv/o/data/orchestra.db cannot be created: " +
        "user nobody (uid 65534) may not create files in /srv/o (owned by uid 0, mode 755); make /srv/o writable " +
        "for that user, start the service from a directory it can write (./data is relative to it), or set " +
        "DATABASE_URL=file:<path>",
    ],
    [
      "a read-only file",
      "file:/srv/o/data/orchestra.db",
      { file: "file", fileWritable: false, owner: { file: "owned by uid 0, mode 444", dir: "" } },
      "SQLITE_READONLY",
      "permission",
      "DATABASE_URL=file:/srv/o/data/orchestra.db: the SQLite database /srv/o/data/orchestra.db is not writable " +
        "by user nobody (uid 65534) (owned by uid 0, mode 444): make it readable and writable for that user, or " +
        "run the service as its owner",
    ],
    [
      "a writable file in a directory that is not",
      undefined,
      { file: "file", fileWritable: true, dirWritable: false },
      "SQLITE_CANTOPEN",
      "permission",
      "DATABASE_URL is unset: the embedded SQLite database /srv/o/data/orchestra.db needs its -wal and -shm files " +
        "beside it, but user nobody (uid 65534) may not create files in /srv/o/data (owned by uid 0, mode 755); " +
        "make /srv/o/data writable for that user, start the service from a directory it can write (./data is " +
        "relative to it), or set DATABASE_URL=file:<path>",
    ],
    [
      "a directory",
      "file:/srv/o/data/orchestra.db",
      { file: "directory" },
      "SQLITE_CANTOPEN",
      "config",
      "DATABASE_URL=file:/srv/o/data/orchestra.db: the SQLite database /srv/o/data/orchestra.db is a directory; " +
        "set DATABASE_URL=file:<path of a file in it>",
    ],
    [
      "a file where a directory should be",
      "file:/srv/o/data/orchestra.db",
      { dir: "/srv", notADirectory: "/srv/o" },
      "ENOTDIR",
      "config",
      "DATABASE_URL=file:/srv/o/data/orchestra.db: the SQLite database /srv/o/data/orchestra.db cannot be created: " +
        "/srv/o is a file, not a directory; set DATABASE_URL=file:<path>",
    ],
    [
      "not a database",
      "file:/srv/o/data/orchestra.db",
      { file: "file", fileWritable: true },
      "SQLITE_NOTADB",
      "config",
      "DATABASE_URL=file:/srv/o/data/orchestra.db: the SQLite database /srv/o/data/orchestra.db cannot be read as " +
        "a SQLite database (why): it is another kind of file, or damaged; point DATABASE_URL at Orchestra's " +
        "database, or at a path that does not exist yet for a new one",
    ],
    [
      "a read-only file system (root may write anywhere else)",
      undefined,
      { file: "file", fileWritable: true },
      "EROFS",
      "permission",
      "DATABASE_URL is unset: the embedded SQLite database /srv/o/data/orchestra.db is on a read-only file system; " +
        "start the service from a directory it can write (./data is relative to it), or set DATABASE_URL=file:<path>",
    ],
    [
      "a full disk",
      undefined,
      { file: "file", fileWritable: true },
      "SQLITE_FULL",
      "unavailable",
      "DATABASE_URL is unset: the embedded SQLite database /srv/o/data/orchestra.db cannot be written: " +
        "the disk holding /srv/o/data is full",
    ],
    [
      "anything else",
      undefined,
      { file: "file", fileWritable: true },
      "SQLITE_IOERR",
      "unavailable",
      "DATABASE_URL is unset: the embedded SQLite database /srv/o/data/orchestra.db cannot be opened (why)",
    ],
  ])("%s", (_name, url, facts, code, kind, line) => {
    const problem = sqliteProblem(url, { ...base, ...facts }, { code, why: "why" }, user);
    expect(problem).toEqual({ kind, line });
    expect(line).not.toMatch(/server/);
  });

  test("the facts, from the file system", () => {
    const dir = mkdtempSync(join(tmpdir(), "orchestra-facts-"));
    try {
      writeFileSync(join(dir, "f"), "");
      mkdirSync(join(dir, "d"));
      expect(sqliteFacts(join(dir, "new", "deeper", "o.db"))).toMatchObject({
        file: "missing",
        dir,
        dirWritable: true,
        notADirectory: null,
      });
      expect(sqliteFacts(join(dir, "f"))).toMatchObject({ file: "file", fileWritable: true, dir });
      expect(sqliteFacts(join(dir, "d"))).toMatchObject({ file: "directory", dir });
      expect(sqliteFacts(join(dir, "f", "x", "o.db"))).toMatchObject({
        file: "missing",
        notADirectory: join(dir, "f"),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("postgresProblem", () => {
  // As Prisma raises them: the driver adapter's classification under meta.driverAdapterError.cause.
  const adapter = (cause: Record<string, unknown>, message: string) =>
    Object.assign(new Error(message), { meta: { driverAdapterError: { cause } } });
  const url = "postgresql://orchestra:Qz7k%40Wx9v@db.internal:6543/orchestra";
  const shown = "DATABASE_URL postgresql://orchestra:***@db.internal:6543/orchestra";
  test.each<[string, unknown, string, string]>([
    [
      "no server",
      adapter({ kind: "DatabaseNotReachable", host: "db.internal", port: 6543 }, "Can't reach database server"),
      "unavailable",
      `${shown}: no PostgreSQL server answers at db.internal:6543; start it, or correct the host and port in DATABASE_URL`,
    ],
    [
      "a wrong password",
      adapter({ kind: "AuthenticationFailed", user: "orchestra" }, "Authentication failed"),
      "config",
      `${shown}: the PostgreSQL server at db.internal:6543 refused the password of user orchestra; correct the user ` +
        `name or password in DATABASE_URL (percent-encoded: %40 for @, %3A for :, %2F for /)`,
    ],
    [
      "no such database",
      adapter({ kind: "DatabaseDoesNotExist", db: "orchestra" }, "Database does not exist"),
      "config",
      `${shown}: there is no database orchestra on the PostgreSQL server at db.internal:6543; create it (createdb) ` +
        `or correct its name`,
    ],
    [
      "not allowed to connect",
      adapter({ kind: "DatabaseAccessDenied", db: "orchestra" }, "denied"),
      "config",
      `${shown}: the PostgreSQL server at db.internal:6543 does not let user orchestra connect to database ` +
        `orchestra; grant it CONNECT, or check the server's pg_hba.conf`,
    ],
    [
      "may not create tables",
      adapter(
        { kind: "postgres", code: "42501", message: "permission denied for schema public" },
        "x\n\npermission denied for schema public",
      ),
      "permission",
      `${shown}: user orchestra may not create Orchestra's tables in database orchestra (permission denied for ` +
        `schema public); grant it CREATE on the schema, or let the owner run orchestra migrate`,
    ],
    [
      "a dropped connection (the driver's own error, unclassified)",
      new Error("Connection terminated unexpectedly"),
      "unavailable",
      `${shown}: the PostgreSQL server at db.internal:6543 did not answer as expected (Connection terminated ` +
        `unexpectedly); check that it is up`,
    ],
  ])("%s", (_name, err, kind, line) => {
    expect(postgresProblem(url, err)).toEqual({ kind, line });
  });

  test("the default port and host", () => {
    const err = adapter({ kind: "DatabaseNotReachable" }, "x");
    expect(postgresProblem("postgresql://u:p@db/o", err).line).toContain("no PostgreSQL server answers at db:5432;");
    expect(postgresProblem("postgresql://u:p@/o", err).line).toContain("answers at localhost:5432;");
  });
});

describe("listenProblem", () => {
  const at = { host: "127.0.0.1", port: 80 };
  const err = (code: string) => Object.assign(new Error(code), { code, syscall: "listen" });
  test.each<[string, string, RegExp]>([
    ["EADDRINUSE", "unavailable", /^PORT 80 is in use on 127\.0\.0\.1 \(HOST\): another process listens there/],
    ["EACCES", "permission", /^PORT 80 on 127\.0\.0\.1 \(HOST\) may not be bound by user nobody \(uid 65534\)/],
    ["EADDRNOTAVAIL", "config", /^HOST 127\.0\.0\.1 is not an address of this machine/],
    ["ENOTFOUND", "config", /^HOST 127\.0\.0\.1 does not resolve to an address/],
    ["EMFILE", "unavailable", /^PORT 80 on 127\.0\.0\.1 \(HOST\) cannot be listened on \(EMFILE\)$/],
  ])("%s", (code, kind, line) => {
    const problem = listenProblem(err(code), at, "user nobody (uid 65534)");
    expect(problem.kind).toBe(kind);
    expect(problem.line).toMatch(line);
  });
});
