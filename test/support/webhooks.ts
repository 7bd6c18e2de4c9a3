/**
 * Webhook deliveries as GitHub sends them: real example payloads from
 * @octokit/webhooks-examples, an `installation` key (the examples have none,
 * and Probot needs it to authenticate), GitHub's headers and HMAC signature.
 */
import { createHmac, randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import type { FakeGitHub } from "../fake-github/index.js";

export type Payload = Record<string, unknown>;

interface ExampleGroup {
  name: string;
  actions: string[];
  examples: Payload[];
}

export type DeepPartial<T> = T extends object ? { [K in keyof T]?: DeepPartial<T[K]> | null } : T;

let groups: ExampleGroup[] | null = null;

function loadExamples(): ExampleGroup[] {
  if (!groups) {
    const require = createRequire(import.meta.url);
    const file = require.resolve("@octokit/webhooks-examples/api.github.com/index.json");
    groups = JSON.parse(fs.readFileSync(file, "utf8")) as ExampleGroup[];
  }
  return groups;
}

/** The example payloads GitHub documents for an event (and action). */
export function listExamples(event: string, action?: string): Payload[] {
  const group = loadExamples().find((g) => g.name === event);
  if (!group) {
    throw new Error(
      `no webhook examples for event "${event}"; known: ${loadExamples()
        .map((g) => g.name)
        .join(", ")}`,
    );
  }
  const list = action === undefined ? group.examples : group.examples.filter((e) => e.action === action);
  if (!list.length) {
    throw new Error(`no "${event}" example with action "${action}"; actions: ${group.actions.join(", ") || "(none)"}`);
  }
  return list;
}

/** A deep copy of a real example payload, untouched (the first one, or `index`). */
export function rawExample(event: string, action?: string, index = 0): Payload {
  const list = listExamples(event, action);
  const example = list[index];
  if (!example) throw new Error(`"${event}.${action}" has ${list.length} example(s), no index ${index}`);
  return structuredClone(example);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Merge `overrides` into `base` recursively: objects merge, arrays and
 * scalars replace, `null` replaces, `undefined` leaves the base value.
 */
export function deepMerge<T>(base: T, overrides: DeepPartial<T> | Record<string, unknown> | undefined): T {
  if (overrides === undefined) return base;
  const b: unknown = base;
  const o: unknown = overrides;
  if (!isPlainObject(b) || !isPlainObject(o)) return o as T;
  const out: Record<string, unknown> = { ...b };
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k], v) : structuredClone(v);
  }
  return out as T;
}

/** `merge` is the older name some tests import. */
export const merge = deepMerge;

export function installationRef(id: number): { id: number; node_id: string } {
  return { id, node_id: Buffer.from(`04:IntegrationInstallation${id}`).toString("base64") };
}

/**
 * GitHub's example payload for `event` (and `action`) with an installation
 * (id 1 unless overridden) and `overrides` deep-merged in.
 */
export function examplePayload(
  event: string,
  action?: string,
  overrides: Record<string, unknown> = {},
  opts: { index?: number } = {},
): Payload {
  const base = rawExample(event, action, opts.index);
  const inst = overrides.installation as { id?: unknown; node_id?: unknown } | undefined;
  // keep node_id consistent with an overridden installation id
  base.installation = installationRef(typeof inst?.id === "number" ? inst.id : 1);
  return deepMerge(base, overrides);
}

/**
 * The `updated_at` of the `n`th change to one object. GitHub's bodies of two
 * events differ at least there, and the App takes a byte-identical body under
 * a new delivery id as a replay: tests that send one example many times as
 * distinct events stamp each with its own moment.
 */
export function nthUpdate(n: number): string {
  return new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** `sha256=<hex>` over the exact body bytes, as in `X-Hub-Signature-256`. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** The headers GitHub's webhook deliveries carry. */
export function webhookHeaders(
  event: string,
  body: string,
  secret: string,
  deliveryId: string = randomUUID(),
): Record<string, string> {
  let installationId: unknown;
  try {
    installationId = (JSON.parse(body) as { installation?: { id?: unknown } }).installation?.id;
  } catch {
    installationId = undefined;
  }
  return {
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/044aadd",
    "x-github-event": event,
    "x-github-delivery": deliveryId,
    "x-github-hook-id": "123456789",
    "x-github-hook-installation-target-type": "integration",
    "x-github-hook-installation-target-id": String(installationId ?? "1"),
    "x-hub-signature": `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`,
    "x-hub-signature-256": signatureOf(secret, body),
  };
}

export interface WebhookDelivery {
  event: string;
  /** serialised with JSON.stringify unless already a string */
  payload: unknown;
  secret: string;
  deliveryId?: string;
  /** replace the computed X-Hub-Signature-256 (to test rejection) */
  signature?: string;
}

/** POST a delivery to the App (e.g. `${appUrl}/api/github/webhooks`) and return the response. */
export async function sendWebhook(url: string, d: WebhookDelivery): Promise<Response> {
  const body = typeof d.payload === "string" ? d.payload : JSON.stringify(d.payload);
  const headers = webhookHeaders(d.event, body, d.secret, d.deliveryId);
  if (d.signature !== undefined) headers["x-hub-signature-256"] = d.signature;
  return postOnNewConnection(url, headers, body);
}

/**
 * One connection per delivery, as GitHub's deliveries come: never a socket
 * from fetch's shared pool. A pooled socket that another call (a worker's,
 * an admin's) kept alive can be closed by the server's idle timer while this
 * process is busy, and the delivery written to it then meets ECONNRESET
 * before any answer: the client's fault, not the App's.
 */
function postOnNewConnection(url: string, headers: Record<string, string>, body: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", agent: false, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const answer = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") answer.set(k, v);
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks);
          resolve(new Response([204, 304].includes(status) ? null : text, { status, headers: answer }));
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * A payload that agrees with the fake's state: repository, issue, pull
 * request, comment, label and sender are rendered by the fake's serializers,
 * and `installation` is the repository's. Example fields not covered stay.
 */
export function fakeWebhookPayload(
  fake: FakeGitHub,
  event: string,
  action: string | undefined,
  refs: {
    repo: string;
    issue?: number;
    pull?: number;
    comment?: number;
    label?: string;
    sender?: string;
  },
  overrides: Record<string, unknown> = {},
): Payload {
  const repo = fake.state.repo(refs.repo);
  const replace: Record<string, unknown> = {
    repository: fake.json.repo(repo),
    sender: fake.json.user(refs.sender ?? repo.owner),
  };
  if (refs.issue !== undefined) replace.issue = fake.json.issue(repo, fake.state.issue(refs.repo, refs.issue));
  if (refs.pull !== undefined) replace.pull_request = fake.json.pull(repo, fake.state.pull(refs.repo, refs.pull), true);
  if (refs.comment !== undefined) {
    const c = repo.comments.get(refs.comment);
    if (!c) throw new Error(`no comment ${refs.comment} in ${refs.repo}`);
    replace.comment = fake.json.comment(repo, c);
  }
  if (refs.label !== undefined) {
    const l = repo.labels.get(refs.label.toLowerCase()) ?? fake.state.addLabel(refs.repo, refs.label);
    replace.label = fake.json.label(repo, l);
  }
  const owner = fake.state.users.get(repo.owner.toLowerCase());
  if (owner?.type === "Organization") replace.organization = { ...fake.json.user(repo.owner), description: null };
  const base = rawExample(event, action);
  // whole objects are swapped (not merged) so no example leftovers hide in them
  for (const [k, v] of Object.entries(replace)) base[k] = v;
  base.installation = installationRef(repo.installationId ?? 1);
  return deepMerge(base, overrides);
}
