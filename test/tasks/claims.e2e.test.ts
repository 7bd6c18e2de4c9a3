/**
 * Two claimers racing for one task: exactly one wins, every round. On SQLite
 * with one App; on PostgreSQL with two App processes sharing the database,
 * each worker talking to its own replica.
 */
import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { providers, testDatabase } from "../support/databases.js";
import { freePort } from "../support/orchestra.js";
import { startChild } from "../support/processes.js";
import { furnish, REPO, startRig } from "../support/lifecycle-rig.js";
import { startFakeGitHub } from "../fake-github/index.js";
import { fakeWebhookPayload, sendWebhook } from "../support/webhooks.js";

const ROUNDS = 50;
const CONFIG = "limits:\n  maxConcurrentPerRepo: 100\n  maxConcurrentPerOrg: 100\n";

test(`sqlite: ${ROUNDS} rounds of two concurrent claimers give exactly one winner each`, async () => {
  const rig = await startRig();
  try {
    rig.config(CONFIG);
    const a = await rig.worker("a");
    const b = await rig.worker("b");
    const winners: string[] = [];
    for (let i = 1; i <= ROUNDS; i++) {
      await rig.queue(i);
      const [ra, rb] = await Promise.all([a.claim(), b.claim()]);
      const statuses = [ra.status, rb.status].sort();
      expect(statuses).toEqual([200, 204]);
      const win = ra.status === 200 ? ra : rb;
      expect(win.body.task.issue).toBe(i);
      // Where the worker clones from and opens its PR: the host the App talks to (here the fake, as GHE_HOST).
      expect(win.body.task).toMatchObject({ cloneUrl: `${rig.fake.url}/${REPO}.git`, apiUrl: rig.fake.apiUrl });
      winners.push(ra.status === 200 ? "a" : "b");
    }
    const tasks = await rig.app.database.db.task.findMany();
    expect(tasks).toHaveLength(ROUNDS);
    expect(tasks.every((t) => t.state === "claimed" && t.attempt === 1)).toBe(true);
    expect(await rig.app.database.db.run.count()).toBe(ROUNDS);
    rig.fake.assertNoViolations();
  } finally {
    await rig.stop();
  }
}, 120_000);

if (providers.includes("postgresql")) {
  test(`postgresql, two App processes: ${ROUNDS} rounds of two concurrent claimers give exactly one winner each`, async () => {
    const fake = furnish(await startFakeGitHub());
    fake.state.setFile(REPO, ".github/orchestra.yml", CONFIG);
    const db = await testDatabase("postgresql");
    const secret = randomBytes(8).toString("hex");
    const admin = randomBytes(32).toString("hex");
    const children: ChildProcess[] = [];
    try {
      const env = async () => ({
        ...fake.env,
        WEBHOOK_SECRET: secret,
        ORCHESTRA_ADMIN_TOKEN: admin,
        DATABASE_URL: db.url,
        PORT: String(await freePort()),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
      });
      const one = await startChild(await env());
      children.push(one.proc);
      const two = await startChild(await env());
      children.push(two.proc);
      const urls = [`http://127.0.0.1:${one.port}`, `http://127.0.0.1:${two.port}`];
      const register = async (name: string) => {
        const r = await fetch(`${urls[0]}/api/v1/workers`, {
          method: "POST",
          headers: { authorization: `Bearer ${admin}` },
          body: JSON.stringify({ name }),
        });
        return ((await r.json()) as { token: string }).token;
      };
      const tokens = [await register("a"), await register("b")];
      const claim = (i: 0 | 1) =>
        fetch(`${urls[i]}/api/v1/claims`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokens[i]}` },
          body: "{}",
        });
      const wins = [0, 0];
      for (let n = 1; n <= ROUNDS; n++) {
        fake.state.addIssue(REPO, { number: n, labels: ["agent:queued"], user: "alice" });
        const payload = fakeWebhookPayload(fake, "issues", "labeled", {
          repo: REPO,
          issue: n,
          label: "agent:queued",
          sender: "alice",
        });
        // Alternate which replica receives the webhook; wait until the task exists.
        const res = await sendWebhook(`${urls[n % 2]}/api/github/webhooks`, {
          event: "issues",
          payload,
          secret,
          deliveryId: `race-${n}`,
        });
        expect(res.status).toBe(202);
        await waitForTask(db.url, n);
        const [ra, rb] = await Promise.all([claim(0), claim(1)]);
        expect([ra.status, rb.status].sort()).toEqual([200, 204]);
        wins[ra.status === 200 ? 0 : 1]!++;
      }
      const { default: pg } = await import("pg");
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      const runs = await c.query(`SELECT "taskId", count(*)::int AS n FROM "Run" GROUP BY "taskId"`);
      await c.end();
      expect(runs.rows).toHaveLength(ROUNDS);
      expect(runs.rows.every((r: { n: number }) => r.n === 1)).toBe(true);
      fake.assertNoViolations();
    } finally {
      for (const p of children) p.kill("SIGKILL");
      await db.drop();
      await fake.close();
    }
  }, 180_000);
}

async function waitForTask(url: string, issue: number): Promise<void> {
  const { default: pg } = await import("pg");
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (let i = 0; i < 400; i++) {
      const r = await c.query(`SELECT 1 FROM "Task" WHERE issue = $1 AND state = 'queued'`, [issue]);
      if (r.rowCount) return;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`task for issue ${issue} never queued`);
  } finally {
    await c.end();
  }
}
