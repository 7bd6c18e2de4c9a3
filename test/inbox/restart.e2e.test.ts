/**
 * kill -9 in the middle of processing, then a restart on the same database:
 * every stored delivery is processed, and each finishes exactly once.
 */
import type { ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes, generateKeyPairSync } from "node:crypto";
import Sqlite from "better-sqlite3";
import { eventually, freePort } from "../support/orchestra.js";
import { childJs, startChild } from "../support/processes.js";
import { examplePayload, nthUpdate, sendWebhook } from "../support/webhooks.js";

test("kill -9 during processing, then restart: each stored delivery finishes exactly once", async () => {
  expect(existsSync(childJs)).toBe(true); // npm test builds first
  const dir = mkdtempSync(join(tmpdir(), "orchestra-kill-"));
  const journal = join(dir, "journal.log");
  const release = join(dir, "release");
  const releaseOne = (id: string) => appendFileSync(release, `${id}\n`);
  const dbFile = join(dir, "orchestra.db");
  const env = {
    APP_ID: "1",
    PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
      .privateKey.export({ type: "pkcs1", format: "pem" })
      .toString(),
    WEBHOOK_SECRET: randomBytes(8).toString("hex"),
    ORCHESTRA_ADMIN_TOKEN: randomBytes(32).toString("hex"),
    DATABASE_URL: `file:${dbFile}`,
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    GHE_HOST: "127.0.0.1:9",
    GHE_PROTOCOL: "http",
    CHILD_JOURNAL: journal,
    CHILD_RELEASE: release,
  };
  const lines = () => (existsSync(journal) ? readFileSync(journal, "utf8").split("\n").filter(Boolean) : []);
  let first: ChildProcess | undefined;
  let second: ChildProcess | undefined;
  try {
    const a = await startChild(env);
    first = a.proc;
    const ids = Array.from({ length: 12 }, (_, i) => `kill-${i}`);
    for (const [i, id] of ids.entries()) {
      // Each says something else (another label): deliveries that say the same are collapsed (inbox/collapse.ts).
      const payload = examplePayload("issues", "labeled", {
        installation: { id: 1 },
        issue: { number: 100 + (i % 4), updated_at: nthUpdate(i) },
        label: { name: `label-${i}` },
      });
      const res = await sendWebhook(`http://127.0.0.1:${a.port}/api/github/webhooks`, {
        event: "issues",
        payload,
        secret: env.WEBHOOK_SECRET,
        deliveryId: id,
      });
      expect(res.status).toBe(202);
    }
    // Let three finish, one at a time as each starts; the fourth is then mid-handler: kill -9.
    const open = () => {
      const l = lines();
      return l
        .filter((x) => x.startsWith("start "))
        .map((x) => x.slice(6))
        .filter((id) => !l.includes(`finish ${id}`));
    };
    for (let n = 1; n <= 3; n++) {
      releaseOne(await eventually(() => open()[0], 15_000, `delivery ${n} started`));
      await eventually(
        () => (lines().filter((x) => x.startsWith("finish")).length >= n ? true : undefined),
        15_000,
        `delivery ${n} finished`,
      );
    }
    const inFlight = await eventually(() => open()[0], 15_000, "a delivery in flight");
    first.kill("SIGKILL");
    await new Promise((r) => first!.once("exit", r));
    const beforeRestart = lines();
    expect(beforeRestart).not.toContain(`finish ${inFlight}`);

    releaseOne("*"); // after the restart, every handler finishes
    const b = await startChild(env);
    second = b.proc;
    const sqlite = new Sqlite(dbFile, { readonly: true });
    try {
      await eventually(
        () => {
          const row = sqlite.prepare(`SELECT count(*) AS n FROM "Delivery" WHERE state = 'done'`).get() as {
            n: number;
          };
          return row.n === ids.length ? true : undefined;
        },
        20_000,
        "all deliveries done after restart",
      );
      const rows = sqlite.prepare(`SELECT "deliveryId", attempts, state FROM "Delivery"`).all() as Array<{
        deliveryId: string;
        attempts: number;
        state: string;
      }>;
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
});
