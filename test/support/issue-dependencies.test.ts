/**
 * `issue_dependencies` payloads: typed as @octokit/webhooks types them, valid
 * against the webhook schemas in GitHub's description, and delivered end to
 * end through the receiver Probot uses.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeMiddleware, Webhooks, type EmitterWebhookEvent } from "@octokit/webhooks";
import { startFakeGitHub } from "../fake-github/index.js";
import { ResponseSchemas } from "../fake-github/response-schemas.js";
import { fakeIssueDependenciesPayload, issueDependenciesPayload } from "./issue-dependencies.js";
import { sendWebhook } from "./webhooks.js";

type Added = EmitterWebhookEvent<"issue_dependencies.blocked_by_added">["payload"];
type Removed = EmitterWebhookEvent<"issue_dependencies.blocked_by_removed">["payload"];

const SECRET = "s3cret";
let schemas: ResponseSchemas;

beforeAll(() => {
  schemas = new ResponseSchemas();
});

describe("issueDependenciesPayload", () => {
  it("types the payload per action, as @octokit/webhooks does", () => {
    const added: Added = issueDependenciesPayload("blocked_by_added");
    const removed: Removed = issueDependenciesPayload("blocked_by_removed", { blocking_issue: { state: "closed" } });
    // @ts-expect-error a blocked_by_removed payload is not a blocked_by_added one
    const wrong: Added = issueDependenciesPayload("blocked_by_removed");
    expect([added.action, removed.action, wrong.action]).toEqual([
      "blocked_by_added",
      "blocked_by_removed",
      "blocked_by_removed",
    ]);
  });

  it.each([
    [
      "blocked_by_added",
      "open",
      { blocked_by: 1, blocking: 0, total_blocked_by: 1, total_blocking: 0 },
      { blocked_by: 0, blocking: 1, total_blocked_by: 0, total_blocking: 1 },
    ],
    [
      "blocked_by_added",
      "closed",
      { blocked_by: 0, blocking: 0, total_blocked_by: 1, total_blocking: 0 },
      { blocked_by: 0, blocking: 1, total_blocked_by: 0, total_blocking: 1 },
    ],
    [
      "blocked_by_removed",
      "open",
      { blocked_by: 0, blocking: 0, total_blocked_by: 0, total_blocking: 0 },
      { blocked_by: 0, blocking: 0, total_blocked_by: 0, total_blocking: 0 },
    ],
  ] as const)(
    "%s, blocker %s: realistic, schema-valid, summaries that count the edge",
    (action, state, blockedSummary, blockingSummary) => {
      const p = issueDependenciesPayload(action, { blocking_issue: { state }, installation: { id: 9 } });
      expect(p).toMatchObject({
        action,
        blocked_issue_id: p.blocked_issue.id,
        blocking_issue_id: p.blocking_issue.id,
        blocked_issue: {
          number: 1,
          repository_url: "https://api.github.com/repos/Codertocat/Hello-World",
          issue_dependencies_summary: blockedSummary,
        },
        blocking_issue: {
          number: 2,
          state,
          url: "https://api.github.com/repos/Codertocat/Hello-World/issues/2",
          html_url: "https://github.com/Codertocat/Hello-World/issues/2",
          issue_dependencies_summary: blockingSummary,
        },
        blocking_issue_repo: { full_name: "Codertocat/Hello-World" },
        repository: { full_name: "Codertocat/Hello-World" },
        organization: { login: expect.any(String) },
        sender: { login: expect.any(String) },
        installation: { id: 9 },
      });
      expect(p.blocked_issue_id).not.toBe(p.blocking_issue_id);
      expect(schemas.checkComponent(`webhook-issue-dependencies-${action.replace(/_/g, "-")}`, p)).toBeNull();
    },
  );

  it("takes a blocker from another repository through overrides", () => {
    const p = issueDependenciesPayload("blocked_by_added", {
      blocking_issue: { id: 77, number: 5, repository_url: "https://api.github.com/repos/Codertocat/Other" },
      blocking_issue_repo: { name: "Other", full_name: "Codertocat/Other" },
    });
    expect(p).toMatchObject({
      blocking_issue_id: 77,
      blocking_issue: { id: 77, number: 5 },
      blocking_issue_repo: { full_name: "Codertocat/Other" },
    });
    expect(p.repository.full_name).toBe("Codertocat/Hello-World");
  });

  it("is checked by the schema for real (a payload without a sender fails)", () => {
    const p = issueDependenciesPayload("blocked_by_added") as unknown as Record<string, unknown>;
    delete p.sender;
    expect(schemas.checkComponent("webhook-issue-dependencies-blocked-by-added", p)).toMatch(/sender/);
  });
});

describe("fakeIssueDependenciesPayload", () => {
  let server: Server;
  let url: string;
  const received: EmitterWebhookEvent<"issue_dependencies">[] = [];

  beforeAll(async () => {
    const webhooks = new Webhooks({ secret: SECRET });
    webhooks.on("issue_dependencies.blocked_by_added", (e) => void received.push(e));
    webhooks.on("issue_dependencies.blocked_by_removed", (e) => void received.push(e));
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

  it("agrees with the fake's state and is delivered as issue_dependencies", async () => {
    const fake = await startFakeGitHub();
    try {
      fake.state.addInstallation(9, "acme");
      fake.state.addRepo("acme/widgets", { installationId: 9 });
      fake.state.addRepo("acme/gadgets", { installationId: 9 });
      const issue = fake.state.addIssue("acme/widgets", { title: "Blocked" });
      const blocker = fake.state.addIssue("acme/gadgets", { title: "Blocker" });

      fake.state.block("acme/widgets", issue.number, "acme/gadgets", blocker.number);
      const refs = {
        repo: "acme/widgets",
        issue: issue.number,
        blockerRepo: "acme/gadgets",
        blocker: blocker.number,
        sender: "alice",
      };
      const added = fakeIssueDependenciesPayload(fake, "blocked_by_added", refs);
      expect(added).toMatchObject({
        action: "blocked_by_added",
        blocked_issue_id: issue.id,
        blocking_issue_id: blocker.id,
        blocked_issue: { title: "Blocked", issue_dependencies_summary: { blocked_by: 1, total_blocked_by: 1 } },
        blocking_issue: { title: "Blocker", issue_dependencies_summary: { blocking: 1, total_blocking: 1 } },
        blocking_issue_repo: { full_name: "acme/gadgets" },
        repository: { full_name: "acme/widgets" },
        organization: { login: "acme" },
        sender: { login: "alice" },
        installation: { id: 9 },
      });
      expect(schemas.checkComponent("webhook-issue-dependencies-blocked-by-added", added)).toBeNull();

      fake.state.unblock("acme/widgets", issue.number, "acme/gadgets", blocker.number);
      const removed = fakeIssueDependenciesPayload(fake, "blocked_by_removed", refs);
      expect(removed.blocked_issue).toMatchObject({
        issue_dependencies_summary: { blocked_by: 0, total_blocked_by: 0 },
      });
      expect(schemas.checkComponent("webhook-issue-dependencies-blocked-by-removed", removed)).toBeNull();

      for (const [payload, deliveryId] of [
        [added, "dep-1"],
        [removed, "dep-2"],
      ] as const) {
        const res = await sendWebhook(url, { event: "issue_dependencies", payload, secret: SECRET, deliveryId });
        expect(res.status).toBe(200);
      }
      expect(received.map((e) => [e.id, e.name, e.payload.action, e.payload.blocking_issue.id])).toEqual([
        ["dep-1", "issue_dependencies", "blocked_by_added", blocker.id],
        ["dep-2", "issue_dependencies", "blocked_by_removed", blocker.id],
      ]);
      fake.assertNoViolations();
    } finally {
      await fake.close();
    }
  });
});
