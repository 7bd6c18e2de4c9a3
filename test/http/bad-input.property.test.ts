/**
 * Bad input thrown at the real server, as a property: 1,000 malformed,
 * truncated, mis-signed and oversized webhook deliveries and worker API
 * requests (test/support/bad-input.ts; 250 on PostgreSQL) against one server process (the
 * build's test child, wired like src/main.ts). Whatever arrives: no 5xx
 * except a deliberate 503, the process stays up and answers /health
 * afterwards, and nothing is stored — every table has as many rows afterwards
 * as before (see UNCOMPARED for the three that input does not decide).
 */
import type { ChildProcess } from "node:child_process";
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import fc from "fast-check";
import { openDatabase, type Database } from "../../src/store/db.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { freePort } from "../support/orchestra.js";
import { startChild } from "../support/processes.js";
import { cutOff, HOOK, payloadText, readable, sign, webhookCases, workerCases } from "../support/bad-input.js";

/**
 * A thousand on SQLite. On PostgreSQL the same code refuses the same input; what the database adds is the few
 * queries a refusal makes (a worker's token) and the tables it must leave alone, which 250 show.
 */
const RUNS: Record<string, number> = { sqlite: 1000, postgresql: 250 };
const key = generateKeyPairSync("rsa", { modulusLength: 1024 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();

/**
 * Tables a refused request may legitimately touch or that the service's own
 * schedules write whatever arrives: Counter counts ignored input; the
 * missed-deliveries sweep (which runs at start-up) writes its report and
 * checkpoint.
 */
const UNCOMPARED = new Set(["Counter", "SweepReport", "Checkpoint"]);

async function counts(database: Database): Promise<Record<string, number>> {
  const tables =
    database.provider === "sqlite"
      ? await database.db.$queryRawUnsafe<Array<{ name: string }>>(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
        )
      : await database.db.$queryRawUnsafe<Array<{ name: string }>>(
          `SELECT tablename::text AS name FROM pg_tables WHERE schemaname = current_schema()`,
        );
  const out: Record<string, number> = {};
  for (const { name } of tables) {
    if (name === "_prisma_migrations" || UNCOMPARED.has(name)) continue;
    const [row] = await database.db.$queryRawUnsafe<Array<{ n: number | bigint }>>(
      `SELECT COUNT(*) AS n FROM "${name}"`,
    );
    out[name] = Number(row!.n);
  }
  return out;
}

describe.each(providers)("bad input on %s", (provider) => {
  let db: TestDb;
  let proc: ChildProcess;
  let url: string;
  let port: number;
  let database: Database;
  const secret = randomBytes(16).toString("hex");
  const adminToken = randomBytes(32).toString("hex");

  beforeAll(async () => {
    db = await testDatabase(provider, { migrated: true });
    database = await openDatabase(db.url, { poolSize: 2 });
    const child = await startChild({
      APP_ID: "1",
      PRIVATE_KEY: key,
      WEBHOOK_SECRET: secret,
      ORCHESTRA_ADMIN_TOKEN: adminToken,
      DATABASE_URL: db.url,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      LOG_LEVEL: "error",
      GHE_HOST: "127.0.0.1:9",
      GHE_PROTOCOL: "http",
    });
    proc = child.proc;
    port = child.port;
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    }
    await database.close();
    await db.drop();
  });

  test(`${RUNS[provider]} bad requests: no 5xx but a deliberate 503, no crash, nothing stored`, async () => {
    const reg = await fetch(`${url}/api/v1/workers`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "fuzz" }),
    });
    expect(reg.status).toBe(201);
    const workerToken = ((await reg.json()) as { token: string }).token;
    const before = await counts(database);
    expect(before["Worker"]).toBe(1);

    const seen: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.oneof(webhookCases(secret), workerCases(workerToken)).map(readable), async (c) => {
        seen[c.kind] = (seen[c.kind] ?? 0) + 1;
        if (c.cutAt !== undefined) {
          await cutOff(port, c);
          return;
        }
        let res: Response;
        try {
          res = await fetch(url + c.path, {
            method: c.method,
            headers: c.headers,
            ...(c.body ? { body: c.body } : {}),
          });
        } catch (err) {
          if (c.mayReset) return;
          throw new Error(`${c.kind}: ${c.method} ${c.path}: no answer (${String((err as Error).cause ?? err)})`, {
            cause: err,
          });
        }
        const text = await res.text();
        const where = `${c.kind}: ${c.method} ${c.path} answered ${res.status} ${text.slice(0, 200)}`;
        if (res.status >= 500 && res.status !== 503) throw new Error(where);
        if (c.path === HOOK && !(res.status >= 400 && res.status < 500) && res.status !== 503)
          throw new Error(`a bad delivery was accepted: ${where}`);
        if (
          res.status >= 400 &&
          res.status < 500 &&
          (c.path === HOOK || c.path.startsWith("/api/v1/runs/") || c.path === "/api/v1/claims")
        ) {
          const error = (JSON.parse(text) as { error?: unknown }).error;
          if (typeof error !== "string" || error.length === 0) throw new Error(`no reason given: ${where}`);
        }
      }),
      { numRuns: RUNS[provider] },
    );

    expect(proc.exitCode).toBeNull();
    expect(proc.signalCode).toBeNull();
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(await counts(database)).toEqual(before);
    // Every kind of bad input was tried.
    expect(Object.keys(seen).sort()).toEqual(
      [
        "cut off in transit",
        "mis-signed",
        "oversized",
        "signed, no x-github-delivery",
        "signed, no x-github-event",
        "signed, not a JSON object",
        "tampered after signing",
        "truncated after signing",
        "unsigned",
        "worker API",
      ].sort(),
    );
    // And the server still does its job: a good delivery is stored.
    const good = Buffer.from(payloadText);
    const ok = await fetch(url + HOOK, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": sign(secret, good),
      },
      body: good,
    });
    expect(ok.status).toBe(202);
    expect((await counts(database))["Delivery"]).toBe(before["Delivery"]! + 1);
  }, 180_000);
});
