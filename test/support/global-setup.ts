import { generateKeyPairSync } from "node:crypto";

/**
 * Jest's globalSetup: runs once per run, before any suite, in the process
 * that then starts the workers (they inherit its environment).
 *
 * It makes the one RSA key pair the fakes' Apps sign with (fake-github/auth.ts):
 * generating one costs 50–250 ms of CPU, and each test file has modules of its
 * own, so a pair per file was seconds of every run.
 *
 * A run without TEST_DATABASE_URL exercises SQLite only (support/databases.ts),
 * and its PostgreSQL suites are not failed but left out; this says so, once,
 * so a green run is not mistaken for one that covered PostgreSQL.
 */
/** Where this leaves the pair it made, as JSON `{ privateKey, publicKey }` (PEM). */
export const APP_KEYS_ENV = "ORCHESTRA_TEST_APP_KEYS";

/** PKCS#1 PEM for the private key, the format GitHub hands out. */
export const KEY_OPTIONS = {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
} as const;

export default function globalSetup(): void {
  if (!process.env[APP_KEYS_ENV]) {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", KEY_OPTIONS);
    process.env[APP_KEYS_ENV] = JSON.stringify({ privateKey, publicKey });
  }
  // The same test as support/databases.ts: unset or empty is no PostgreSQL.
  if (process.env["TEST_DATABASE_URL"]) return;
  process.stderr.write(
    "TEST_DATABASE_URL is not set: the PostgreSQL suites are skipped " +
      "(set it to a PostgreSQL URL whose role may create databases to run them; .ci/run does)\n",
  );
}
