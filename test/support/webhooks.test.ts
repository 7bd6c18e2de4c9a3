/** The webhook helpers produce deliveries that @octokit/webhooks (Probot's receiver) accepts. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeMiddleware, Webhooks } from "@octokit/webhooks";
import { startFakeGitHub } from "../fake-github/index.js";
import { deepMerge, examplePayload, fakeWebhookPayload, listExamples, sendWebhook, signatureOf } from "./webhooks.js";

const SECRET = "s3cret";

describe("webhook helpers", () => {
  let server: Server;
  let url: string;
  const received: { name: string; id: string; payload: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    const webhooks = new Webhooks({ secret: SECRET });
    webhooks.onAny(({ id, name, payload }) => {
      received.push({ id, name, payload: payload });
    });
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const middleware = createNodeMiddleware(webhooks, { path: "/api/github/webhooks", log: quiet });
    server = createServer((req, res) => void middleware(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("loads real examples and adds an installation", () => {
    expect(listExamples("issues", "labeled").length).toBeGreaterThan(0);
    const p = examplePayload("issues", "labeled", { installation: { id: 11 }, issue: { number: 5 } });
    expect(p).toMatchObject({ action: "labeled", installation: { id: 11 }, issue: { number: 5 } });
    expect((p.installation as { node_id: string }).node_id).toBe(
      Buffer.from("04:IntegrationInstallation11").toString("base64"),
    );
    expect((p.issue as { title: string }).title).toEqual(expect.any(String));
    expect(() => examplePayload("issues", "nope")).toThrow(/actions: /);
  });

  it("deep-merges objects and replaces arrays", () => {
    expect(deepMerge({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: undefined })).toEqual({
      a: { b: 1, c: [3] },
      d: 1,
    });
  });

  it("signs deliveries so the receiver verifies them", async () => {
    const payload = examplePayload("issue_comment", "created", { installation: { id: 3 } });
    const res = await sendWebhook(url, { event: "issue_comment", payload, secret: SECRET, deliveryId: "d-1" });
    expect(res.status).toBe(200);
    expect(received.at(-1)).toMatchObject({ id: "d-1", name: "issue_comment", payload: { action: "created" } });

    // @octokit/webhooks 14 answers a bad signature with 400
    const bad = await sendWebhook(url, { event: "issue_comment", payload, secret: "wrong" });
    expect(bad.status).toBe(400);
    expect(signatureOf(SECRET, "{}")).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it("builds payloads that agree with the fake's state", async () => {
    const fake = await startFakeGitHub();
    try {
      fake.state.addInstallation(9, "acme");
      fake.state.addRepo("acme/widgets", { installationId: 9 });
      const issue = fake.state.addIssue("acme/widgets", { title: "Queue me", user: "alice" });
      const p = fakeWebhookPayload(fake, "issues", "labeled", {
        repo: "acme/widgets",
        issue: issue.number,
        label: "agent:queued",
        sender: "alice",
      });
      expect(p).toMatchObject({
        action: "labeled",
        installation: { id: 9 },
        repository: { full_name: "acme/widgets" },
        issue: { number: issue.number, title: "Queue me" },
        label: { name: "agent:queued" },
        sender: { login: "alice" },
      });
      const res = await sendWebhook(url, { event: "issues", payload: p, secret: SECRET });
      expect(res.status).toBe(200);
    } finally {
      await fake.close();
    }
  });
});
