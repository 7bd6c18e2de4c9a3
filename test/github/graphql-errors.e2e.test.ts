/**
 * A GraphQL answer with errors — here a field the host lacks, as an older
 * GitHub Enterprise Server would answer — is a defect or a version gap, not
 * an outage: the port throws it with GitHub's messages and it is not asked
 * again; a delivery whose handler runs into it is parked after the few
 * attempts of a deterministic failure, minutes after the first, never
 * retried for the six hours of an outage.
 */
import { randomUUID } from "node:crypto";
import { ProductionOctokit } from "../../src/app/index.js";
import { errorClass, failureOf } from "../../src/github/errors.js";
import { octokitGitHub } from "../../src/github/octokit.js";
import { GitHubError } from "../../src/github/port.js";
import { startFakeGitHub } from "../fake-github/index.js";
import { providers } from "../support/databases.js";
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { eventually } from "../support/orchestra.js";
import { fakeWebhookPayload, sendWebhook } from "../support/webhooks.js";

test("the port throws a refused query with GitHub's message, once: neither Probot's retries nor the caller ask again", async () => {
  const fake = await startFakeGitHub();
  try {
    fake.state.addInstallation(5, "acme");
    fake.state.addRepo("acme/widgets", { installationId: 5 });
    fake.graphql.withhold("Issue.subIssues", "Ref.associatedPullRequests");
    // The service's own client: Probot's retry plugin on.
    const octokit = new ProductionOctokit({
      auth: { appId: fake.appId, privateKey: fake.privateKey, installationId: 5 },
      baseUrl: fake.apiUrl,
    });
    const gh = octokitGitHub(octokit);
    const r = { owner: "acme", repo: "widgets" };
    for (const [read, field, type] of [
      [() => gh.issuesLabelled(r, ["agent:queued"]), "subIssues", "Issue"],
      [() => gh.branchesWithPrefix(r, "agent/"), "associatedPullRequests", "Ref"],
    ] as const) {
      const e = (await read().then(
        () => null,
        (x: unknown) => x,
      )) as GitHubError;
      expect(e).toBeInstanceOf(GitHubError);
      expect(e).toMatchObject({
        retryable: false,
        mayHaveSent: false,
        graphqlErrors: [`Field '${field}' doesn't exist on type '${type}'`],
      });
      expect(failureOf(e)).toEqual({ class: "graphql" });
      expect(errorClass(e, "other")).toBe("github-graphql");
    }
    expect(fake.requests.filter((q) => q.path === "/graphql")).toHaveLength(2);
    fake.assertNoViolations();
  } finally {
    await fake.close();
  }
});

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("a push whose handler's query is refused is parked after five quick attempts, its ring naming the field", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    await rig.inReview(w, 10);
    rig.fake.graphql.withhold("PullRequest.mergeStateStatus");
    const repo = rig.fake.state.repo(REPO);
    const before = repo.branches.get("main")!;
    const after = rig.fake.state.addCommits(REPO, "main", 1);
    const deliveryId = randomUUID();
    const res = await sendWebhook(`${rig.app.url}/api/github/webhooks`, {
      event: "push",
      secret: rig.app.secret,
      deliveryId,
      payload: fakeWebhookPayload(
        rig.fake,
        "push",
        undefined,
        { repo: REPO, sender: "alice" },
        { ref: "refs/heads/main", before, after, forced: false, deleted: false, created: false },
      ),
    });
    expect(res.status).toBe(202);
    const row = () => rig.app.database.db.delivery.findUniqueOrThrow({ where: { deliveryId } });
    const started = rig.clock.now().getTime();
    // Each failed attempt is retried at its backoff on the App's clock: move the clock there, as time would.
    for (let attempt = 1; ; attempt++) {
      const d = await eventually(
        async () => {
          const x = await row();
          return x.state === "parked" || (x.state === "pending" && x.attempts === attempt) ? x : undefined;
        },
        10_000,
        `attempt ${attempt} recorded`,
      );
      if (d.state === "parked") break;
      expect(attempt).toBeLessThan(5);
      rig.clock.advanceTo(d.nextAttemptAt.getTime());
      rig.app.orchestra.processor.poke();
    }
    const parked = await row();
    expect(parked.attempts).toBe(5);
    // Minutes, not the six hours an outage is retried for.
    expect(rig.clock.now().getTime() - started).toBeLessThan(2 * 60_000);
    const ring = JSON.parse(parked.errors) as Array<{ class: string; message: string; count?: number }>;
    // The attempts, then the entry that says why it was parked and how to replay it.
    expect(ring.slice(-2)).toEqual([
      expect.objectContaining({
        class: "github-graphql",
        message: expect.stringContaining("Field 'mergeStateStatus' doesn't exist on type 'PullRequest'"),
      }),
      expect.objectContaining({
        class: "parked",
        message: expect.stringMatching(/^parked after a GraphQL query GitHub refused .*: 5 attempts over/),
      }),
    ]);
    expect(ring.some((e) => e.class === "github-network")).toBe(false);
    const log = rig.app.logs.find((l) => l["delivery"] === deliveryId && l["level"] === 50);
    expect(log).toMatchObject({ failure: "graphql", msg: expect.stringContaining("a GraphQL query GitHub refused") });
  });
});
