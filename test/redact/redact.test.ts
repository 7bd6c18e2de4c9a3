import { maskUrl, scrub, secretsOf, urlSecrets } from "../../src/redact/redact.js";

describe("maskUrl", () => {
  test.each([
    [
      "user and password",
      "postgresql://user:hunter2@db.example.com:5432/orchestra",
      "postgresql://user:***@db.example.com:5432/orchestra",
    ],
    [
      "no database name (malformed)",
      "postgresql://orchestra:hunter2@127.0.0.1:5432",
      "postgresql://orchestra:***@127.0.0.1:5432",
    ],
    ["a password holding @ and /", "postgres://u:p@ss/w:rd@h/db", "postgres://u:***@h/db"],
    ["a password holding spaces", "postgresql://u:pa ss word@h/db", "postgresql://u:***@h/db"],
    ["an empty password", "postgresql://u:@h/db", "postgresql://u:***@h/db"],
    ["a lone user part (tokens live there)", "https://ghp_abcdef123456@github.com/o/r", "https://***@github.com/o/r"],
    ["a malformed scheme", "postgresql:/u:hunter2@h/db", "postgresql:/u:***@h/db"],
    ["no scheme", "u:hunter2@h/db", "u:***@h/db"],
    ["no user information", "postgresql://h:5432/db", "postgresql://h:5432/db"],
    [
      "a password in the query",
      "postgresql://h/db?sslmode=require&password=hunter2",
      "postgresql://h/db?sslmode=require&password=***",
    ],
    ["a keyword connection string", "host=h user=u password=hunter2 dbname=d", "host=h user=u password=*** dbname=d"],
    ["a SQLite file", "file:./data/orchestra.db", "file:./data/orchestra.db"],
    ["not a URL at all", "hello", "hello"],
  ])("%s", (_name, url, shown) => {
    expect(maskUrl(url)).toBe(shown);
  });
});

describe("scrub", () => {
  test.each([
    [
      "a URL inside an error",
      'connect failed for "postgresql://u:hunter2@h/db": refused',
      [],
      'connect failed for "postgresql://u:***@h/db": refused',
    ],
    ["two URLs", "from https://a:b1234@x/ to https://c:d5678@y/", [], "from https://a:***@x/ to https://c:***@y/"],
    ["a known secret anywhere", "the token s3cr3t-value was refused", ["s3cr3t-value"], "the token *** was refused"],
    [
      "the decoded form of a password",
      "password authentication failed: p@ss w0rd",
      urlSecrets("postgresql://u:p%40ss%20w0rd@h/db"),
      "password authentication failed: ***",
    ],
    [
      "the example in a hint stays readable",
      "must be postgresql://user:password@host:5432/database",
      [],
      "must be postgresql://user:password@host:5432/database",
    ],
    ["short secrets are left alone", "a b c", ["b"], "a b c"],
  ])("%s", (_name, text, secrets, shown) => {
    expect(scrub(text, secrets)).toBe(shown);
  });

  test("an environment's secrets: secret settings and database passwords, not paths", () => {
    const secrets = secretsOf({
      WEBHOOK_SECRET: "whsec-1234",
      ORCHESTRA_ADMIN_TOKEN: "admin-token-0123456789",
      PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----x",
      PRIVATE_KEY_PATH: "/etc/orchestra/key.pem",
      DATABASE_URL: "postgresql://u:hunter%212@h/db",
      PORT: "3000",
    });
    expect(secrets).toEqual(
      expect.arrayContaining([
        "whsec-1234",
        "admin-token-0123456789",
        "-----BEGIN RSA PRIVATE KEY-----x",
        "hunter%212",
        "hunter!2",
      ]),
    );
    expect(secrets).not.toContain("/etc/orchestra/key.pem");
    expect(secrets).not.toContain("3000");
  });
});
