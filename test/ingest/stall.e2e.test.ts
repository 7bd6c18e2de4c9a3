/**
 * Nothing an unsigned sender does stalls webhook ingest: bodies that are
 * declared and never sent hold no bytes, slow bodies are cut after the
 * deadline, and one address cannot take the room of another.
 */
import { randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import { testDatabase, type TestDb } from "../support/databases.js";
import { eventually, startOrchestra, type Running } from "../support/orchestra.js";
import { examplePayload, nthUpdate, sendWebhook } from "../support/webhooks.js";

const MB = 1024 * 1024;
const HOOK = "/api/github/webhooks";

/**
 * Opens a connection from `localAddress` and sends a webhook's headers declaring `length` bytes; collects the answer.
 * With `Expect: 100-continue` the server says "100 Continue" once it has read the headers and handed the request
 * on: `read` resolves then, so a test knows the body is being waited for.
 */
function declare(
  port: number,
  length: number,
  localAddress = "127.0.0.1",
): { socket: Socket; read: Promise<void>; answer: Promise<string> } {
  const socket = connect({ host: "127.0.0.1", port, localAddress });
  socket.write(
    `POST ${HOOK} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n` +
      `Expect: 100-continue\r\n` +
      `X-GitHub-Event: issues\r\nX-GitHub-Delivery: ${randomUUID()}\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\n\r\n`,
  );
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString()));
  socket.on("error", () => undefined);
  const final = () => text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
  const read = new Promise<void>((resolve) => {
    socket.on("data", () => {
      if (text.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) resolve();
    });
  });
  const answer = new Promise<string>((resolve) => {
    socket.on("close", () => resolve(final()));
    socket.on("data", () => {
      if (/\r\n\r\n/.test(final())) resolve(final());
    });
  });
  return { socket, read, answer };
}

describe("webhook ingest under an unsigned sender", () => {
  let db: TestDb;
  let app: Running;
  const sockets: Socket[] = [];
  beforeEach(async () => {
    db = await testDatabase("sqlite", { migrated: true });
    app = await startOrchestra({
      db,
      ingest: { bodyTiming: { deadlineMs: 1_500, idleMs: 1_000 } },
    });
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await app.stop();
    await db.drop();
  });

  let sent = 0;
  const signed = async () => {
    const id = randomUUID();
    const res = await sendWebhook(app.url + HOOK, {
      event: "issues",
      payload: examplePayload("issues", "labeled", {
        installation: { id: 11 },
        issue: { updated_at: nthUpdate(sent++) },
      }),
      secret: app.secret,
      deliveryId: id,
    });
    return { id, status: res.status };
  };

  test("bodies declared at 25 + 25 + 14 MB and never sent hold nothing: signed deliveries are stored meanwhile", async () => {
    const held = [25 * MB, 25 * MB, 14 * MB].map((n) => declare(Number(new URL(app.url).port), n));
    sockets.push(...held.map((h) => h.socket));
    // The server has read each one's headers and waits for its body.
    await Promise.all(held.map((h) => h.read));
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await signed());
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(await app.database.db.delivery.count({ where: { deliveryId: { in: answers.map((a) => a.id) } } })).toBe(5);
    // The stalled senders are answered 408 once their bytes stop coming, and nothing is stored for them.
    const stalled = await Promise.all(held.map((h) => h.answer));
    for (const text of stalled) expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(stalled[0]).toMatch(/no byte of the body for 1 s/);
    expect(await app.database.db.delivery.count()).toBe(5);
  });

  test("a body trickled slower than the deadline is cut with 408 and its bytes go back", async () => {
    const slow = declare(Number(new URL(app.url).port), 2 * MB);
    sockets.push(slow.socket);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const trickle = setInterval(() => slow.socket.write(chunk), 100);
    try {
      const text = await slow.answer;
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(text).toMatch(/did not arrive within 1\.5 s/);
    } finally {
      clearInterval(trickle);
    }
    expect((await signed()).status).toBe(202);
  });

  test("one address sending many bodies at once is refused; another address is not", async () => {
    // 127.0.0.2 is loopback too: a second client address on this machine.
    const flood = Array.from({ length: 64 }, () => declare(Number(new URL(app.url).port), 100, "127.0.0.2"));
    sockets.push(...flood.map((f) => f.socket));
    for (const f of flood) f.socket.write("x");
    await eventually(
      async () => {
        const extra = declare(Number(new URL(app.url).port), 100, "127.0.0.2");
        sockets.push(extra.socket);
        extra.socket.write("x");
        const text = await extra.answer;
        return /^HTTP\/1\.1 503 /.test(text) && /too many bodies at once/.test(text) ? text : undefined;
      },
      5_000,
      "the 65th body from one address refused",
    );
    expect((await signed()).status).toBe(202);
  });
});
