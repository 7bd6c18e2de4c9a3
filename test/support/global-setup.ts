/**
 * Jest's globalSetup: runs once per run, before any suite. A run without
 * TEST_DATABASE_URL exercises SQLite only (support/databases.ts), and its
 * PostgreSQL suites are not failed but left out; this says so, once, so a
 * green run is not mistaken for one that covered PostgreSQL.
 */
export default function globalSetup(): void {
  // The same test as support/databases.ts: unset or empty is no PostgreSQL.
  if (process.env["TEST_DATABASE_URL"]) return;
  process.stderr.write(
    "TEST_DATABASE_URL is not set: the PostgreSQL suites are skipped " +
      "(set it to a PostgreSQL URL whose role may create databases to run them; .ci/run does)\n",
  );
}
