/**
 * Driving an App process from outside (test/support/child.ts): queue issue 1,
 * claim it and exit at the turn cap, so the App records an escalation (a
 * comment and a label swap) in its outbox; and waiting, through the operator
 * API, until the outbox has drained.
 */
import { eventually } from "./orchestra.js";
import { fakeWebhookPayload, sendWebhook } from "./webhooks.js";
import { REPO } from "./lifecycle-rig.js";
import type { ChildProcess } from "node:child_process";
import type { FakeGitHub } from "../fake-github/index.js";

export interface ChildApp {
  url: string;
  secret: string;
  adminToken: string;
}

/** Queue issue 1, claim it, and exit at the turn cap: blocked, one escalation comment, labels swapped. */
export async function escalate(fake: FakeGitHub, app: ChildApp, deliveryId = "crash-1"): Promise<void> {
  fake.state.addIssue(REPO, { number: 1, title: "Issue 1", labels: ["agent:queued"], user: "alice" });
  const payload = fakeWebhookPayload(fake, "issues", "labeled", {
    repo: REPO,
    issue: 1,
    label: "agent:queued",
    sender: "alice",
  });
  const delivered = await sendWebhook(`${app.url}/api/github/webhooks`, {
    event: "issues",
    payload,
    secret: app.secret,
    deliveryId,
  });
  expect(delivered.status).toBe(202);
  const admin = { authorization: `Bearer ${app.adminToken}` };
  const { token } = (await (
    await fetch(`${app.url}/api/v1/workers`, { method: "POST", headers: admin, body: JSON.stringify({ name: "w" }) })
  ).json()) as { token: string };
  const worker = { authorization: `Bearer ${token}` };
  const claim = await eventually(
    async () => {
      const r = await fetch(`${app.url}/api/v1/claims`, { method: "POST", headers: worker, body: "{}" });
      return r.status === 200 ? ((await r.json()) as { run: { id: string; leaseEpoch: string } }) : undefined;
    },
    10_000,
    "a claim",
  );
  const exit = await fetch(`${app.url}/api/v1/runs/${claim.run.id}/exit`, {
    method: "POST",
    headers: worker,
    body: JSON.stringify({
      leaseEpoch: claim.run.leaseEpoch,
      exitCode: 1,
      turnCapHit: true,
      lastToolCalls: ["edit", "test"],
    }),
  });
  expect(((await exit.json()) as { class: string }).class).toBe("turn-cap-spinning");
}

/** Waits until the App's outbox has nothing pending or running (asked through its operator API). */
export async function drained(app: ChildApp, timeoutMs = 15_000): Promise<void> {
  await eventually(
    async () => {
      const r = await fetch(`${app.url}/api/v1/effects`, { headers: { authorization: `Bearer ${app.adminToken}` } });
      const { counts } = (await r.json()) as { counts: Record<string, number> };
      return (counts["pending"] ?? 0) + (counts["running"] ?? 0) === 0 && (counts["done"] ?? 0) > 0 ? true : undefined;
    },
    timeoutMs,
    "the outbox drained",
  );
}

/**
 * `escalate`, with the App killed (SIGKILL) when its executor posts the escalation comment: GitHub takes the
 * comment, and the App dies before it hears the answer. Returns once the App is dead.
 */
export async function escalateKilledMidComment(
  fake: FakeGitHub,
  app: ChildApp & { proc: ChildProcess },
): Promise<void> {
  fake.beforeHandle((op) => {
    if (op === "issues/create-comment") app.proc.kill("SIGKILL");
  });
  await escalate(fake, app);
  // The exit answered at commit; the App dies when the executor posts the comment.
  await eventually(() => (app.proc.signalCode === "SIGKILL" ? true : undefined), 10_000, "the App killed mid-comment");
  fake.beforeHandle(null);
}
