/**
 * The App killed with SIGKILL at the two worst moments for an outbox: after a
 * transition committed and before any of its effects ran, and in the middle
 * of a comment GitHub has already posted. After a restart on the same
 * database, each effect is performed exactly once.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { startFakeGitHub, type FakeGitHub } from "../fake-github/index.js";
import { freePort } from "../support/orchestra.js";
import { startChild } from "../support/processes.js";
import { drained, escalate, escalateKilledMidComment, type ChildApp } from "../support/escalation.js";
import { furnish, REPO } from "../support/lifecycle-rig.js";

let fake: FakeGitHub;
let dir: string;
const children: ChildProcess[] = [];
let env: Record<string, string>;

beforeEach(async () => {
  fake = furnish(await startFakeGitHub());
  dir = mkdtempSync(join(tmpdir(), "orchestra-crash-"));
  env = {
    ...fake.env,
    WEBHOOK_SECRET: randomBytes(8).toString("hex"),
    ORCHESTRA_ADMIN_TOKEN: randomBytes(32).toString("hex"),
    DATABASE_URL: `file:${join(dir, "orchestra.db")}`,
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
  };
});

afterEach(async () => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  fake.assertNoViolations();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(extra: Record<string, string> = {}): Promise<ChildApp & { proc: ChildProcess }> {
  const { proc, port } = await startChild({ ...env, PORT: String(await freePort()), ...extra });
  children.push(proc);
  return {
    url: `http://127.0.0.1:${port}`,
    secret: env["WEBHOOK_SECRET"]!,
    adminToken: env["ORCHESTRA_ADMIN_TOKEN"]!,
    proc,
  };
}

async function kill(proc: ChildProcess): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(null) : proc.once("exit", r)));
}

const writes = (op: string) => fake.requestsFor(op).filter((q) => q.method !== "GET");

test("killed after the transitions committed and before any effect ran: after a restart each effect is performed once", async () => {
  const first = await start({ CHILD_EFFECTS: "off" });
  await escalate(fake, first);
  // Committed, not performed: GitHub has seen no write at all.
  expect(
    fake.requests.filter((q) => q.method !== "GET" && !q.path.includes("/access_tokens") && q.path !== "/graphql"),
  ).toEqual([]);
  await kill(first.proc);
  const second = await start();
  await drained(second);
  expect(fake.state.labelsOf(REPO, 1)).toEqual(["agent:blocked"]);
  expect(fake.state.commentsOn(REPO, 1)).toHaveLength(1);
  expect(writes("issues/create-comment")).toHaveLength(1);
  // The in-progress label was for a state the task had left by then: dropped. Blocked added once, queued removed once.
  expect(writes("issues/add-labels").map((q) => (q.body as { labels: string[] }).labels)).toEqual([["agent:blocked"]]);
  expect(writes("issues/remove-label").map((q) => decodeURIComponent(q.path.split("/").pop()!))).toEqual([
    "agent:queued",
  ]);
});

test("killed while GitHub was posting its comment: after a restart the comment is found by its marker, never posted twice", async () => {
  const first = await start();
  await escalateKilledMidComment(fake, first);
  expect(fake.state.commentsOn(REPO, 1)).toHaveLength(1);
  const second = await start();
  await drained(second);
  expect(fake.state.commentsOn(REPO, 1)).toHaveLength(1);
  expect(writes("issues/create-comment")).toHaveLength(1);
  expect(fake.state.labelsOf(REPO, 1)).toEqual(["agent:blocked"]);
  // The restarted App looked before it wrote.
  expect(fake.requestsFor("issues/list-comments").length).toBeGreaterThanOrEqual(1);
});
