/**
 * Bounded memory at the webhook endpoint, measured on the App as a separate
 * process (its RSS from /proc): oversized bodies are refused before they are
 * read, and a burst of large unsigned bodies holds at most the unverified
 * budget, while a signed delivery sent in the middle of it is still stored.
 */
import type { ChildProcess } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import { eventually, freePort } from "../support/orchestra.js";
import { childJs, startChild } from "../support/processes.js";
import { examplePayload, sendWebhook } from "../support/webhooks.js";

const MB = 1024 * 1024;
const HOOK = "/api/github/webhooks";

function statusMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

interface Outcome {
  status: number | null;
  retryAfter: string | undefined;
  error: string | null;
}

/**
 * POSTs `size` bytes with a wrong signature, written 1 MB at a time as the
 * socket takes them. Resolves with the answer, or with the error when the
 * server closed the connection without one.
 */
function postLarge(
  port: number,
  size: number,
  chunk: Buffer,
  chunked = false,
  localAddress = "127.0.0.1",
): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (o: Outcome): void => {
      if (!settled) {
        settled = true;
        resolve(o);
      }
    };
    const req = http.request({
      host: "127.0.0.1",
      port,
      path: HOOK,
      method: "POST",
      agent: false,
      localAddress,
      headers: {
        "content-type": "application/json",
        ...(chunked ? {} : { "content-length": String(size) }),
        "x-github-event": "issues",
        "x-github-delivery": `large-${randomBytes(6).toString("hex")}`,
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      },
    });
    req.on("response", (res) => {
      res.resume();
      done({
        status: res.statusCode ?? null,
        retryAfter: res.headers["retry-after"],
        error: null,
      });
    });
    req.on("error", (err) => done({ status: null, retryAfter: undefined, error: err.message }));
    let sent = 0;
    const write = (): void => {
      while (sent < size && !req.destroyed) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once("drain", write);
          return;
        }
      }
      if (sent >= size) req.end();
    };
    write();
  });
}

function rawPost(port: number, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: HOOK, method: "POST", agent: false, headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    // Headers only: the body the headers announce is never sent.
    req.flushHeaders();
  });
}

describe("webhook memory bounds (App as a child process, SQLite)", () => {
  let dir: string;
  let proc: ChildProcess | undefined;
  let port: number;
  let env: Record<string, string>;

  beforeAll(async () => {
    expect(existsSync(childJs)).toBe(true); // npm test builds first
    dir = mkdtempSync(join(tmpdir(), "orchestra-memory-"));
    env = {
      APP_ID: "1",
      PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 })
        .privateKey.export({ type: "pkcs1", format: "pem" })
        .toString(),
      WEBHOOK_SECRET: randomBytes(8).toString("hex"),
      ORCHESTRA_ADMIN_TOKEN: randomBytes(32).toString("hex"),
      DATABASE_URL: `file:${join(dir, "orchestra.db")}`,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      GHE_HOST: "127.0.0.1:9",
      GHE_PROTOCOL: "http",
      CHILD_JOURNAL: join(dir, "journal.log"),
    };
    const child = await startChild(env);
    proc = child.proc;
    port = child.port;
  });
  afterAll(async () => {
    if (proc && proc.exitCode === null) {
      proc.kill("SIGKILL");
      await new Promise((r) => proc!.once("exit", r));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("a declared length above GitHub's 25 MB cap is refused with 413 before the body is sent", async () => {
    const res = await rawPost(port, {
      "content-type": "application/json",
      "content-length": String(26 * MB),
      "x-github-event": "issues",
      "x-github-delivery": "too-large",
      "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({
      error: `payload of ${26 * MB} bytes is larger than GitHub's ${25 * MB}-byte webhook cap`,
    });
  });

  test("a chunked body without a declared length is refused with 413 once it passes 25 MB", async () => {
    const outcome = await postLarge(port, 30 * MB, Buffer.alloc(MB, 0x20), true);
    // The answer, not a reset: the App reads the rest into nothing before it closes the connection.
    expect(outcome).toEqual({ status: 413, retryAfter: undefined, error: null });
  });

  test("24 concurrent 20 MB unsigned bodies from two addresses raise RSS by at most 250 MB, and a signed delivery sent meanwhile is stored", async () => {
    const pid = proc!.pid!;
    const before = statusMb(pid, "VmRSS");
    const chunk = Buffer.alloc(MB, 0x20);
    // 127.0.0.2 is loopback too: a second client address.
    const large = Array.from({ length: 24 }, (_, i) =>
      postLarge(port, 20 * MB, chunk, false, `127.0.0.${1 + (i % 2)}`),
    );
    const payload = examplePayload("issues", "labeled", { installation: { id: 1 } });
    const signed = await sendWebhook(`http://127.0.0.1:${port}${HOOK}`, {
      event: "issues",
      payload,
      secret: env["WEBHOOK_SECRET"]!,
      deliveryId: "signed-in-the-burst",
    });
    const outcomes = await Promise.all(large);
    // VmHWM is the peak since the process started: an upper bound on the peak during the burst.
    const rise = statusMb(pid, "VmHWM") - before;

    expect(signed.status).toBe(202);
    const sqlite = new Sqlite(join(dir, "orchestra.db"), { readonly: true });
    try {
      const row = sqlite.prepare(`SELECT state FROM "Delivery" WHERE "deliveryId" = ?`).get("signed-in-the-burst");
      expect(row).toBeDefined();
    } finally {
      sqlite.close();
    }
    // Each large body was either read and rejected for its signature, or refused unread with 503 + Retry-After;
    // every sender got its answer (a reset or a broken pipe instead would show here with its error).
    expect(outcomes.filter((o) => o.status !== 401 && o.status !== 503)).toEqual([]);
    const refused = outcomes.filter((o) => o.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((o) => o.retryAfter === "1")).toBe(true);
    // With the default 64 MB budget one address holds at most 28 MB of large bodies: one 20 MB body at a time each,
    // so both addresses had bodies read.
    expect(outcomes.filter((o) => o.status === 401).length).toBeGreaterThanOrEqual(2);
    expect(rise).toBeLessThanOrEqual(250);
    process.stdout.write(
      `RSS before ${before.toFixed(0)} MB, peak rise ${rise.toFixed(0)} MB; ${refused.length} of 24 refused with 503\n`,
    );

    // Nothing is left taken: once the burst is over, a full-size unsigned body is read again (401, not 503).
    const after = await postLarge(port, 20 * MB, chunk);
    expect(after.status).toBe(401);
    await eventually(
      () =>
        existsSync(env["CHILD_JOURNAL"]!) &&
        readFileSync(env["CHILD_JOURNAL"]!, "utf8").includes("finish signed-in-the-burst")
          ? true
          : undefined,
      10_000,
      "signed delivery processed",
    );
  });
});
