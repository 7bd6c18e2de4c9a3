/**
 * Two App processes on one PostgreSQL database, their claims on deliveries
 * and effects lasting an hour: the first is killed with SIGKILL while GitHub
 * takes its escalation comment, before it hears the answer. The second, a
 * replica started after it, sees the first one's beat stand still, releases
 * the effect it was performing, reads GitHub before it writes again and
 * finishes the escalation: the comment once, the labels right, long before
 * the hour-long lease would have let it.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { startFakeGitHub, type FakeGitHub } from "../fake-github/index.js";
import { freePort } from "../support/orchestra.js";
import { startChild } from "../support/processes.js";
import { drained, escalateKilledMidComment, type ChildApp } from "../support/escalation.js";
import { furnish, REPO } from "../support/lifecycle-rig.js";
import { testDatabase, type TestDb } from "../support/databases.js";

// Two processes on one database need PostgreSQL (SQLite has one process, which releases all at start): jest.config.js
// leaves this file out of a run without TEST_DATABASE_URL.
let fake: FakeGitHub;
let db: TestDb;
const children: ChildProcess[] = [];
let env: Record<string, string>;

beforeEach(async () => {
  fake = furnish(await startFakeGitHub());
  db = await testDatabase("postgresql", { migrated: true });
  env = {
    ...fake.env,
    WEBHOOK_SECRET: randomBytes(8).toString("hex"),
    ORCHESTRA_ADMIN_TOKEN: randomBytes(32).toString("hex"),
    DATABASE_URL: db.url,
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    CHILD_LEASE_MS: String(3_600_000),
  };
});

afterEach(async () => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  fake.assertNoViolations();
  await fake.close();
  await db.drop();
});

async function start(): Promise<ChildApp & { proc: ChildProcess; lines: string[] }> {
  const { proc, port } = await startChild({ ...env, PORT: String(await freePort()) });
  children.push(proc);
  const lines: string[] = [];
  proc.stdout!.on("data", (b: Buffer) => lines.push(...b.toString().split("\n").filter(Boolean)));
  return {
    url: `http://127.0.0.1:${port}`,
    secret: env["WEBHOOK_SECRET"]!,
    adminToken: env["ORCHESTRA_ADMIN_TOKEN"]!,
    proc,
    lines,
  };
}

test("postgresql: a replica killed mid-comment has its effect released by the next one to watch its beat", async () => {
  const first = await start();
  await escalateKilledMidComment(fake, first);
  expect(fake.state.commentsOn(REPO, 1)).toHaveLength(1);

  const second = await start();
  await drained(second, 60_000);
  expect(fake.state.commentsOn(REPO, 1)).toHaveLength(1);
  expect(fake.requestsFor("issues/create-comment").filter((q) => q.method === "POST")).toHaveLength(1);
  expect(fake.state.labelsOf(REPO, 1)).toEqual(["agent:blocked"]);
  // It was released, not waited out: the second replica says whose work it took and what.
  const takeover = second.lines
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg?: string; effects?: number; pid?: number })
    .find((l) => l.msg?.startsWith("replicas: a replica stopped beating; what it held was released"));
  expect(takeover).toMatchObject({ pid: first.proc.pid });
  expect(takeover!.effects).toBeGreaterThanOrEqual(1);
  // The released comment was looked for on GitHub before anything was written again.
  expect(fake.requestsFor("issues/list-comments").length).toBeGreaterThanOrEqual(1);
}, 120_000);
