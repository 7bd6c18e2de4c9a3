/**
 * WEBHOOK_PROXY_URL end to end: the real entry point (dist/src/main.js) connects to a webhook proxy channel
 * served here the way smee.io serves one (an event stream of GitHub's headers and body), forwards what it
 * carries to its own webhook path, where ingest verifies the signature and stores the delivery; a SIGTERM
 * closes the channel with everything else.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv } from "../support/cli.js";
import { eventually, freePort } from "../support/orchestra.js";
import { examplePayload, webhookHeaders } from "../support/webhooks.js";
import { forwardTarget } from "../../src/app/webhook-proxy.js";

const main = join(import.meta.dirname, "..", "..", "dist/src/main.js");
const key = generateKeyPairSync("rsa", { modulusLength: 1024 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();

/** A channel: each subscriber gets an event stream; `send` writes one delivery to every subscriber. */
class Channel {
  readonly subscribers: ServerResponse[] = [];
  closed = 0;
  server: Server;
  #waiters: (() => void)[] = [];
  constructor() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url !== "/channel-1" || !String(req.headers.accept).includes("text/event-stream")) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(`event: ready\ndata: {}\n\n`);
      this.subscribers.push(res);
      res.on("close", () => (this.closed += 1));
      for (const w of this.#waiters.splice(0)) w();
    });
  }
  async listen(): Promise<string> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}/channel-1`;
  }
  subscribed(): Promise<void> {
    return this.subscribers.length > 0 ? Promise.resolve() : new Promise((r) => this.#waiters.push(r));
  }
  send(headers: Record<string, string>, body: unknown): void {
    const data = JSON.stringify({ ...headers, host: "smee.io", body, query: {}, timestamp: 1767225600000 });
    for (const s of this.subscribers) s.write(`id: ${randomUUID()}\ndata: ${data}\n\n`);
  }
  close(): Promise<void> {
    for (const s of this.subscribers) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe("forwardTarget", () => {
  it.each([
    ["localhost", 3000, "http://localhost:3000/api/github/webhooks"],
    ["0.0.0.0", 3000, "http://127.0.0.1:3000/api/github/webhooks"],
    ["::", 8080, "http://127.0.0.1:8080/api/github/webhooks"],
    ["::1", 3000, "http://[::1]:3000/api/github/webhooks"],
    ["10.0.0.5", 3001, "http://10.0.0.5:3001/api/github/webhooks"],
  ])("a service on %s:%i is reached at %s", (host, port, target) => {
    expect(forwardTarget(host, port)).toBe(target);
  });
});

describe("the service with WEBHOOK_PROXY_URL", () => {
  let channel: Channel;
  let child: ChildProcess;
  let cwd: string;
  let base: string;
  let stderr = "";
  const secret = randomBytes(16).toString("hex");
  const admin = randomBytes(32).toString("hex");

  beforeAll(async () => {
    channel = new Channel();
    const source = await channel.listen();
    cwd = mkdtempSync(join(tmpdir(), "orchestra-proxy-"));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [main], {
      cwd,
      env: childEnv({
        APP_ID: "1",
        PRIVATE_KEY: key,
        WEBHOOK_SECRET: secret,
        ORCHESTRA_ADMIN_TOKEN: admin,
        PORT: String(port),
        HOST: "127.0.0.1",
        GHE_HOST: "127.0.0.1:9",
        GHE_PROTOCOL: "http",
        WEBHOOK_PROXY_URL: source,
        LOG_LEVEL: "warn",
      }),
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
    await channel.subscribed();
  }, 60_000);

  afterAll(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await channel.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("stores a signed delivery the channel carries, as if GitHub had posted it", async () => {
    const payload = examplePayload("issues", "labeled", { label: { name: "agent:queued" } });
    const body = JSON.stringify(payload);
    const id = randomUUID();
    channel.send(webhookHeaders("issues", body, secret, id), payload);
    const stored = async () => {
      const r = await fetch(`${base}/api/v1/deliveries?limit=100`, { headers: { authorization: `Bearer ${admin}` } });
      const { deliveries } = (await r.json()) as { deliveries: { deliveryId: string; event: string }[] };
      return deliveries.find((d) => d.deliveryId === id);
    };
    // The forward is asynchronous: wait for the delivery to be stored.
    const found = await eventually(stored, 25_000, "the forwarded delivery stored");
    expect(found).toMatchObject({ deliveryId: id, event: "issues" });
  }, 30_000);

  it("closes the channel and exits 0 on SIGTERM", async () => {
    child.kill("SIGTERM");
    const [code] = (await once(child, "exit")) as [number];
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    // The channel's server learns of the close from its socket, which can come after the child's exit is reported.
    await eventually(() => (channel.closed >= 1 ? true : undefined), 10_000, "the channel closed");
  }, 30_000);
});
