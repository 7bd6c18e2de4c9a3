/**
 * The App as a separate process, wired like src/main.ts, for tests that kill
 * it or run two replicas. With CHILD_JOURNAL set, only the ingest half runs
 * (test/support/ingest-rig.ts), with a handler that writes "start <id>" and "finish <id>" lines (synchronously)
 * around a handler for every issues.labeled delivery, which with
 * CHILD_RELEASE waits until the test releases it. CHILD_EFFECTS=off
 * starts it without the effects executor (effects are recorded, not
 * performed). CHILD_LEASE_MS sets how long its claims on deliveries and
 * effects last (a long one: only a release frees what it held when killed).
 * Run from the build: node dist/test/support/child.js
 */
import { appendFileSync, existsSync, readFileSync, watch } from "node:fs";
import { dirname } from "node:path";
import { parseEnv } from "../../src/config/env.js";
import { openDatabase } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { createOrchestra } from "../../src/app/index.js";
import { createLogger } from "../../src/log.js";
import { ingestLimits } from "../../src/ingest/limits.js";
import { TEST_EFFECTS, TestOctokit } from "./orchestra.js";
import { startIngest } from "./ingest-rig.js";

const env = parseEnv(process.env);
const journal = process.env["CHILD_JOURNAL"];
/** With CHILD_RELEASE set, a handler finishes only once its delivery id (or "*") is a line of that file: the test decides, not a timer. */
const release = process.env["CHILD_RELEASE"];

function released(id: string): Promise<void> {
  if (!release) return Promise.resolve();
  const file = release;
  const ok = () =>
    existsSync(file) &&
    readFileSync(file, "utf8")
      .split("\n")
      .some((l) => l === id || l === "*");
  return new Promise((resolve) => {
    if (ok()) return resolve();
    const watcher = watch(dirname(file), () => {
      if (!ok()) return;
      watcher.close();
      resolve();
    });
    // Written between the first look and the watch.
    if (ok()) {
      watcher.close();
      resolve();
    }
  });
}
if (journal) {
  // The inbox under test, alone: the ingest half with one handler that journals each issues.labeled delivery.
  const rig = await startIngest({
    db: { url: env.databaseUrl },
    secret: env.credentials!.webhookSecret,
    adminToken: env.credentials!.adminToken,
    host: env.host,
    port: env.port,
    ingest: ingestLimits(process.env),
    logLevel: env.logLevel,
    processor: { concurrency: 1, pollMs: 50 },
    handlers: (events) =>
      events.on("issues.labeled", async (ctx) => {
        appendFileSync(journal, `start ${ctx.deliveryId}\n`);
        // Still running until the test releases it: the test can kill the process mid-handler.
        await released(ctx.deliveryId);
        appendFileSync(journal, `finish ${ctx.deliveryId}\n`);
      }),
  });
  process.stdout.write(`LISTENING ${rig.port}\n`);
} else {
  // The whole App.
  const leaseMs = process.env["CHILD_LEASE_MS"] ? { leaseMs: Number(process.env["CHILD_LEASE_MS"]) } : {};
  const database = await openDatabase(env.databaseUrl);
  await migrate(database);
  const orchestra = await createOrchestra({
    env: { ...env, credentials: env.credentials! },
    database,
    log: createLogger(env.logLevel),
    ingest: ingestLimits(process.env),
    // As in the in-process tests: no retries, no write throttling.
    Octokit: TestOctokit,
    processor: { concurrency: 4, pollMs: 50, ...leaseMs },
    sweepMs: 3_600_000,
    effects: { ...TEST_EFFECTS, ...leaseMs, start: process.env["CHILD_EFFECTS"] !== "off" },
  });
  const { port } = await orchestra.start();
  process.stdout.write(`LISTENING ${port}\n`);
}
