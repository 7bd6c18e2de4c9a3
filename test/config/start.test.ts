/**
 * The real entry point (dist/src/main.js, built by `npm run build`) against
 * every start-up failure a user can cause: it starts nothing, prints exactly
 * one line on stderr that names the setting (with advice that fits the
 * provider), exits with the code the README documents, and shows no stack
 * trace and no fragment of a secret, whatever characters the password holds.
 */
import { childEnv } from "../support/cli.js";
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../support/orchestra.js";
import { pgUrl } from "../support/databases.js";
import { processUser } from "../../src/config/problem.js";

const main = join(import.meta.dirname, "..", "..", "dist/src/main.js");
const PASSWORD = "hunter2-Sup3r-secret";
/** Passwords holding the characters that used to split a URL differently for the driver and for masking. */
const SLASHED = "Qz7k@Wx9v/Jr4m";
const AT = "Qz7k@Wx9v";
const key = generateKeyPairSync("rsa", { modulusLength: 1024 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();

/**
 * Cases that need a user who may not write what it is given: as root (CI) the
 * service runs as nobody, in a directory root owns; otherwise the test's own
 * user, once the directory's write bit is gone.
 */
const root = process.getuid?.() === 0;
const childUid = root ? 65534 : process.getuid!();

/** Every 4 characters of a secret: none of them may be shown. */
const fragments = (secret: string) =>
  Array.from({ length: Math.max(0, secret.length - 3) }, (_, i) => secret.slice(i, i + 4));

interface Case {
  name: string;
  code: number;
  /** What stderr's one line says, with `<cwd>` for the working directory and `<port>` for PORT. */
  says: string;
  env?: Record<string, string>;
  /** Set up the working directory (and anything else the case needs); the answer is undone afterwards. */
  arrange?: (cwd: string) => Promise<{ env?: Record<string, string>; release?: () => Promise<void> } | void>;
  /** Runs as a user that may not write what `arrange` made read-only. */
  unprivileged?: boolean;
  /** A password none of whose fragments may be shown. */
  secret?: string;
  /** Words that do not fit the provider. */
  never?: string[];
}

async function start(c: Case) {
  // A directory of its own: no .env is read and no ./data is created anywhere that matters.
  const cwd = mkdtempSync(join(tmpdir(), "orchestra-start-"));
  chmodSync(cwd, 0o755);
  const secret = randomBytes(16).toString("hex");
  const admin = randomBytes(32).toString("hex");
  const port = String(await freePort());
  const arranged = (await c.arrange?.(cwd)) ?? {};
  try {
    const env = {
      APP_ID: "1",
      PRIVATE_KEY: key,
      WEBHOOK_SECRET: secret,
      ORCHESTRA_ADMIN_TOKEN: admin,
      PORT: port,
      HOST: "127.0.0.1",
      GHE_HOST: "127.0.0.1:9",
      GHE_PROTOCOL: "http",
      ...c.env,
      ...arranged.env,
    };
    const child = spawnSync(process.execPath, [main], {
      cwd,
      env: childEnv(env),
      encoding: "utf8",
      timeout: 30_000,
      ...(c.unprivileged && root ? { uid: childUid, gid: childUid } : {}),
    });
    return {
      ...child,
      cwd,
      port: env.PORT,
      output: child.stdout + child.stderr,
      secrets: [secret, admin, key.split("\n")[1]!],
    };
  } finally {
    await arranged.release?.();
    // Write bits back, so the directory can be removed by a user who is not root.
    const writable = (dir: string) => {
      chmodSync(dir, 0o755);
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) writable(join(dir, e.name));
    };
    writable(cwd);
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** Holds a port the way another process would. */
async function occupied(): Promise<{ env: Record<string, string>; release: () => Promise<void> }> {
  const server: Server = createServer();
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
  return { env: { PORT: String(port) }, release: () => new Promise((r) => server.close(() => r())) };
}

/** A PostgreSQL URL on the test server with this user information and database, written raw. */
function onTestServer(userinfo: string, database: string): string {
  const u = new URL(pgUrl!);
  return `postgresql://${userinfo}@${u.host}/${database}`;
}

const cases: Case[] = [
  {
    name: "a malformed setting",
    env: { PORT: "http" },
    code: 78,
    says: `PORT must be a TCP port number, e.g. 3000 (got "http")`,
  },
  {
    name: "a private key pasted wrong (it used to start, and fail every call to GitHub)",
    env: { PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nMIIQz7kWx9vJr4mBROKEN\n-----END RSA PRIVATE KEY-----" },
    code: 78,
    says: "PRIVATE_KEY holds a PEM block that is not a readable private key",
    secret: "MIIQz7kWx9vJr4mBROKEN",
  },
  {
    name: "PORT in use by another process",
    arrange: occupied,
    code: 69,
    says: "PORT <port> is in use on 127.0.0.1 (HOST): another process listens there; stop it, or set PORT to a free port",
  },
  {
    name: "HOST not an address of this machine",
    env: { HOST: "192.0.2.1" },
    code: 78,
    says: "HOST 192.0.2.1 is not an address of this machine",
  },
  {
    name: "./data not writable, DATABASE_URL unset",
    unprivileged: true,
    arrange: async (cwd) => chmodSync(cwd, 0o555),
    code: 77,
    says:
      `DATABASE_URL is unset: the embedded SQLite database <cwd>/data/orchestra.db cannot be created: ` +
      `${root ? "user nobody (uid 65534)" : processUser()} may not create files in <cwd>`,
    never: ["server"],
  },
  {
    name: "a SQLite file its user may not write",
    unprivileged: true,
    arrange: async (cwd) => {
      mkdirSync(join(cwd, "data"), { mode: 0o777 });
      chmodSync(join(cwd, "data"), 0o777);
      writeFileSync(join(cwd, "data", "orchestra.db"), "", { mode: 0o444 });
    },
    code: 77,
    says: "DATABASE_URL is unset: the embedded SQLite database <cwd>/data/orchestra.db is not writable by",
    never: ["server"],
  },
  {
    name: "a SQLite path that is a directory",
    arrange: async (cwd) => {
      mkdirSync(join(cwd, "o.db"));
      return { env: { DATABASE_URL: `file:${join(cwd, "o.db")}` } };
    },
    code: 78,
    says: "DATABASE_URL=file:<cwd>/o.db: the SQLite database <cwd>/o.db is a directory",
    never: ["server"],
  },
  {
    name: "a .env the user may not read",
    unprivileged: true,
    arrange: async (cwd) => writeFileSync(join(cwd, ".env"), "PORT=1\n", { mode: 0o000 }),
    code: 77,
    says: ".env in <cwd> cannot be read by",
  },
  {
    name: "no database name",
    env: { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@127.0.0.1:5432` },
    code: 78,
    says:
      `DATABASE_URL must be file:<path> for SQLite or postgresql://user:password@host:5432/database; ` +
      `leave it unset for the embedded database under ./data/ (got "postgresql://orchestra:***@127.0.0.1:5432")`,
    secret: PASSWORD,
  },
  {
    name: "a mistyped scheme",
    env: { DATABASE_URL: `postgresq://orchestra:${PASSWORD}@127.0.0.1:5432/orchestra` },
    code: 78,
    says: `(got "postgresq://orchestra:***@127.0.0.1:5432/orchestra")`,
    secret: PASSWORD,
  },
  {
    name: "a port that is not a number",
    env: { DATABASE_URL: `postgres://u:${PASSWORD}@h:notaport/db` },
    code: 78,
    says: `DATABASE_URL must have a port number from 1 to 65535 after the host, not "notaport" (got "postgres://u:***@h:notaport/db")`,
    secret: PASSWORD,
  },
  {
    name: "a host that is not a URL host",
    env: { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@[zz/orchestra` },
    code: 78,
    says: `DATABASE_URL must be a valid URL`,
    secret: PASSWORD,
  },
  {
    name: "a password holding a raw @ and /, which the driver would cut a host out of",
    env: { DATABASE_URL: `postgresql://orchestra:${SLASHED}@127.0.0.1:5432/orchestra` },
    code: 78,
    says:
      "DATABASE_URL must have / ? # and @ in its user name and password percent-encoded " +
      `(%2F %3F %23 %40, as encodeURIComponent does): as written, part of the password would be read as the host ` +
      `(got "postgresql://orchestra:***@127.0.0.1:5432/orchestra")`,
    secret: SLASHED,
  },
  {
    name: "a password holding a raw @, no server there",
    env: { DATABASE_URL: `postgresql://orchestra:${AT}@127.0.0.1:1/orchestra` },
    code: 69,
    says:
      "DATABASE_URL postgresql://orchestra:***@127.0.0.1:1/orchestra: no PostgreSQL server answers at " +
      "127.0.0.1:1; start it, or correct the host and port in DATABASE_URL",
    secret: AT,
  },
  ...(pgUrl
    ? [
        {
          name: "a password the server refuses, holding a raw @",
          env: { DATABASE_URL: onTestServer(`orchestra:${AT}`, "orchestra_test") },
          code: 78,
          says: "refused the password of user orchestra; correct the user name or password in DATABASE_URL",
          secret: AT,
        },
        {
          name: "a database the server does not have",
          env: { DATABASE_URL: onTestServer(new URL(pgUrl).username + ":" + new URL(pgUrl).password, "no_such_db") },
          code: 78,
          says: "there is no database no_such_db on the PostgreSQL server at",
        },
      ]
    : []),
];

describe("orchestra at start-up, failing for a reason its user can fix", () => {
  test.each(cases.map((c) => [c.name, c] as const))(
    "%s: one line on stderr naming the setting, its exit code, no stack trace, no secret, nothing started",
    async (_name, c) => {
      const child = await start(c);
      const says = c.says.replaceAll("<cwd>", child.cwd).replaceAll("<port>", child.port);
      expect({ code: child.status, stderr: child.stderr }).toEqual({
        code: c.code,
        stderr: expect.stringMatching(/^orchestra: [^\n]+\n$/),
      });
      expect(child.stderr).toContain(says);
      for (const word of c.never ?? []) expect(child.stderr).not.toContain(word);
      expect(child.output).not.toMatch(/^\s+at /m);
      expect(child.output).not.toMatch(/\\n\s+at /);
      expect(child.output).not.toContain("orchestra listening");
      for (const s of child.secrets) expect(child.output).not.toContain(s);
      for (const f of c.secret ? fragments(c.secret) : []) expect(child.output).not.toContain(f);
    },
  );
});
