// 1,000 requests no one should be able to hurt the service with: bytes that are not JSON, bodies cut off,
// no signature, a signature made with another secret or over another body, GitHub's published HMAC test
// vector (valid for its own secret, not for this App's), bodies past GitHub's 25 MB limit, missing headers.
// Every one must be refused with a 4xx, the process must keep running and ready, and no table may gain a row.
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { request } from "node:http";
import { fakeWebhookPayload, webhookHeaders } from "../../test/support/webhooks.js";
import { REPO, type FaultWorld } from "./world.js";

/** docs.github.com, "Validating webhook deliveries": this secret and payload give this signature. */
export const GITHUB_TEST_VECTOR = {
  secret: "It's a Secret to Everybody",
  payload: "Hello, World!",
  signature: "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
};

export interface MalformedResult {
  sent: number;
  byKind: Record<string, Record<string, number>>;
  serverErrors: number;
  crashed: boolean;
  rowsBefore: number;
  rowsAfter: number;
  testVectorHolds: boolean;
}

const sign = (secret: string, body: Buffer | string) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

function post(url: string, headers: Record<string, string>, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: "POST", headers: { ...headers, "content-length": String(body.length) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

export async function malformedScenario(w: FaultWorld, o: { count: number }): Promise<MalformedResult> {
  const url = `${w.service.url}/api/github/webhooks`;
  const good = JSON.stringify(fakeWebhookPayload(w.fake, "issues", "labeled", { repo: REPO, issue: 1, label: "bug" }));
  const kinds: Record<string, () => { headers: Record<string, string>; body: Buffer }> = {
    "not JSON, signed": () => {
      const body = randomBytes(64 + Math.floor(Math.random() * 512));
      return {
        headers: {
          ...webhookHeaders("issues", "", w.webhookSecret),
          "x-hub-signature-256": sign(w.webhookSecret, body),
        },
        body,
      };
    },
    "no signature": () => {
      const h = webhookHeaders("issues", good, w.webhookSecret);
      delete h["x-hub-signature-256"];
      delete h["x-hub-signature"];
      return { headers: h, body: Buffer.from(good) };
    },
    "another secret": () => ({ headers: webhookHeaders("issues", good, "not-the-secret"), body: Buffer.from(good) }),
    "signature over another body": () => ({
      headers: webhookHeaders("issues", good.replace('"bug"', '"bugs"'), w.webhookSecret),
      body: Buffer.from(good),
    }),
    "cut off": () => {
      const body = Buffer.from(good.slice(0, Math.floor(good.length / 2)));
      return { headers: webhookHeaders("issues", good, w.webhookSecret), body };
    },
    "GitHub's test vector": () => ({
      headers: {
        ...webhookHeaders("issues", "", w.webhookSecret),
        "x-hub-signature-256": GITHUB_TEST_VECTOR.signature,
      },
      body: Buffer.from(GITHUB_TEST_VECTOR.payload),
    }),
    "test vector body, signed for this App": () => ({
      headers: webhookHeaders("issues", GITHUB_TEST_VECTOR.payload, w.webhookSecret),
      body: Buffer.from(GITHUB_TEST_VECTOR.payload),
    }),
    "no event header": () => {
      const h = webhookHeaders("issues", good, w.webhookSecret);
      delete h["x-github-event"];
      return { headers: h, body: Buffer.from(good) };
    },
    "no delivery id": () => {
      const h = webhookHeaders("issues", good, w.webhookSecret);
      h["x-github-delivery"] = "";
      return { headers: h, body: Buffer.from(good) };
    },
  };
  const names = Object.keys(kinds);
  const rows = async () => {
    const d = await w.api<{ counts: Record<string, number> }>("/api/v1/deliveries?limit=1");
    const e = await w.api<{ counts: Record<string, number> }>("/api/v1/effects?limit=1");
    return [...Object.values(d.counts), ...Object.values(e.counts)].reduce((a, b) => a + b, 0);
  };
  const rowsBefore = await rows();
  const pid = w.service.child.proc.pid;
  const byKind: Record<string, Record<string, number>> = {};
  let serverErrors = 0;
  const oversized = Buffer.alloc(26 * 1024 * 1024, 0x20);
  for (let i = 0; i < o.count; i++) {
    const kind = i % 100 === 99 ? "past 25 MB" : names[i % names.length]!;
    const { headers, body } =
      kind === "past 25 MB"
        ? { headers: webhookHeaders("issues", "", w.webhookSecret, randomUUID()), body: oversized }
        : kinds[kind]!();
    const status = await post(url, headers, body);
    (byKind[kind] ??= {})[String(status)] = (byKind[kind][String(status)] ?? 0) + 1;
    if (status >= 500 || status === 0) serverErrors += 1;
  }
  const ready = await fetch(`${w.service.url}/ready`).then(
    (r) => r.status === 200,
    () => false,
  );
  return {
    sent: o.count,
    byKind,
    serverErrors,
    crashed: !ready || w.service.child.exit !== null || w.service.child.proc.pid !== pid,
    rowsBefore,
    rowsAfter: await rows(),
    testVectorHolds: sign(GITHUB_TEST_VECTOR.secret, GITHUB_TEST_VECTOR.payload) === GITHUB_TEST_VECTOR.signature,
  };
}
