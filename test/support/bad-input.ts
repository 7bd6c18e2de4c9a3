/**
 * Bad requests as fast-check arbitraries, for test/http/bad-input.property.test.ts:
 * webhook deliveries unsigned, mis-signed, truncated or tampered after signing,
 * signed but not a JSON object, missing a header, cut off in transit or
 * oversized; worker API requests with bad paths, tokens, bodies and content
 * types. Each case prints short in a failure report.
 */
import { createHmac, randomUUID } from "node:crypto";
import { connect } from "node:net";
import fc from "fast-check";
import { examplePayload } from "./webhooks.js";

export const HOOK = "/api/github/webhooks";
/** GitHub's cap on a webhook payload, which the service enforces. */
export const MAX_WEBHOOK = 25 * 1024 * 1024;
/** The worker API's body limit (src/http/body.ts). */
export const MAX_API_BODY = 256 * 1024;

const hmac = (alg: "sha256" | "sha1", secret: string, body: Buffer) =>
  createHmac(alg, secret).update(body).digest("hex");
export const sign = (secret: string, body: Buffer) => `sha256=${hmac("sha256", secret, body)}`;

export const payloadText = JSON.stringify(examplePayload("issues", "labeled", { installation: { id: 1 } }));
const oversizedWebhook = Buffer.alloc(MAX_WEBHOOK + 1, 0x20);
oversizedWebhook[0] = 0x7b;
const oversizedApi = Buffer.from(JSON.stringify({ leaseEpoch: "1", exitCode: 0, question: "q".repeat(MAX_API_BODY) }));

/** Bodies of every shape: real payloads cut or spliced, random JSON and text, raw bytes, odd corners of JSON. */
const anyBody: fc.Arbitrary<Buffer> = fc
  .oneof(
    fc.constant(payloadText),
    fc.json(),
    fc.string({ maxLength: 300 }),
    fc
      .tuple(fc.nat(), fc.string({ maxLength: 50 }))
      .map(([i, s]) => payloadText.slice(0, i % payloadText.length) + s + payloadText.slice(i % payloadText.length)),
    fc.nat().map((i) => payloadText.slice(0, i % payloadText.length)),
    fc.constantFrom(
      "",
      "{",
      "[",
      "null",
      "0",
      '"x"',
      "[]",
      "\uFEFF{}",
      '{"a":"\\u0000"}',
      '{"action":{}}',
      "{".repeat(5000),
      "[".repeat(20000) + "]".repeat(20000),
      '{"__proto__":{"x":1}}',
    ),
    fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
  )
  .map((b) => (Buffer.isBuffer(b) ? b : Buffer.from(b)));

/** A body that is not a JSON object: a correctly signed one must still be refused. */
const notAnObject = anyBody.filter((b) => {
  try {
    const v: unknown = JSON.parse(b.toString("utf8"));
    return v === null || typeof v !== "object" || Array.isArray(v);
  } catch {
    return true;
  }
});

export interface Case {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** Sent over a raw socket: Content-Length declares more than is sent, then the client hangs up. */
  cutAt?: number;
  /** The server may refuse it by closing the connection instead of answering. */
  mayReset?: boolean;
}

export function webhookCases(secret: string): fc.Arbitrary<Case> {
  const headers = (body: Buffer, signature: string | null, extra: Record<string, string> = {}) => ({
    "content-type": "application/json",
    "x-github-event": "issues",
    "x-github-delivery": randomUUID(),
    ...(signature === null ? {} : { "x-hub-signature-256": signature }),
    ...extra,
  });
  const post = (kind: string, body: Buffer, h: Record<string, string>, more: Partial<Case> = {}): Case => ({
    kind,
    method: "POST",
    path: HOOK,
    headers: h,
    body,
    ...more,
  });
  const wrongSignature = (body: Buffer) =>
    fc.oneof(
      fc
        .string({ minLength: 4, maxLength: 20 })
        .filter((s) => s !== secret)
        .map((s) => sign(s, body)),
      fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => `sha256=${h}`),
      fc.constant(`sha1=${hmac("sha1", secret, body)}`),
      fc.constant(sign(secret, body).toUpperCase()),
      fc.constant(`${sign(secret, body)}0`),
      fc.constant(sign(secret, body).slice(0, -1)),
      fc.constant("sha256="),
      fc.stringMatching(/^[ -~]{1,80}$/),
    );
  return fc.oneof(
    { weight: 4, arbitrary: anyBody.map((b) => post("unsigned", b, headers(b, null))) },
    { weight: 6, arbitrary: anyBody.chain((b) => wrongSignature(b).map((s) => post("mis-signed", b, headers(b, s)))) },
    {
      weight: 4,
      arbitrary: anyBody
        .filter((b) => b.length > 1)
        .chain((b) =>
          fc
            .integer({ min: 0, max: b.length - 1 })
            .map((n) => post("truncated after signing", b.subarray(0, n), headers(b, sign(secret, b)))),
        ),
    },
    {
      weight: 3,
      arbitrary: anyBody
        .filter((b) => b.length > 0)
        .chain((b) =>
          fc.tuple(fc.integer({ min: 0, max: b.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([i, x]) => {
            const t = Buffer.from(b);
            t[i] = t[i]! ^ x;
            return post("tampered after signing", t, headers(b, sign(secret, b)));
          }),
        ),
    },
    { weight: 4, arbitrary: notAnObject.map((b) => post("signed, not a JSON object", b, headers(b, sign(secret, b)))) },
    {
      weight: 2,
      arbitrary: fc.tuple(anyBody, fc.constantFrom("x-github-event", "x-github-delivery")).map(([b, drop]) => {
        const h = headers(b, sign(secret, b));
        delete h[drop as keyof typeof h];
        return post(`signed, no ${drop}`, b, h);
      }),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constant(Buffer.from(payloadText)), fc.integer({ min: 1, max: 5000 })).map(([b, n]) => {
        const cut = Math.max(0, b.length - n);
        return post("cut off in transit", b, headers(b, sign(secret, b)), { cutAt: cut });
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .boolean()
        .map((signed) =>
          post(
            "oversized",
            oversizedWebhook,
            headers(oversizedWebhook, signed ? sign(secret, oversizedWebhook) : "sha256=00"),
            { mayReset: true },
          ),
        ),
    },
  );
}

export function workerCases(workerToken: string): fc.Arbitrary<Case> {
  // Not "." or ".." (nor %2E%2E): a client resolves those away before sending, so they never reach a route.
  const runId = fc.oneof(
    fc.constant(randomUUID()),
    fc
      .string({ minLength: 1, maxLength: 40 })
      .filter((s) => s !== "." && s !== "..")
      .map(encodeURIComponent),
    fc.constantFrom("%zz", "%E0%A4%A", "%00", "%", "me", "%2F"),
  );
  const path = runId.chain((id) =>
    fc.constantFrom(
      "/api/v1/claims",
      `/api/v1/runs/${id}/heartbeat`,
      `/api/v1/runs/${id}/exit`,
      `/api/v1/runs/${id}/decision-requests`,
      `/api/v1/runs/${id}/decisions/${id}/receipt`,
      "/api/v1/workers",
      "/api/v1/workers/me/runs",
      "/api/v1/pause",
      `/api/v1/tasks/${id}`,
    ),
  );
  const auth = fc.oneof(
    fc.constant(`Bearer ${workerToken}`),
    fc.constant(`Bearer ${workerToken}`),
    fc.constant(null),
    fc.stringMatching(/^[!-~]{1,60}$/).map((t) => `Bearer ${t}`),
    fc.constantFrom("Bearer", "Basic dXNlcjpwYXNz", `bearer  ${workerToken}x`, `Token ${workerToken}`),
  );
  const body = fc.oneof(
    { weight: 8, arbitrary: anyBody },
    { weight: 2, arbitrary: fc.constant(oversizedApi) },
    {
      weight: 3,
      arbitrary: fc
        .record(
          {
            leaseEpoch: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
            exitCode: fc.oneof(fc.integer(), fc.string(), fc.double()),
            question: fc.string(),
          },
          { requiredKeys: [] },
        )
        .map((o) => Buffer.from(JSON.stringify(o))),
    },
  );
  return fc
    .record({
      method: fc.constantFrom("POST", "POST", "POST", "GET", "PUT", "DELETE"),
      path,
      auth,
      body,
      contentType: fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", null),
    })
    .map((r): Case => ({
      kind: "worker API",
      method: r.method,
      path: r.path,
      headers: {
        ...(r.auth === null ? {} : { authorization: r.auth }),
        ...(r.contentType === null ? {} : { "content-type": r.contentType }),
      },
      body: r.method === "GET" ? null : r.body,
    }));
}

/**
 * Sends a request over a raw socket and drops the connection before the
 * declared body is complete, as a client that dies mid-upload does.
 */
export function cutOff(port: number, c: Case): Promise<void> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.on("error", () => {});
    s.on("close", () => resolve());
    s.on("connect", () => {
      const head = [
        `${c.method} ${c.path} HTTP/1.1`,
        "host: 127.0.0.1",
        `content-length: ${c.body!.length}`,
        ...Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`),
        "",
        "",
      ].join("\r\n");
      s.write(Buffer.concat([Buffer.from(head), c.body!.subarray(0, c.cutAt)]), () => s.destroy());
    });
  });
}

/** A case as a failure report shows it: what was sent, the body cut to its first bytes. */
export function readable(c: Case): Case {
  const body =
    c.body === null ? "no body" : `${c.body.length} bytes: ${JSON.stringify(c.body.subarray(0, 120).toString("utf8"))}`;
  return Object.assign(c, {
    [fc.toStringMethod]: () =>
      `${c.kind}: ${c.method} ${c.path} ${JSON.stringify(c.headers)} ${body}${c.cutAt !== undefined ? ` cut at ${c.cutAt}` : ""}`,
  });
}
