/**
 * The npm registry behind `npm-version:` conditions is read with a size cap
 * and a time limit: an answer too large, one that never comes, or one that
 * is not JSON fails the check with its reason (the sweep asks again), and is
 * never buffered whole. A local HTTP server stands in for the registry.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { npmVersions } from "../../src/human/conditions.js";
import { startRig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

/** A registry on 127.0.0.1 answering with `handle`; the Accept headers it was asked with. */
async function registry(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const accepts: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    accepts.push(req.headers.accept ?? "");
    open.add(res);
    res.on("close", () => open.delete(res));
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepts,
    close: async () => {
      for (const res of open) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const json = (doc: unknown) => (_req: IncomingMessage, res: ServerResponse) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(doc));
/** A document of about `bytes` bytes that lists version 1.0.0. */
const padded = (bytes: number) => ({ versions: { "1.0.0": {} }, readme: "x".repeat(bytes) });
const CAP = 64 * 1024;

describe("npmVersions", () => {
  test.each<[string, (req: IncomingMessage, res: ServerResponse) => void, string[] | null | RegExp]>([
    ["the versions listed", json({ versions: { "1.0.0": {}, "1.1.0": {} } }), ["1.0.0", "1.1.0"]],
    ["no such package", (_req, res) => res.writeHead(404).end("{}"), null],
    ["an answer without versions", json({ name: "left-pad" }), []],
    ["just under the cap", json(padded(CAP - 100)), ["1.0.0"]],
    ["a declared length over the cap", json(padded(CAP)), /answer for left-pad is over 65536 bytes/],
    [
      "a chunked body over the cap, no length declared",
      (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        // Chunks that never end: without a cap, this is read until memory runs out.
        const chunk = "x".repeat(16 * 1024);
        res.write(`{"versions":{"1.0.0":{}},"readme":"`);
        const more = () => {
          while (res.write(chunk));
          res.once("drain", more);
        };
        more();
      },
      /answer for left-pad is over 65536 bytes/,
    ],
    ["a server error", (_req, res) => res.writeHead(503).end("busy"), /^the npm registry answered 503 for left-pad$/],
    ["not JSON", (_req, res) => res.writeHead(200).end("<html>login</html>"), /answer for left-pad is not JSON/],
    ["no answer at all", () => {}, /did not answer for left-pad within 0.5 s/],
    [
      "headers, then a body that stalls",
      (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(`{"versions":`);
      },
      /did not answer for left-pad within 0.5 s/,
    ],
  ])("%s", async (_name, handle, want) => {
    const r = await registry(handle);
    try {
      const read = npmVersions(r.url, "left-pad", { timeoutMs: 500, maxBytes: CAP });
      if (want instanceof RegExp) await expect(read).rejects.toThrow(want);
      else expect(await read).toEqual(want);
      expect(r.accepts).toEqual(["application/vnd.npm.install-v1+json"]);
    } finally {
      await r.close();
    }
  });
});

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  test("an oversized registry answer fails the check with its reason; the next sweep asks again", async () => {
    let doc: unknown = padded(2 * 1024 * 1024);
    const r = await registry((req, res) => json(doc)(req, res));
    const rig = await startRig({ provider, env: { ORCHESTRA_NPM_REGISTRY: r.url } });
    try {
      const w = await rig.worker();
      await rig.queue(6);
      const run = (await w.claim()).body.run;
      await w.call("POST", `/api/v1/runs/${run.id}/decision-requests`, {
        leaseEpoch: run.leaseEpoch,
        question: "Wait for left-pad 1.1?",
        condition: "npm-version:left-pad@>=1.1.0",
      });
      expect((await rig.sweep()).questions).toBe(0);
      expect((await rig.task(6)).task.state).toBe("blocked");
      const warned = rig.app.logs.filter(
        (l) => l["msg"] === "could not check a question's condition; the next sweep asks again",
      );
      expect(warned.map((l) => l["err"])).toEqual([
        expect.stringContaining("the npm registry's answer for left-pad is over 1048576 bytes"),
      ]);

      doc = { versions: { "1.0.0": {}, "1.1.0": {} } };
      rig.clock.advance(61_000);
      expect((await rig.sweep()).questions).toBe(1);
      expect((await rig.task(6)).task.state).toBe("queued");
      expect(r.accepts).toEqual(["application/vnd.npm.install-v1+json", "application/vnd.npm.install-v1+json"]);
      rig.fake.assertNoViolations();
    } finally {
      await rig.stop();
      await r.close();
    }
  });
});
