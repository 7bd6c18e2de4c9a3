/**
 * Webhook deliveries for tests: GitHub's real example payloads, adjusted per
 * test, signed the way GitHub signs them.
 */
import { createHmac, randomUUID } from "node:crypto";
import { createRequire } from "node:module";

interface ExampleGroup {
  name: string;
  actions: string[];
  examples: Array<Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
let groups: ExampleGroup[] | undefined;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Deep merge: objects merge, everything else (arrays included) is replaced. */
export function merge<T extends Record<string, unknown>>(base: T, over: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(out[k]) ? merge(out[k] as Record<string, unknown>, v) : v;
  return out as T;
}

/**
 * A deep copy of GitHub's example payload for `event` (and `action`), with
 * `overrides` merged in. The examples carry no installation; add one.
 */
export function examplePayload(event: string, action?: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  groups ??= require("@octokit/webhooks-examples/api.github.com/index.json") as ExampleGroup[];
  const group = groups.find((g) => g.name === event);
  if (!group) throw new Error(`no example payloads for event ${event}`);
  const example = group.examples.find((e) => (action === undefined ? true : e["action"] === action));
  if (!example) throw new Error(`no example payload for ${event}.${action}`);
  const copy = structuredClone(example);
  return merge(copy, { installation: { id: 1, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" }, ...overrides });
}

export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export function webhookHeaders(event: string, body: string, secret: string, deliveryId: string = randomUUID()): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/8a5e3c1",
    "x-github-event": event,
    "x-github-delivery": deliveryId,
    "x-github-hook-id": "1",
    "x-github-hook-installation-target-type": "integration",
    "x-hub-signature-256": signatureOf(secret, body),
  };
}

export function sendWebhook(url: string, opts: { event: string; payload: unknown; secret: string; deliveryId?: string }): Promise<Response> {
  const body = JSON.stringify(opts.payload);
  return fetch(url, { method: "POST", headers: webhookHeaders(opts.event, body, opts.secret, opts.deliveryId), body });
}
