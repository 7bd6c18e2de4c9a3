/**
 * GitHub's own webhooks for what a client did through the fake: on GitHub a
 * pull request opened through the API, a merge, or a `git push` is followed by
 * its webhook without anyone asking. End-to-end tests in which a real worker
 * pushes and opens its PR turn this on, so the App hears of the PR the way it
 * would in production, not because the test delivered it by hand.
 *
 *   autoWebhooks(fake);   // after fake.setWebhookTarget(app webhook URL, secret)
 *
 * `then` sees every request after that, as `fake.afterHandle` would (the fake keeps one such hook).
 */
import type { FakeGitHub, RecordedRequest } from "../fake-github/index.js";
import { fakeWebhookPayload } from "./webhooks.js";

const PULLS = /^\/repos\/([^/]+)\/([^/]+)\/pulls(?:\/(\d+)\/merge)?$/;

/** Which webhook a finished request causes, or null. */
function pullEventOf(
  rec: { operationId?: string; method: string; path: string },
  reply: { status: number; body?: unknown },
): { repo: string; number: number; action: "opened" | "closed" } | null {
  const m = PULLS.exec(rec.path);
  if (!m) return null;
  const repo = `${m[1]}/${m[2]}`;
  if (rec.operationId === "pulls/create" && reply.status === 201) {
    const number = (reply.body as { number?: unknown } | undefined)?.number;
    return typeof number === "number" ? { repo, number, action: "opened" } : null;
  }
  if (rec.operationId === "pulls/merge" && reply.status === 200 && m[3]) {
    return { repo, number: Number(m[3]), action: "closed" };
  }
  return null;
}

/** Turns on GitHub's webhooks for pushes, pull requests opened through the API, and merges. */
export function autoWebhooks(
  fake: FakeGitHub,
  then?: (rec: RecordedRequest, reply: { status: number; body?: unknown }) => void | Promise<void>,
): void {
  fake.deliverPushes(true);
  fake.afterHandle(async (rec, reply) => {
    const event = pullEventOf(rec, reply);
    if (!event) return then?.(rec, reply);
    const pull = fake.state.pull(event.repo, event.number);
    const sender = event.action === "closed" ? pull.mergedBy : fake.state.issue(event.repo, event.number).user;
    const payload = fakeWebhookPayload(fake, "pull_request", event.action, {
      repo: event.repo,
      pull: event.number,
      ...(sender ? { sender } : {}),
    });
    payload["action"] = event.action;
    payload["number"] = event.number;
    await fake.state.hookDeliveries.send("pull_request", payload);
    await then?.(rec, reply);
  });
}
