/**
 * The App as a separate process, wired like src/main.ts, for tests that kill
 * it or run two replicas. With CHILD_JOURNAL set, only the inbox runs, plus a
 * capability that writes "start <id>" and "finish <id>" lines (synchronously)
 * around a slow handler for every issues.labeled delivery. CHILD_EFFECTS=off
 * starts it without the effects executor (effects are recorded, not
 * performed). Run from the build: node dist/test/support/child.js
 */
import { appendFileSync } from "node:fs";
import { parseEnv } from "../../src/config/env.js";
import { openDatabase } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { createOrchestra } from "../../src/app.js";
import { createLogger } from "../../src/log.js";
import { ingestLimits } from "../../src/ingest/limits.js";
import { TEST_EFFECTS, TestOctokit } from "./orchestra.js";

const env = parseEnv(process.env);
const journal = process.env["CHILD_JOURNAL"];
const delay = Number(process.env["CHILD_DELAY_MS"] ?? "100");
const database = await openDatabase(env.databaseUrl);
await migrate(database);
const orchestra = await createOrchestra({
  env: { ...env, credentials: env.credentials! },
  database,
  log: createLogger(env.logLevel),
  ingest: ingestLimits(process.env),
  // As in the in-process tests: no retries, no write throttling.
  Octokit: TestOctokit,
  processor: { concurrency: journal ? 1 : 4, pollMs: 50 },
  // With a journal: the inbox under test, alone. Without: the whole App.
  lifecycle: !journal,
  sweepMs: 3_600_000,
  effects: { ...TEST_EFFECTS, start: process.env["CHILD_EFFECTS"] !== "off" },
  capabilities: journal
    ? [
        ({ events }) =>
          events.on("issues.labeled", async (ctx) => {
            appendFileSync(journal, `start ${ctx.deliveryId}\n`);
            // A handler that is still running when the test kills the process (the test waits for "start" in the journal, not for time).
            await new Promise((r) => setTimeout(r, delay));
            appendFileSync(journal, `finish ${ctx.deliveryId}\n`);
          }),
      ]
    : [],
});
const { port } = await orchestra.start();
process.stdout.write(`LISTENING ${port}\n`);
