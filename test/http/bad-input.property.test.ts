/**
 * Bad input thrown at the real server, as a property: 1,000 malformed,
 * truncated, mis-signed and oversized webhook deliveries and worker API
 * requests against one server process (the build's test child, wired like
 * src/main.ts). Whatever arrives: no 5xx except a deliberate 503, the process
 * stays up and answers /health afterwards, and nothing is stored — every
 * table has as many rows afterwards as before (see UNCOMPARED for the three
 * that input does not decide).
 */
import type { ChildProcess } from "node:child_process";
import { createHmac, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { connect } from "node:net";
import fc from "fast-check";
import { openDatabase, type Database } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { freePort } from "../support/orchestra.js";
import { startChild } from "../support/processes.js";
import { examplePayload } from "../support/webhooks.js";

const HOOK = "/api/github/webhooks";
/** GitHub's cap on a webhook payload, which the service enforces. */
const MAX_WEBHOOK = 25 * 1024 * 1024;
/** The worker API's body limit (src/http/body.ts). */
const MAX_API_BODY = 256 * 1024;
const RUNS = 1000;

const key = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const hmac = (alg: "sha256" | "sha1", secret: string, body: Buffer) => createHmac(alg, secret).update(body).digest("hex");
const sign = (secret: string, body: Buffer) => `sha256=${hmac("sha256", secret, body)}`;

const payloadText = JSON.stringify(examplePayload("issues", "labeled", { installation: { id: 1 } }));
const oversizedWebhook = Buffer.alloc(MAX_WEBHOOK + 1, 0x20);
oversizedWebhook[0] = 0x7b;
const oversizedApi = Buffer.from(JSON.stringify({ leaseEpoch: "1", exitCode: 0, question: "q".repeat(MAX_API_BODY) }));

/** Bodies of every shape: real payloads cut or spliced, random JSON and text, raw bytes, odd corners of JSON. */
const anyBody: fc.Arbitrary<Buffer> = fc.oneof(
  fc.constant(payloadText),
  fc.json(),
  fc.string({ maxLength: 300 }),
  fc.tuple(fc.nat(), fc.string({ maxLength: 50 })).map(([i, s]) => payloadText.slice(0, i % payloadText.length) + s + payloadText.slice(i % payloadText.length)),
  fc.nat().map((i) => payloadText.slice(0, i % payloadText.length)),
  fc.constantFrom("", "{", "[", "null", "0", '"x"', "[]", "\uFEFF{}", '{"a":"\\u0000"}', '{"action":{}}', "{".repeat(5000), "[".repeat(20000) + "]".repeat(20000), '{"__proto__":{"x":1}}'),
  fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
).map((b) => (Buffer.isBuffer(b) ? b : Buffer.from(b)));

/** A body that is not a JSON object: a correctly signed one must still be refused. */
const notAnObject = anyBody.filter((b) => {
  try {
    const v: unknown = JSON.parse(b.toString("utf8"));
    return v === null || typeof v !== "object" || Array.isArray(v);
  } catch {
    return true;
  }
});

interface Case {
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

function webhookCases(secret: string): fc.Arbitrary<Case> {
  const headers = (body: Buffer, signature: string | null, extra: Record<string, string> = {}) => ({
    "content-type": "application/json",
    "x-github-event": "issues",
    "x-github-delivery": randomUUID(),
    ...(signature === null ? {} : { "x-hub-signature-256": signature }),
    ...extra,
  });
  const post = (kind: string, body: Buffer, h: Record<string, string>, more: Partial<Case> = {}): Case => ({ kind, method: "POST", path: HOOK, headers: h, body, ...more });
  const wrongSignature = (body: Buffer) =>
    fc.oneof(
      fc.string({ minLength: 4, maxLength: 20 }).filter((s) => s !== secret).map((s) => sign(s, body)),
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
      arbitrary: anyBody.filter((b) => b.length > 1).chain((b) => fc.integer({ min: 0, max: b.length - 1 }).map((n) => post("truncated after signing", b.subarray(0, n), headers(b, sign(secret, b))))),
    },
    {
      weight: 3,
      arbitrary: anyBody.filter((b) => b.length > 0).chain((b) =>
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
    { weight: 1, arbitrary: fc.boolean().map((signed) => post("oversized", oversizedWebhook, headers(oversizedWebhook, signed ? sign(secret, oversizedWebhook) : "sha256=00"), { mayReset: true })) },
  );
}

function workerCases(workerToken: string): fc.Arbitrary<Case> {
  // Not "." or ".." (nor %2E%2E): a client resolves those away before sending, so they never reach a route.
  const runId = fc.oneof(
    fc.constant(randomUUID()),
    fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s !== "." && s !== "..").map(encodeURIComponent),
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
      arbitrary: fc.record({ leaseEpoch: fc.oneof(fc.string(), fc.integer(), fc.constant(null)), exitCode: fc.oneof(fc.integer(), fc.string(), fc.double()), question: fc.string() }, { requiredKeys: [] }).map((o) => Buffer.from(JSON.stringify(o))),
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
    .map(
      (r): Case => ({
        kind: "worker API",
        method: r.method,
        path: r.path,
        headers: { ...(r.auth === null ? {} : { authorization: r.auth }), ...(r.contentType === null ? {} : { "content-type": r.contentType }) },
        body: r.method === "GET" ? null : r.body,
      }),
    );
}

/**
 * Sends a request over a raw socket and drops the connection before the
 * declared body is complete, as a client that dies mid-upload does.
 */
function cutOff(port: number, c: Case): Promise<void> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.on("error", () => {});
    s.on("close", () => resolve());
    s.on("connect", () => {
      const head = [`${c.method} ${c.path} HTTP/1.1`, "host: 127.0.0.1", `content-length: ${c.body!.length}`, ...Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
      s.write(Buffer.concat([Buffer.from(head), c.body!.subarray(0, c.cutAt)]), () => s.destroy());
    });
  });
}

/** A case as a failure report shows it: what was sent, the body cut to its first bytes. */
function readable(c: Case): Case {
  const body = c.body === null ? "no body" : `${c.body.length} bytes: ${JSON.stringify(c.body.subarray(0, 120).toString("utf8"))}`;
  return Object.assign(c, { [fc.toStringMethod]: () => `${c.kind}: ${c.method} ${c.path} ${JSON.stringify(c.headers)} ${body}${c.cutAt !== undefined ? ` cut at ${c.cutAt}` : ""}` });
}

/**
 * Tables a refused request may legitimately touch or that the service's own
 * schedules write whatever arrives: Counter counts ignored input; the
 * missed-deliveries sweep (which runs at start-up) writes its report and
 * checkpoint.
 */
const UNCOMPARED = new Set(["Counter", "SweepReport", "Checkpoint"]);

async function counts(database: Database): Promise<Record<string, number>> {
  const tables =
    database.provider === "sqlite"
      ? await database.db.$queryRawUnsafe<Array<{ name: string }>>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
      : await database.db.$queryRawUnsafe<Array<{ name: string }>>(`SELECT tablename::text AS name FROM pg_tables WHERE schemaname = current_schema()`);
  const out: Record<string, number> = {};
  for (const { name } of tables) {
    if (name === "_prisma_migrations" || UNCOMPARED.has(name)) continue;
    const [row] = await database.db.$queryRawUnsafe<Array<{ n: number | bigint }>>(`SELECT COUNT(*) AS n FROM "${name}"`);
    out[name] = Number(row!.n);
  }
  return out;
}

describe.each(providers)("bad input on %s", (provider) => {
  let db: TestDb;
  let proc: ChildProcess;
  let url: string;
  let port: number;
  let database: Database;
  const secret = randomBytes(16).toString("hex");
  const adminToken = randomBytes(32).toString("hex");

  beforeAll(async () => {
    db = await testDatabase(provider);
    database = await openDatabase(db.url, { poolSize: 2 });
    await migrate(database);
    const child = await startChild({
      APP_ID: "1",
      PRIVATE_KEY: key,
      WEBHOOK_SECRET: secret,
      ORCHESTRA_ADMIN_TOKEN: adminToken,
      DATABASE_URL: db.url,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      LOG_LEVEL: "error",
      GHE_HOST: "127.0.0.1:9",
      GHE_PROTOCOL: "http",
    });
    proc = child.proc;
    port = child.port;
    url = `http://127.0.0.1:${port}`;
  }, 60_000);
  afterAll(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    }
    await database.close();
    await db.drop();
  });

  test(`${RUNS} bad requests: no 5xx but a deliberate 503, no crash, nothing stored`, async () => {
    const reg = await fetch(`${url}/api/v1/workers`, { method: "POST", headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }, body: JSON.stringify({ name: "fuzz" }) });
    expect(reg.status).toBe(201);
    const workerToken = ((await reg.json()) as { token: string }).token;
    const before = await counts(database);
    expect(before["Worker"]).toBe(1);

    const seen: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.oneof(webhookCases(secret), workerCases(workerToken)).map(readable), async (c) => {
        seen[c.kind] = (seen[c.kind] ?? 0) + 1;
        if (c.cutAt !== undefined) {
          await cutOff(port, c);
          return;
        }
        let res: Response;
        try {
          res = await fetch(url + c.path, { method: c.method, headers: c.headers, ...(c.body ? { body: c.body } : {}) });
        } catch (err) {
          if (c.mayReset) return;
          throw new Error(`${c.kind}: ${c.method} ${c.path}: no answer (${String((err as Error).cause ?? err)})`);
        }
        const text = await res.text();
        const where = `${c.kind}: ${c.method} ${c.path} answered ${res.status} ${text.slice(0, 200)}`;
        if (res.status >= 500 && res.status !== 503) throw new Error(where);
        if (c.path === HOOK && !(res.status >= 400 && res.status < 500) && res.status !== 503) throw new Error(`a bad delivery was accepted: ${where}`);
        if (res.status >= 400 && res.status < 500 && (c.path === HOOK || c.path.startsWith("/api/v1/runs/") || c.path === "/api/v1/claims")) {
          const error = (JSON.parse(text) as { error?: unknown }).error;
          if (typeof error !== "string" || error.length === 0) throw new Error(`no reason given: ${where}`);
        }
      }),
      { numRuns: RUNS },
    );

    expect(proc.exitCode).toBeNull();
    expect(proc.signalCode).toBeNull();
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(await counts(database)).toEqual(before);
    // Every kind of bad input was tried.
    expect(Object.keys(seen).sort()).toEqual(
      ["cut off in transit", "mis-signed", "oversized", "signed, no x-github-delivery", "signed, no x-github-event", "signed, not a JSON object", "tampered after signing", "truncated after signing", "unsigned", "worker API"].sort(),
    );
    // And the server still does its job: a good delivery is stored.
    const good = Buffer.from(payloadText);
    const ok = await fetch(url + HOOK, { method: "POST", headers: { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": randomUUID(), "x-hub-signature-256": sign(secret, good) }, body: good });
    expect(ok.status).toBe(202);
    expect((await counts(database))["Delivery"]).toBe(before["Delivery"]! + 1);
  }, 180_000);
});
