/**
 * The real entry point (dist/src/main.js, built by `npm run build`) with a bad
 * DATABASE_URL: it starts nothing, exits with a configuration or database
 * code, and what it prints names the setting with the password masked.
 */
import { childEnv } from "../support/cli.js";
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../support/orchestra.js";

const main = join(import.meta.dirname, "..", "..", "dist/src/main.js");
const PASSWORD = "hunter2-Sup3r-secret";
const key = generateKeyPairSync("rsa", { modulusLength: 1024 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();

async function start(databaseUrl: string) {
  // A directory of its own: no .env is read and no ./data is created anywhere that matters.
  const cwd = mkdtempSync(join(tmpdir(), "orchestra-start-"));
  const secret = randomBytes(16).toString("hex");
  const admin = randomBytes(32).toString("hex");
  try {
    const child = spawnSync(process.execPath, [main], {
      cwd,
      env: childEnv({
        APP_ID: "1",
        PRIVATE_KEY: key,
        WEBHOOK_SECRET: secret,
        ORCHESTRA_ADMIN_TOKEN: admin,
        PORT: String(await freePort()),
        HOST: "127.0.0.1",
        GHE_HOST: "127.0.0.1:9",
        GHE_PROTOCOL: "http",
        DATABASE_URL: databaseUrl,
      }),
      encoding: "utf8",
      timeout: 30_000,
    });
    return { ...child, output: child.stdout + child.stderr, secrets: [secret, admin, key.split("\n")[1]!] };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

describe("orchestra with a bad DATABASE_URL", () => {
  test.each([
    [
      "no database name",
      `postgresql://orchestra:${PASSWORD}@127.0.0.1:5432`,
      78,
      `DATABASE_URL must be file:<path> for SQLite or postgresql://user:password@host:5432/database`,
      `postgresql://orchestra:***@127.0.0.1:5432`,
    ],
    [
      "a mistyped scheme",
      `postgresq://orchestra:${PASSWORD}@127.0.0.1:5432/orchestra`,
      78,
      "DATABASE_URL must be",
      `postgresq://orchestra:***@127.0.0.1:5432/orchestra`,
    ],
    [
      "a password with @ and no escape",
      `postgresql://orchestra:${PASSWORD}@x@127.0.0.1:5432`,
      78,
      "DATABASE_URL must be",
      `postgresql://orchestra:***@127.0.0.1:5432`,
    ],
    [
      "a server that is not there",
      `postgresql://orchestra:${PASSWORD}@127.0.0.1:1/orchestra`,
      69,
      "database unavailable at",
      `postgresql://orchestra:***@127.0.0.1:1/orchestra`,
    ],
    [
      "a host that is not a URL host",
      `postgresql://orchestra:${PASSWORD}@[zz/orchestra`,
      69,
      "database unavailable at",
      `postgresql://orchestra:***@[zz/orchestra`,
    ],
  ])(
    "%s: exits with its code, names the setting, shows the URL masked, starts nothing",
    async (_name, url, code, says, masked) => {
      const child = await start(url);
      expect(child.status).toBe(code);
      expect(child.stderr).toContain(says);
      expect(child.stderr).toContain(masked);
      expect(child.output).not.toContain(PASSWORD);
      expect(child.output).not.toContain("hunter2");
      for (const s of child.secrets) expect(child.output).not.toContain(s);
      expect(child.output).not.toContain("orchestra listening");
      // One line per problem, no stack trace.
      expect(
        child.stderr
          .trim()
          .split("\n")
          .every((l) => l.startsWith("orchestra: ")),
      ).toBe(true);
    },
  );
});

describe("the orchestra command with secrets in its settings", () => {
  const bin = join(import.meta.dirname, "..", "..", "bin/orchestra.js");
  const run = (args: string[], env: Record<string, string>) => {
    const cwd = mkdtempSync(join(tmpdir(), "orchestra-cli-"));
    try {
      const child = spawnSync(process.execPath, [bin, ...args], {
        cwd,
        env: childEnv(env),
        encoding: "utf8",
        timeout: 30_000,
      });
      return { ...child, output: child.stdout + child.stderr };
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };

  test.each([
    [
      "migrate, malformed URL",
      ["migrate"],
      { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@127.0.0.1:5432` },
      2,
      `(got "postgresql://orchestra:***@127.0.0.1:5432")`,
    ],
    [
      "migrate, no server",
      ["migrate"],
      { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@127.0.0.1:1/orchestra` },
      1,
      "on postgresql://orchestra:***@127.0.0.1:1/orchestra (Can't reach database server at 127.0.0.1:1)",
    ],
    [
      "prune, no server",
      ["prune"],
      { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@127.0.0.1:1/orchestra` },
      1,
      "database unreachable at postgresql://orchestra:***@127.0.0.1:1/orchestra",
    ],
    [
      "an API command, service URL with credentials",
      ["deliveries"],
      { ORCHESTRA_URL: `http://ops:${PASSWORD}@127.0.0.1:9`, ORCHESTRA_ADMIN_TOKEN: "t".repeat(40) },
      1,
      "cannot reach the service at http://ops:***@127.0.0.1:9",
    ],
  ])("%s: the password is masked", (_name, args, env, code, says) => {
    const child = run(args, env);
    expect(child.status).toBe(code);
    expect(child.stderr).toContain(says);
    expect(child.output).not.toContain("hunter2");
    expect(child.output).not.toContain("t".repeat(40));
  });
});
