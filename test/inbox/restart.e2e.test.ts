/**
 * kill -9 in the middle of processing, then a restart on the same database:
 * every stored delivery is processed, and each finishes exactly once.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes, generateKeyPairSync } from "node:crypto";
import Sqlite from "better-sqlite3";
import { eventually, freePort } from "../support/orchestra.js";
import { childJs, startChild } from "../support/processes.js";
import { examplePayload, sendWebhook } from "../support/webhooks.js";

test("kill -9 during processing, then restart: each stored delivery finishes exactly once", async () => {
  expect(existsSync(childJs)).toBe(true); // npm test builds first
  const dir = mkdtempSync(join(tmpdir(), "orchestra-kill-"));
  const journal = join(dir, "journal.log");
  const dbFile = join(dir, "orchestra.db");
  const env = {
    APP_ID: "1",
    PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    WEBHOOK_SECRET: randomBytes(8).toString("hex"),
    ORCHESTRA_ADMIN_TOKEN: randomBytes(32).toString("hex"),
    DATABASE_URL: `file:${dbFile}`,
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    GHE_HOST: "127.0.0.1:9",
    GHE_PROTOCOL: "http",
    CHILD_JOURNAL: journal,
    CHILD_DELAY_MS: "150",
  };
  const lines = () => (existsSync(journal) ? readFileSync(journal, "utf8").split("\n").filter(Boolean) : []);
  let first: ChildProcess | undefined;
  let second: ChildProcess | undefined;
  try {
    const a = await startChild(env);
    first = a.proc;
    const ids = Array.from({ length: 12 }, (_, i) => `kill-${i}`);
    for (const [i, id] of ids.entries()) {
      const payload = examplePayload("issues", "labeled", { installation: { id: 1 }, issue: { number: 100 + (i % 4) } });
      const res = await sendWebhook(`http://127.0.0.1:${a.port}/api/github/webhooks`, { event: "issues", payload, secret: env.WEBHOOK_SECRET, deliveryId: id });
      expect(res.status).toBe(202);
    }
    // Wait until at least three have finished and one is mid-handler, then kill -9.
    const inFlight = await eventually(() => {
      const l = lines();
      const finished = l.filter((x) => x.startsWith("finish")).length;
      const started = l.filter((x) => x.startsWith("start"));
      const open = started.map((s) => s.slice(6)).filter((id) => !l.includes(`finish ${id}`));
      return finished >= 3 && open.length === 1 ? open[0] : undefined;
    }, 15_000, "a delivery in flight");
    first.kill("SIGKILL");
    await new Promise((r) => first!.once("exit", r));
    const beforeRestart = lines();
    expect(beforeRestart).not.toContain(`finish ${inFlight}`);

    const b = await startChild(env);
    second = b.proc;
    const sqlite = new Sqlite(dbFile, { readonly: true });
    try {
      await eventually(() => {
        const row = sqlite.prepare(`SELECT count(*) AS n FROM "Delivery" WHERE state = 'done'`).get() as { n: number };
        return row.n === ids.length ? true : undefined;
      }, 20_000, "all deliveries done after restart");
      const rows = sqlite.prepare(`SELECT "deliveryId", attempts, state FROM "Delivery"`).all() as Array<{ deliveryId: string; attempts: number; state: string }>;
      expect(rows).toHaveLength(ids.length);
      const l = lines();
      for (const id of ids) {
        // Exactly one finished run per delivery.
        expect(l.filter((x) => x === `finish ${id}`)).toHaveLength(1);
      }
      // The one killed mid-handler was started again; nothing that had finished was.
      expect(l.filter((x) => x === `start ${inFlight}`)).toHaveLength(2);
      const finishedBefore = beforeRestart.filter((x) => x.startsWith("finish ")).map((x) => x.slice(7));
      for (const id of finishedBefore) expect(l.filter((x) => x === `start ${id}`)).toHaveLength(1);
      expect(rows.find((r) => r.deliveryId === inFlight)!.attempts).toBe(2);
    } finally {
      sqlite.close();
    }
  } finally {
    first?.kill("SIGKILL");
    second?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
