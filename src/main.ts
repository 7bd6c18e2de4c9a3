/**
 * Entry point: read the configuration, open and migrate the database, start
 * the service (or the setup page when the App is not registered yet).
 *
 * Every start-up failure a user can cause ends here as one line on stderr
 * that names the setting, with a documented exit code (docs/configuration.md):
 * 78 a setting is wrong, 69 what it names is not available now, 77 this user
 * may not do what it asks; 1 is left for what nobody could have configured
 * away (a bug).
 */
import { accessSync, constants, existsSync } from "node:fs";
import { createLogger } from "./log.js";
import { ConfigError, parseEnv, type Env } from "./config/env.js";
import { processUser, type StartupProblem } from "./config/problem.js";
import { openDatabase, type Database } from "./store/db.js";
import { databaseProblem } from "./store/problems.js";
import { scrub, secretsOf } from "./redact/redact.js";
import { migrate } from "./store/migrate.js";
import { createOrchestra } from "./app/index.js";
import { isListenError, listenProblem, probeListen } from "./app/listen.js";
import { startSetup } from "./app/setup.js";
import { ingestLimits, type IngestLimits } from "./ingest/limits.js";

/** sysexits.h: EX_CONFIG, EX_UNAVAILABLE, EX_NOPERM. */
const EXIT: Record<StartupProblem["kind"], number> = { config: 78, unavailable: 69, permission: 77 };
/** SIGTERM to exit, at most: within the 10 s orchestrators commonly allow before they kill. */
const STOP_BACKSTOP_MS = 8_000;

/** Every start-up failure goes out through here: URLs' passwords masked, secret settings never echoed. */
function fail(code: number, lines: string[]): never {
  for (const line of lines) process.stderr.write(`orchestra: ${scrub(line, secretsOf(process.env))}\n`);
  process.exit(code);
}

function failWith(problem: StartupProblem): never {
  fail(EXIT[problem.kind], [problem.line]);
}

/** Probot's setup page writes the App's credentials to .env; a .env that is there must be readable. */
function loadDotEnv(): void {
  if (!existsSync(".env")) return;
  const cannot = (kind: StartupProblem["kind"], why: string): never =>
    failWith({
      kind,
      line:
        `.env in ${process.cwd()} cannot be read by ${processUser()} (${why}): ` +
        `make it a file that user may read, or remove it and set the settings in the environment`,
    });
  // Asked first: Node's loadEnvFile reports a file it may not read as ENOENT.
  try {
    accessSync(".env", constants.R_OK);
  } catch (err) {
    cannot("permission", (err as NodeJS.ErrnoException).code ?? String(err));
  }
  try {
    process.loadEnvFile(".env");
  } catch (err) {
    cannot("config", (err as NodeJS.ErrnoException).code ?? String(err));
  }
}

/** The server must be able to listen on PORT and HOST; asked before Probot tries (app/listen.ts). */
async function checkListen(env: Env): Promise<void> {
  const err = await probeListen(env.host, env.port);
  if (err) failWith(listenProblem(err, env, processUser()));
}

async function main(): Promise<void> {
  loadDotEnv();
  let env: Env;
  let ingest: IngestLimits;
  try {
    env = parseEnv(process.env);
    ingest = ingestLimits(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(EXIT.config, err.lines);
    throw err;
  }
  const log = createLogger(env.logLevel);

  let database: Database;
  try {
    database = await openDatabase(env.databaseUrl);
    const report = await migrate(database, (line) => log.info(line));
    log.info({ database: database.provider, where: database.where, applied: report.applied }, "database ready");
  } catch (err) {
    failWith(databaseProblem(env.databaseUrl, err, processUser()));
  }

  if (!env.credentials) {
    log.info("no App credentials (APP_ID, PRIVATE_KEY): starting Probot's setup page to register the App from app.yml");
    await database.close();
    // Probot would otherwise create a smee.io channel of its own, which
    // nothing forwards from and whose fetch can stall the page. A channel the
    // user chose (WEBHOOK_PROXY_URL) is what Probot's manifest then registers
    // as the App's webhook URL, and the service forwards from it once started.
    process.env["NO_SMEE_SETUP"] ??= "true";
    await checkListen(env);
    const setup = await startSetup({ env, log }).catch(listenFailure(env));
    log.info({ port: setup.port, setup: "/probot", health: "/health" }, "orchestra listening in setup mode");
    onSignals(log, () => setup.stop());
    return;
  }

  const orchestra = await createOrchestra({ env: { ...env, credentials: env.credentials }, database, log, ingest });
  await checkListen(env);
  const { port } = await orchestra.start().catch(listenFailure(env));
  log.info(
    { port, webhooks: "/api/github/webhooks", dashboard: "/dashboard", metrics: "/metrics" },
    "orchestra listening",
  );
  // Loaded only when asked for: the proxy's event-stream client is some 7 MB of memory a deployed replica never uses.
  const proxy = env.webhookProxyUrl
    ? (await import("./app/webhook-proxy.js")).startWebhookProxy({
        source: env.webhookProxyUrl,
        host: env.host,
        port,
        log,
      })
    : undefined;

  onSignals(log, async () => {
    await proxy?.stop();
    await orchestra.stop();
    await database.close();
  });
}

/** A listen that failed after the probe (another process took the port in between) is told the same way. */
const listenFailure =
  (env: Env) =>
  (err: unknown): never => {
    if (isListenError(err)) failWith(listenProblem(err, env, processUser()));
    throw err;
  };

function onSignals(log: ReturnType<typeof createLogger>, stop: () => Promise<void>): void {
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
    void stop().then(
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
  // Unforeseen: still one line, though a driver's message can span several.
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, " ").trim();
  fail(1, [`failed to start: ${message}`]);
});
