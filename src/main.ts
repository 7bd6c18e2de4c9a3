/**
 * Entry point: read the configuration, open and migrate the database, start
 * the service (or Probot's setup page when the App is not registered yet).
 */
import { existsSync } from "node:fs";
import { createLogger } from "./log.js";
import { run } from "probot";
import { ConfigError, parseEnv, type Env } from "./config/env.js";
import { DEFAULT_SQLITE_PATH, openDatabase, type Database } from "./store/db.js";
import { maskUrl, scrub, secretsOf } from "./redact/redact.js";
import { migrate } from "./store/migrate.js";
import { createOrchestra } from "./app/index.js";
import { ingestLimits, type IngestLimits } from "./ingest/limits.js";

/** EX_CONFIG from sysexits.h: the configuration is wrong, retrying will not help. */
const EXIT_CONFIG = 78;
const EXIT_DATABASE = 69;
/** SIGTERM to exit, at most: within the 10 s orchestrators commonly allow before they kill. */
const STOP_BACKSTOP_MS = 8_000;

/** Every start-up failure goes out through here: URLs' passwords masked, secret settings never echoed. */
function fail(code: number, lines: string[]): never {
  for (const line of lines) process.stderr.write(`orchestra: ${scrub(line, secretsOf(process.env))}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  // Probot's setup page writes the App's credentials to .env.
  if (existsSync(".env")) process.loadEnvFile(".env");
  let env: Env;
  let ingest: IngestLimits;
  try {
    env = parseEnv(process.env);
    ingest = ingestLimits(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(EXIT_CONFIG, err.lines);
    throw err;
  }
  const log = createLogger(env.logLevel);

  let database: Database;
  try {
    database = await openDatabase(env.databaseUrl);
    const report = await migrate(database, (line) => log.info(line));
    log.info({ database: database.provider, where: database.where, applied: report.applied }, "database ready");
  } catch (err) {
    const why = err instanceof Error ? err.message.split("\n").filter(Boolean).pop() : String(err);
    const where = env.databaseUrl ? maskUrl(env.databaseUrl) : DEFAULT_SQLITE_PATH;
    fail(EXIT_DATABASE, [
      `database unavailable at ${where} (${why}); check DATABASE_URL and that the database server is running`,
    ]);
  }

  if (!env.credentials) {
    log.info("no App credentials (APP_ID, PRIVATE_KEY): starting Probot's setup page to register the App from app.yml");
    await database.close();
    // Probot would otherwise fetch and start a smee.io client to proxy
    // webhooks to this machine; Orchestra does not use one (webhooks go to
    // /api/github/webhooks directly), and fetching it can stall the page.
    process.env["NO_SMEE_SETUP"] ??= "true";
    await run(() => {});
    return;
  }

  const orchestra = await createOrchestra({ env: { ...env, credentials: env.credentials }, database, log, ingest });
  const { port } = await orchestra.start();
  log.info(
    { port, webhooks: "/api/github/webhooks", dashboard: "/dashboard", metrics: "/metrics" },
    "orchestra listening",
  );

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping: refusing deliveries, abandoning GitHub calls in flight; their work stays pending");
    // A backstop only: stopping abandons GitHub's calls at once, so it takes as long as the database's last writes.
    setTimeout(() => {
      log.error(
        { afterMs: STOP_BACKSTOP_MS },
        "stopping took too long; exiting with work in flight (its claims expire, or are released at the next start)",
      );
      process.exit(1);
    }, STOP_BACKSTOP_MS).unref();
    const started = Date.now();
    void orchestra
      .stop()
      .then(() => database.close())
      .then(
        () => {
          log.info({ ms: Date.now() - started }, "stopped");
          process.exit(0);
        },
        (err: unknown) => {
          log.error({ err: String(err) }, "error while stopping");
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

main().catch((err: unknown) => {
  fail(1, [`failed to start: ${err instanceof Error ? err.message : String(err)}`]);
});
