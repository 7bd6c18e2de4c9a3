/**
 * The front door on a plain HTTP server: Orchestra's handlers answer first
 * with a debug line per request, everything else reaches the listener that
 * was there before (Probot's chain), and a handler that throws is a 500.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { createLogger } from "../../src/log.js";
import { takeOverRequests } from "../../src/ingest/front.js";

async function withServer(
  level: string,
  fn: (url: string, logs: Array<Record<string, unknown>>, fallbackHits: string[]) => Promise<void>,
): Promise<void> {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split("\n")) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const fallbackHits: string[] = [];
  const server = http.createServer((req, res) => {
    fallbackHits.push(req.url ?? "");
    res.writeHead(404).end("fallback");
  });
  takeOverRequests(
    server,
    [
      async (req, res) => {
        if (req.url === "/boom") throw new Error("handler bug");
        if (req.url !== "/mine") return false;
        res.writeHead(200).end("mine");
        return true;
      },
    ],
    createLogger(level, sink),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, logs, fallbackHits);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

test("handled requests are answered by the front door and logged once at debug", async () => {
  await withServer("debug", async (url, logs, fallbackHits) => {
    const res = await fetch(`${url}/mine`, { headers: { "x-github-delivery": "d-1" } });
    expect(await res.text()).toBe("mine");
    expect(fallbackHits).toEqual([]);
    const lines = logs.filter((l) => l["url"] === "/mine");
    expect(lines).toEqual([
      expect.objectContaining({ level: 20, method: "GET", status: 200, delivery: "d-1", msg: "GET /mine 200" }),
    ]);
  });
});

test("at info, requests leave no line", async () => {
  await withServer("info", async (url, logs) => {
    expect((await fetch(`${url}/mine`)).status).toBe(200);
    expect(logs).toEqual([]);
  });
});

test("requests no handler takes reach the previous listener", async () => {
  await withServer("info", async (url, _logs, fallbackHits) => {
    const res = await fetch(`${url}/ping`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("fallback");
    expect(fallbackHits).toEqual(["/ping"]);
  });
});

test("a handler that throws is a 500 with a logged error, and the server goes on", async () => {
  await withServer("info", async (url, logs) => {
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "internal error; see the service log" });
    expect(logs).toEqual([expect.objectContaining({ level: 50, msg: "request failed", url: "/boom" })]);
    expect((await fetch(`${url}/mine`)).status).toBe(200);
  });
});
