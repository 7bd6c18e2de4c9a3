import { generateKeyPairSync } from "node:crypto";
import { parseEnv } from "../../src/config/env.js";
import { errorsOf } from "../support/env-errors.js";

const key = generateKeyPairSync("rsa", { modulusLength: 1024 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();
const admin = "a".repeat(32);
const full = { APP_ID: "42", PRIVATE_KEY: key, WEBHOOK_SECRET: "s3cret", ORCHESTRA_ADMIN_TOKEN: admin };

describe("parseEnv", () => {
  test.each([
    ["APP_ID not a number", { ...full, APP_ID: "abc" }, /^APP_ID must be the App's numeric id.*\(got "abc"\)$/],
    [
      "PORT out of range",
      { ...full, PORT: "70000" },
      /^PORT must be a TCP port number between 1 and 65535 \(got "70000"\)$/,
    ],
    ["PORT not numeric", { ...full, PORT: "http" }, /^PORT must be a TCP port number, e.g. 3000/],
    [
      "LOG_LEVEL unknown",
      { ...full, LOG_LEVEL: "loud" },
      /^LOG_LEVEL must be one of trace, debug, info, warn, error, fatal \(got "loud"\)$/,
    ],
    [
      "GHE_HOST with scheme",
      { ...full, GHE_HOST: "https://ghe.example.com" },
      /^GHE_HOST must be a host name with an optional port, without a scheme/,
    ],
    ["GHE_PROTOCOL unknown", { ...full, GHE_HOST: "h", GHE_PROTOCOL: "ftp" }, /^GHE_PROTOCOL must be http or https/],
    [
      "DATABASE_URL other scheme",
      { ...full, DATABASE_URL: "mysql://u@h/db" },
      /^DATABASE_URL must be file:<path> for SQLite or postgresql:\/\//,
    ],
    [
      "admin token too short",
      { ...full, ORCHESTRA_ADMIN_TOKEN: "short" },
      /^ORCHESTRA_ADMIN_TOKEN must be at least 32 characters; generate one with: openssl rand -hex 32$/,
    ],
    [
      "metrics token too short",
      { ...full, ORCHESTRA_METRICS_TOKEN: "short" },
      /^ORCHESTRA_METRICS_TOKEN must be at least 32 characters; generate one with: openssl rand -hex 32, or leave it unset/,
    ],
    ["private key not PEM", { ...full, PRIVATE_KEY: "hello" }, /^PRIVATE_KEY must be a PEM private key/],
    [
      "a PEM block that is not a key",
      { ...full, PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\ngarbage\n-----END RSA PRIVATE KEY-----" },
      /^PRIVATE_KEY holds a PEM block that is not a readable private key \(cut short, or pasted wrong\?\); download a new one$/,
    ],
    [
      "a key cut short",
      { ...full, PRIVATE_KEY: key.slice(0, 200) + "\n-----END RSA PRIVATE KEY-----\n" },
      /^PRIVATE_KEY holds a PEM block that is not a readable private key/,
    ],
    [
      "admin token missing",
      { APP_ID: "42", PRIVATE_KEY: key, WEBHOOK_SECRET: "s" },
      /^ORCHESTRA_ADMIN_TOKEN is missing: set it to a random string/,
    ],
    ["secret missing", { APP_ID: "42", PRIVATE_KEY: key, ORCHESTRA_ADMIN_TOKEN: admin }, /^WEBHOOK_SECRET is missing/],
    [
      "key missing with an app id",
      { APP_ID: "42", WEBHOOK_SECRET: "s", ORCHESTRA_ADMIN_TOKEN: admin },
      /^PRIVATE_KEY is missing/,
    ],
    [
      "unreadable key file",
      { APP_ID: "1", PRIVATE_KEY_PATH: "/nope.pem", WEBHOOK_SECRET: "s", ORCHESTRA_ADMIN_TOKEN: admin },
      /^PRIVATE_KEY_PATH cannot be read \(ENOENT\)/,
    ],
  ])("%s → one line naming the setting", (_name, env, pattern) => {
    const lines = errorsOf(env);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
  });

  test("the metrics token is optional: unset means /metrics needs none", () => {
    expect(parseEnv(full).metricsToken).toBeUndefined();
    expect(parseEnv({ ...full, ORCHESTRA_METRICS_TOKEN: "m".repeat(32) }).metricsToken).toBe("m".repeat(32));
  });

  test("secrets are never echoed back", () => {
    const lines = errorsOf({ ...full, ORCHESTRA_ADMIN_TOKEN: "tooshort-but-secret" });
    expect(lines.join("\n")).not.toContain("tooshort-but-secret");
  });

  test.each([
    [
      "no database name",
      "postgresql://orchestra:hunter2-pw@127.0.0.1:5432",
      "postgresql://orchestra:***@127.0.0.1:5432",
    ],
    ["another scheme", "mysql://root:hunter2-pw@db/orchestra", "mysql://root:***@db/orchestra"],
    ["one slash and a password holding @", "postgresql:/orchestra:hunter2-pw@x@h/db", "postgresql:/orchestra:***@h/db"],
    ["no scheme at all", "orchestra:hunter2-pw@h/db", "orchestra:***@h/db"],
  ])("a malformed DATABASE_URL (%s) is shown with its password masked", (_name, url, shown) => {
    const lines = errorsOf({ ...full, DATABASE_URL: url });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`(got "${shown}")`);
    expect(lines[0]).not.toContain("hunter2-pw");
  });

  test.each<[string, string | null]>([
    ["https://registry.npmjs.org", null],
    ["http://127.0.0.1:4873/", null],
    ["HTTPS://npm.example.com/registry", null],
    [
      "file:///etc/passwd",
      `ORCHESTRA_NPM_REGISTRY must be an http(s) URL, e.g. https://registry.npmjs.org (got "file:///etc/passwd")`,
    ],
    [
      "ftp://mirror.example.com/npm",
      `ORCHESTRA_NPM_REGISTRY must be an http(s) URL, e.g. https://registry.npmjs.org (got "ftp://mirror.example.com/npm")`,
    ],
    [
      "data:application/json,{}",
      `ORCHESTRA_NPM_REGISTRY must be an http(s) URL, e.g. https://registry.npmjs.org (got "data:application/json,{}")`,
    ],
    [
      "registry.npmjs.org",
      `ORCHESTRA_NPM_REGISTRY must be an http(s) URL, e.g. https://registry.npmjs.org (got "registry.npmjs.org")`,
    ],
  ])("ORCHESTRA_NPM_REGISTRY=%s: %s", (url, error) => {
    expect(errorsOf({ ...full, ORCHESTRA_NPM_REGISTRY: url })).toEqual(error === null ? [] : [error]);
  });

  test("production without credentials names each missing setting on its own line", () => {
    expect(errorsOf({ NODE_ENV: "production" }).map((l) => l.split(" ")[0])).toEqual([
      "APP_ID",
      "PRIVATE_KEY",
      "WEBHOOK_SECRET",
      "ORCHESTRA_ADMIN_TOKEN",
      "ORCHESTRA_METRICS_TOKEN",
    ]);
  });

  test("two bad settings give two lines", () => {
    expect(errorsOf({ ...full, APP_ID: "x", PORT: "y" })).toHaveLength(2);
  });

  test("a complete environment parses with defaults", () => {
    const env = parseEnv(full);
    expect(env.port).toBe(3000);
    expect(env.logLevel).toBe("info");
    expect(env.baseUrl).toBeUndefined();
    expect(env.databaseUrl).toBeUndefined();
    expect(env.credentials).toEqual({ appId: 42, privateKey: key, webhookSecret: "s3cret", adminToken: admin });
  });

  test("GHE_HOST and GHE_PROTOCOL form the REST base URL", () => {
    expect(parseEnv({ ...full, GHE_HOST: "127.0.0.1:9999", GHE_PROTOCOL: "http" }).baseUrl).toBe(
      "http://127.0.0.1:9999/api/v3",
    );
    expect(parseEnv({ ...full, GHE_HOST: "ghe.example.com" }).baseUrl).toBe("https://ghe.example.com/api/v3");
  });

  test("a key with escaped newlines (one-line env file) is accepted", () => {
    const env = parseEnv({ ...full, PRIVATE_KEY: key.replace(/\n/g, "\\n") });
    expect(env.credentials?.privateKey).toBe(key);
  });

  test("PRIVATE_KEY_PATH is read", () => {
    const env = parseEnv({ ...full, PRIVATE_KEY: "", PRIVATE_KEY_PATH: "/k.pem" }, () => key);
    expect(env.credentials?.privateKey).toBe(key);
  });

  test("no credentials at all outside production means setup mode", () => {
    expect(parseEnv({}).credentials).toBeUndefined();
  });

  test("PostgreSQL and SQLite URLs are accepted", () => {
    expect(parseEnv({ ...full, DATABASE_URL: "postgresql://u:p@db:5432/orchestra" }).databaseUrl).toBe(
      "postgresql://u:p@db:5432/orchestra",
    );
    expect(parseEnv({ ...full, DATABASE_URL: "postgres://u@db/orchestra?sslmode=require" }).databaseUrl).toContain(
      "sslmode",
    );
    expect(parseEnv({ ...full, DATABASE_URL: "file:/var/lib/orchestra/o.db" }).databaseUrl).toBe(
      "file:/var/lib/orchestra/o.db",
    );
  });
});
