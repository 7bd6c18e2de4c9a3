/**
 * The GitHub port against the fake GitHub: every method through Probot's
 * octokit, authenticated as the App's installation, with each request checked
 * against GitHub's OpenAPI description. Absence is only ever GitHub's 404.
 */
import { ProbotOctokit } from "probot";
import type { EventRouter } from "../../src/events/router.js";
import { octokitGitHub } from "../../src/github/octokit.js";
import { GitHubError, type GitHub, type GitHubFor } from "../../src/github/port.js";
import { startFakeGitHub, type FakeGitHub } from "../fake-github/index.js";
import { testDatabase, type TestDb } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { startIngest, type IngestRig } from "../support/ingest-rig.js";
import { fakeWebhookPayload, sendWebhook } from "../support/webhooks.js";

/** The names of labels as the port answers them. */
const named = (labels: ReadonlyArray<{ name: string }> | null) => labels?.map((l) => l.name) ?? null;

const REPO = "acme/widgets";
const r = { owner: "acme", repo: "widgets" };
const INSTALLATION = 4242;

let fake: FakeGitHub;
let db: TestDb;
let app: IngestRig;
let gh: GitHub;
let githubFor: GitHubFor;
const handled: string[] = [];

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));

const echo = (events: EventRouter) =>
  events.on("issues.labeled", async (ctx) => {
    const github = await ctx.github();
    const issue = ctx.payload.issue.number;
    await github.addLabels(r, issue, ["agent:in-progress"]);
    await github.removeLabel(r, issue, "agent:queued");
    await github.createComment(r, issue, `seen ${ctx.deliveryId}`);
    handled.push(ctx.deliveryId);
  });

beforeAll(async () => {
  fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION });
  db = await testDatabase("sqlite", { migrated: true });
  // Probot's octokit as the App's installation, as the App builds it (retries off).
  githubFor = (installationId) =>
    Promise.resolve(
      octokitGitHub(
        new TestOctokit({
          auth: { appId: fake.appId, privateKey: fake.privateKey, installationId },
          baseUrl: fake.apiUrl,
        }),
      ),
    );
  app = await startIngest({ db, handlers: echo, githubFor });
  gh = await githubFor(INSTALLATION);
});

afterAll(async () => {
  await app.stop();
  await db.drop();
  await fake.close();
});

afterEach(() => {
  fake.assertNoViolations();
});

test("issues, labels, comments and reactions", async () => {
  fake.state.addIssue(REPO, {
    number: 1,
    title: "Add a widget",
    body: "please",
    labels: ["agent:queued"],
    user: "alice",
  });
  expect(await gh.getIssue(r, 1)).toEqual({
    number: 1,
    title: "Add a widget",
    body: "please",
    state: "open",
    labels: ["agent:queued"],
    author: "alice",
    isPullRequest: false,
  });
  expect(await gh.getIssue(r, 999)).toBeNull();
  await gh.addLabels(r, 1, ["agent:in-progress"]);
  await gh.addLabels(r, 1, ["agent:in-progress"]); // idempotent
  await gh.removeLabel(r, 1, "agent:queued");
  await gh.removeLabel(r, 1, "agent:queued"); // already gone: success
  expect(fake.state.labelsOf(REPO, 1)).toEqual(["agent:in-progress"]);
  const c = await gh.createComment(r, 1, "hello");
  expect(c.body).toBe("hello");
  expect((await gh.listComments(r, 1)).map((x) => x.body)).toEqual(["hello"]);
  await gh.addReaction(r, c.id, "+1");
  expect(fake.state.reactionsOnComment(REPO, c.id).map((x) => x.content)).toEqual(["+1"]);
});

test("branches, compare and pull requests", async () => {
  const head = fake.state.addBranch(REPO, "agent/issue-2", { aheadBy: 2 });
  expect(await gh.defaultBranch(r)).toBe("main");
  expect(await gh.getBranch(r, "agent/issue-2")).toEqual({ name: "agent/issue-2", sha: head });
  expect(await gh.getBranch(r, "agent/none")).toBeNull();
  expect(await gh.compare(r, "main", "agent/issue-2")).toMatchObject({
    status: "ahead",
    aheadBy: 2,
    behindBy: 0,
    headSha: head,
  });
  expect(await gh.compare(r, "main", "agent/none")).toBeNull();
  expect(await gh.pullsForBranch(r, "agent/issue-2")).toEqual([]);
  const pr = await gh.createPull(r, { title: "Widget", body: "Closes #1", head: "agent/issue-2", base: "main" });
  expect(pr).toMatchObject({ state: "open", merged: false, headRef: "agent/issue-2", headSha: head, baseRef: "main" });
  expect((await gh.pullsForBranch(r, "agent/issue-2")).map((p) => p.number)).toEqual([pr.number]);
  expect(await gh.getPull(r, pr.number)).toMatchObject({ number: pr.number, title: "Widget" });
  expect(await gh.getPull(r, 9999)).toBeNull();
  fake.state.addCommits(REPO, "main", 1);
  await gh.updatePullBranch(r, pr.number);
  fake.state.addBranch(REPO, "agent/empty");
  expect(await gh.deleteBranch(r, "agent/empty")).toBe(true);
  expect(await gh.deleteBranch(r, "agent/empty")).toBe(false);
});

test("checks, workflows and permissions", async () => {
  const sha = fake.state.addBranch(REPO, "agent/issue-3", { aheadBy: 1 });
  fake.state.addCheckRun(REPO, {
    headSha: sha,
    name: "test",
    status: "completed",
    conclusion: "failure",
    output: { title: "1 failed", summary: "s" },
  });
  const runs = await gh.checkRunsForRef(r, sha);
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({
    name: "test",
    headSha: sha,
    status: "completed",
    conclusion: "failure",
    output: { title: "1 failed", summary: "s" },
  });
  await gh.createCheckRun(r, {
    name: "orchestra config",
    headSha: sha,
    status: "completed",
    conclusion: "failure",
    title: "Invalid config",
    summary: "limits.maxAttempts must be a positive integer",
  });
  expect((await gh.checkRunsForRef(r, sha)).map((x) => x.name).sort()).toEqual(["orchestra config", "test"]);
  const wf = fake.state.addWorkflow(REPO, { path: "agent.yml", inputs: { task: { type: "string", required: true } } });
  await gh.dispatchWorkflow(r, "agent.yml", "main", { task: "7" });
  expect(fake.state.dispatches.map((d) => d.inputs)).toContainEqual({ task: "7" });
  const run = fake.state.addWorkflowRun(REPO, {
    workflowId: wf.id,
    headSha: sha,
    status: "completed",
    conclusion: "failure",
    jobs: [{ name: "build", conclusion: "failure" }],
  });
  await gh.rerunFailedJobs(r, run.id);
  expect(fake.state.reruns.length).toBeGreaterThan(0);
  fake.state.setPermission(REPO, "carol", "maintain");
  expect(await gh.permission(r, "carol")).toBe("maintain");
  expect(await gh.permission(r, "mallory")).toBe("none");
});

test("repository config with the org .github repository as defaults", async () => {
  expect(await gh.readConfig(r, ".github/orchestra.yml")).toBeNull();
  fake.state.setFile(REPO, ".github/orchestra.yml", "limits:\n  maxAttempts: 5\n");
  expect(await gh.readConfig(r, ".github/orchestra.yml")).toEqual({ limits: { maxAttempts: 5 } });
});

test("a 502 from GitHub is an error, never absence", async () => {
  fake.inject({ method: "GET", path: "/repos/{owner}/{repo}/git/ref/{ref}", status: 502, times: 1 });
  const err = await gh.getBranch(r, "main").then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GitHubError);
  expect(err).toMatchObject({ status: 502, retryable: true, operation: "get branch ref" });
  fake.inject({ method: "DELETE", path: "/repos/{owner}/{repo}/git/refs/{ref}", status: 503, times: 1 });
  fake.state.addBranch(REPO, "agent/keep");
  await expect(gh.deleteBranch(r, "agent/keep")).rejects.toMatchObject({ status: 503, retryable: true });
  expect(await gh.getBranch(r, "agent/keep")).not.toBeNull();
  fake.inject({ method: "GET", path: "/repos/{owner}/{repo}/issues/{issue_number}", status: 500, times: 1 });
  await expect(gh.getIssue(r, 1)).rejects.toBeInstanceOf(GitHubError);
});

test("a delivery's handler reaches GitHub through the port, as the installation", async () => {
  fake.state.addIssue(REPO, { number: 50, title: "Queue me", labels: ["agent:queued"] });
  const payload = fakeWebhookPayload(fake, "issues", "labeled", {
    repo: REPO,
    issue: 50,
    label: "agent:queued",
    sender: "alice",
  });
  const res = await sendWebhook(app.url + "/api/github/webhooks", {
    event: "issues",
    payload,
    secret: app.secret,
    deliveryId: "port-e2e-1",
  });
  expect(res.status).toBe(202);
  await eventually(() => (handled.includes("port-e2e-1") ? true : undefined), 10_000, "handler");
  expect(fake.state.labelsOf(REPO, 50)).toEqual(["agent:in-progress"]);
  expect(fake.state.commentsOn(REPO, 50).map((c) => c.body)).toEqual(["seen port-e2e-1"]);
  // The token exchange happened for the delivery's installation.
  expect(
    fake.requests.some(
      (q) => q.method === "POST" && q.path.includes(`/app/installations/${INSTALLATION}/access_tokens`),
    ),
  ).toBe(true);
});

test("labels on an issue: read them, and an addition answers the labels after it", async () => {
  fake.state.addIssue(REPO, { number: 60, title: "Labels", labels: ["bug", "agent:queued"] });
  expect(named(await gh.issueLabels(r, 60))).toEqual(["bug", "agent:queued"]);
  expect(named(await gh.addLabels(r, 60, ["agent:in-progress"]))).toEqual(["bug", "agent:queued", "agent:in-progress"]);
  expect(await gh.issueLabels(r, 4040)).toBeNull();
});

test("label swaps are one mutation by node ids; a node that is not there answers null for its swap alone, an outage throws", async () => {
  fake.state.addIssue(REPO, { number: 64, title: "Swap", labels: ["bug", "agent:queued"] });
  fake.state.addIssue(REPO, { number: 65, title: "Swap too", labels: ["agent:queued"] });
  const before = (await gh.issueLabels(r, 64))!;
  const interlock = (await gh.addLabels(r, 64, ["agent:in-progress"])).find((l) => l.name === "agent:in-progress")!;
  await gh.removeLabel(r, 64, "agent:in-progress");
  const idOf = (n: number) => fake.json.issue(fake.state.repo(REPO), fake.state.issue(REPO, n))["node_id"] as string;
  const queued = before.find((l) => l.name === "agent:queued")!.nodeId;

  const from = fake.requests.length;
  const [after] = await gh.swapLabels([{ issueId: idOf(64), add: [interlock.nodeId], remove: [queued] }]);
  expect(after).toEqual([before[0], interlock]);
  expect(fake.state.labelsOf(REPO, 64)).toEqual(["bug", "agent:in-progress"]);

  // Three swaps, one of them naming a label that is not there: one request, and only that swap answers null.
  const answers = await gh.swapLabels([
    { issueId: idOf(64), add: [queued], remove: [interlock.nodeId] },
    { issueId: idOf(65), add: ["LA_kwDOAAAAAAAAAAAA"], remove: [queued] },
    { issueId: idOf(65), add: [interlock.nodeId], remove: [] },
  ]);
  expect(fake.requests.slice(from).map((q) => q.operationId)).toEqual(["graphql:SwapLabels", "graphql:SwapLabels"]);
  expect(answers).toEqual([[before[0], before[1]], null, [interlock]]);
  expect(fake.state.labelsOf(REPO, 64)).toEqual(["bug", "agent:queued"]);
  // The second swap's removal ran although its add did not: GitHub runs every field it can.
  expect(fake.state.labelsOf(REPO, 65)).toEqual(["agent:in-progress"]);

  fake.inject({ path: "graphql:SwapLabels", status: 502 });
  const err = await gh
    .swapLabels([{ issueId: idOf(64), add: [interlock.nodeId], remove: [queued] }])
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(GitHubError);
  expect(err).toMatchObject({ status: 502, retryable: true, mayHaveSent: true });
});

test("check runs are updated in place; dispatched workflow runs can be found again", async () => {
  const sha = fake.state.addBranch(REPO, "agent/issue-61", { aheadBy: 1 });
  await gh.createCheckRun(r, {
    name: "Orchestra",
    headSha: sha,
    status: "in_progress",
    title: "Attempt 1",
    summary: "running",
  });
  const [created] = (await gh.checkRunsForRef(r, sha)).filter((c) => c.name === "Orchestra");
  await gh.updateCheckRun(r, created!.id, {
    status: "completed",
    conclusion: "neutral",
    title: "In review",
    summary: "PR open",
  });
  const after = (await gh.checkRunsForRef(r, sha)).filter((c) => c.name === "Orchestra");
  expect(after).toHaveLength(1);
  expect(after[0]).toMatchObject({ status: "completed", conclusion: "neutral", output: { title: "In review" } });
  fake.state.addWorkflow(REPO, { path: "find.yml", inputs: { run: { type: "string", required: true } } });
  const since = new Date(Date.now() - 60_000);
  const { workflowRunId } = await gh.dispatchWorkflow(r, "find.yml", "main", { run: "run-abc" });
  const found = await gh.dispatchedRuns(r, "find.yml", since);
  expect(found.map((w) => w.id)).toContain(workflowRunId);
});

test("a write is never retried by the client: one request, one error", async () => {
  // The test client has retries off; production's keeps them for reads only. Either way a
  // write whose answer was lost is the executor's to resolve, by reading first.
  fake.state.addIssue(REPO, { number: 62, title: "Once" });
  fake.inject({ method: "POST", path: "issues/create-comment", status: 502, perform: true, times: 1 });
  const before = fake.requestsFor("issues/create-comment").length;
  const err = await gh.createComment(r, 62, "hello").catch((e: unknown) => e);
  expect(err).toMatchObject({ status: 502, retryable: true, mayHaveSent: true });
  expect(fake.requestsFor("issues/create-comment").length - before).toBe(1);
  expect(fake.state.commentsOn(REPO, 62)).toHaveLength(1);
});

test("a secondary rate limit says until when; a suspended installation's token failure says so", async () => {
  fake.inject({
    method: "GET",
    path: "repos/get",
    status: 403,
    headers: { "retry-after": "30" },
    body: { message: "You have exceeded a secondary rate limit." },
    times: 1,
  });
  const limited = (await gh.defaultBranch(r).catch((e: unknown) => e)) as GitHubError;
  expect(limited).toMatchObject({ status: 403, retryable: true, tokenFailure: false });
  expect(limited.retryAfterMs).toBe(30_000);
  fake.state.addInstallation(4343, "suspended");
  fake.state.addRepo("suspended/app", { installationId: 4343 });
  fake.state.installations.get(4343)!.suspendedAt = new Date();
  const other = await githubFor(4343);
  const failed = (await other
    .defaultBranch({ owner: "suspended", repo: "app" })
    .catch((e: unknown) => e)) as GitHubError;
  expect(failed).toBeInstanceOf(GitHubError);
  expect(failed).toMatchObject({
    status: 403,
    tokenFailure: true,
    operation: "mint installation token",
    mayHaveSent: false,
  });
});
