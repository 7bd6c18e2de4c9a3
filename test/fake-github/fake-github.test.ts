/**
 * Drives the fake through Probot's own Octokit (installation auth, GHE-style
 * base URL) so that what passes here is what the App will see.
 */
import { generateKeyPairSync } from "node:crypto";
import { createProbot, ProbotOctokit, type Probot } from "probot";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";
import { ResponseSchemas } from "./response-schemas.js";

// the function form is the one that takes effect (see STACK.md)
const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));

type Client = InstanceType<typeof ProbotOctokit>;

const REPO = { owner: "acme", repo: "widgets" };
const INSTALLATION = 4242;

let fake: FakeGitHub;
let octokit: Client;

function installationClient(f: FakeGitHub, installationId = INSTALLATION): Client {
  return new TestOctokit({
    auth: { appId: f.appId, privateKey: f.privateKey, installationId },
    baseUrl: f.apiUrl,
  });
}

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    return (e as { status?: number }).status ?? -1;
  }
}

beforeEach(async () => {
  fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo("acme/widgets", { installationId: INSTALLATION });
  octokit = installationClient(fake);
});

afterEach(async () => {
  await fake.close();
});

describe("authentication", () => {
  it("exchanges the App JWT for an installation token and uses it", async () => {
    await octokit.rest.issues.listLabelsForRepo(REPO);
    await octokit.rest.issues.listLabelsForRepo(REPO);
    const exchanges = fake.requestsFor("apps/create-installation-access-token");
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]!.status).toBe(201);
    expect(exchanges[0]!.headers.authorization).toMatch(/^bearer ey/);
    const token = (exchanges[0]!.response as { token: string }).token;
    for (const r of fake.requestsFor("issues/list-labels-for-repo")) {
      expect(r.headers.authorization).toBe(`token ${token}`);
      expect(r.status).toBe(200);
    }
    fake.assertNoViolations();
  });

  it("rejects a JWT signed with another key", async () => {
    const other = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    const app = new TestOctokit({
      auth: { appId: fake.appId, privateKey: other.privateKey },
      baseUrl: fake.apiUrl,
    });
    await expect(app.request("GET /app")).rejects.toMatchObject({ status: 401 });
    const good = new TestOctokit({
      auth: { appId: fake.appId, privateKey: fake.privateKey },
      baseUrl: fake.apiUrl,
    });
    const { data } = await good.request("GET /app");
    expect(data).toMatchObject({ id: fake.appId, slug: "orchestra-test" });
  });

  it("hides repositories of other installations and refuses unknown tokens", async () => {
    fake.state.addInstallation(7, "other");
    fake.state.addRepo("other/secret", { installationId: 7 });
    expect(await status(octokit.rest.issues.listForRepo({ owner: "other", repo: "secret" }))).toBe(404);
    const res = await fetch(`${fake.apiUrl}/repos/acme/widgets/issues`, {
      headers: { authorization: "token ghs_nope", accept: "application/vnd.github+json", "user-agent": "test" },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ message: "Bad credentials" });
    fake.assertNoViolations();
  });

  it("asks for a new token once the old one expired", async () => {
    await octokit.rest.issues.listLabelsForRepo(REPO);
    fake.state.expireTokens();
    // a fresh client (Probot makes one per event) has no cached token
    await installationClient(fake).rest.issues.listLabelsForRepo(REPO);
    expect(fake.requestsFor("apps/create-installation-access-token")).toHaveLength(2);
  });
});

describe("the App's permissions and events", () => {
  it("GET /app answers the App's own; each installation what it accepted, which may lag behind", async () => {
    const app = new TestOctokit({
      auth: { appId: fake.appId, privateKey: fake.privateKey },
      baseUrl: fake.apiUrl,
    });
    fake.state.appPermissions["members"] = "read";
    fake.state.appEvents.push("member");
    const lagging = fake.state.addInstallation(8, "globex", { events: ["issues"] });
    delete lagging.permissions["pull_requests"];

    const { data: self } = await app.request("GET /app");
    expect(self?.permissions).toMatchObject({ issues: "write", pull_requests: "write", members: "read" });
    expect(self?.events).toContain("member");
    const { data: installations } = await app.request("GET /app/installations");
    const byId = new Map(installations.map((i) => [i.id, i]));
    expect(byId.get(INSTALLATION)).toMatchObject({
      account: { login: "acme" },
      permissions: { issues: "write", pull_requests: "write" },
    });
    expect(byId.get(INSTALLATION)!.permissions).not.toHaveProperty("members");
    expect(byId.get(INSTALLATION)!.events).not.toContain("member");
    expect(byId.get(8)).toMatchObject({ account: { login: "globex" }, events: ["issues"] });
    expect(byId.get(8)!.permissions).not.toHaveProperty("pull_requests");
    fake.assertNoViolations();
  });
});

describe("issues and labels", () => {
  it("adds and removes labels, answering like GitHub", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "Do it", labels: ["bug"], user: "alice" });
    const added = await octokit.rest.issues.addLabels({
      ...REPO,
      issue_number: issue.number,
      labels: ["agent:queued"],
    });
    expect(added.status).toBe(200);
    expect(added.data.map((l) => l.name)).toEqual(["bug", "agent:queued"]);
    expect(fake.state.repo("acme/widgets").labels.has("agent:queued")).toBe(true);

    const removed = await octokit.rest.issues.removeLabel({
      ...REPO,
      issue_number: issue.number,
      name: "agent:queued",
    });
    expect(removed.status).toBe(200);
    expect(removed.data.map((l) => l.name)).toEqual(["bug"]);
    expect(fake.state.labelsOf("acme/widgets", issue.number)).toEqual(["bug"]);

    const again = octokit.rest.issues.removeLabel({ ...REPO, issue_number: issue.number, name: "agent:queued" });
    await expect(again).rejects.toMatchObject({ status: 404, response: { data: { message: "Label does not exist" } } });
    fake.assertNoViolations();
  });

  it("refuses a duplicate label with 422 already_exists", async () => {
    await octokit.rest.issues.createLabel({ ...REPO, name: "agent:review", color: "0e8a16" });
    await expect(octokit.rest.issues.createLabel({ ...REPO, name: "Agent:Review" })).rejects.toMatchObject({
      status: 422,
      response: {
        data: { message: "Validation Failed", errors: [{ resource: "Label", code: "already_exists", field: "name" }] },
      },
    });
  });

  it("filters issues by labels and state, and pages with Link headers", async () => {
    for (let i = 0; i < 5; i++) fake.state.addIssue("acme/widgets", { title: `q${i}`, labels: ["agent:queued"] });
    fake.state.addIssue("acme/widgets", { title: "closed", labels: ["agent:queued"], state: "closed" });
    fake.state.addIssue("acme/widgets", { title: "other" });
    const all = await octokit.paginate(octokit.rest.issues.listForRepo, {
      ...REPO,
      labels: "agent:queued",
      per_page: 2,
    });
    expect(all.map((i) => i.title).sort()).toEqual(["q0", "q1", "q2", "q3", "q4"]);
    expect(fake.requestsFor("issues/list-for-repo")).toHaveLength(3);
    const closed = await octokit.rest.issues.listForRepo({ ...REPO, state: "closed" });
    expect(closed.data.map((i) => i.title)).toEqual(["closed"]);
    fake.assertNoViolations();
  });

  it("opens and edits issues as the App's bot, lists them by creator, and answers 410 Gone for a deleted one", async () => {
    fake.state.addIssue("acme/widgets", { title: "a person's", user: "alice" });
    const { data: mine } = await octokit.rest.issues.create({ ...REPO, title: "Orchestra fleet", body: "v1" });
    expect(mine.user).toMatchObject({ login: "orchestra-test[bot]", type: "Bot" });
    const edited = await octokit.rest.issues.update({ ...REPO, issue_number: mine.number, body: "v2" });
    expect(edited.data.body).toBe("v2");
    const byBot = await octokit.rest.issues.listForRepo({ ...REPO, creator: "orchestra-test[bot]", state: "all" });
    expect(byBot.data.map((i) => i.number)).toEqual([mine.number]);

    fake.state.deleteIssue("acme/widgets", mine.number);
    await expect(octokit.rest.issues.get({ ...REPO, issue_number: mine.number })).rejects.toMatchObject({
      status: 410,
      response: { data: { message: "This issue was deleted" } },
    });
    await expect(octokit.rest.issues.update({ ...REPO, issue_number: mine.number, body: "v3" })).rejects.toMatchObject({
      status: 410,
    });
    expect((await octokit.rest.issues.listForRepo({ ...REPO, state: "all" })).data.map((i) => i.title)).toEqual([
      "a person's",
    ]);
    // A number never comes back: the next issue gets a new one.
    const { data: next } = await octokit.rest.issues.create({ ...REPO, title: "Orchestra fleet", body: "v1" });
    expect(next.number).toBeGreaterThan(mine.number);
    await expect(octokit.rest.issues.get({ ...REPO, issue_number: 999 })).rejects.toMatchObject({ status: 404 });
    fake.assertNoViolations();
  });

  it("comments as the App's bot and reacts with 201 then 200", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    const human = fake.state.addComment("acme/widgets", issue.number, { body: "orchestra retry", user: "alice" });
    const { data: comment } = await octokit.rest.issues.createComment({
      ...REPO,
      issue_number: issue.number,
      body: "ok",
    });
    expect(comment.user?.login).toBe("orchestra-test[bot]");
    expect(comment.user?.type).toBe("Bot");
    const r1 = await octokit.rest.reactions.createForIssueComment({ ...REPO, comment_id: human.id, content: "+1" });
    const r2 = await octokit.rest.reactions.createForIssueComment({ ...REPO, comment_id: human.id, content: "+1" });
    expect([r1.status, r2.status]).toEqual([201, 200]);
    expect(r2.data.id).toBe(r1.data.id);
    expect(fake.state.reactionsOnComment("acme/widgets", human.id)).toHaveLength(1);
    fake.assertNoViolations();
  });

  it("reports collaborator permission with legacy permission and role name", async () => {
    fake.state.setPermission("acme/widgets", "mia", "maintain");
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...REPO, username: "mia" });
    expect(data).toMatchObject({ permission: "write", role_name: "maintain", user: { login: "mia" } });
    const stranger = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...REPO, username: "mallory" });
    expect(stranger.data).toMatchObject({ permission: "none", role_name: "none" });
  });
});

describe("git, compare and pull requests", () => {
  it("404s a missing ref and 422s deleting one", async () => {
    const main = await octokit.rest.git.getRef({ ...REPO, ref: "heads/main" });
    expect(main.data.object.sha).toBe(fake.state.repo("acme/widgets").branches.get("main"));
    await expect(octokit.rest.git.getRef({ ...REPO, ref: "heads/agent/nope" })).rejects.toMatchObject({ status: 404 });
    await expect(octokit.rest.git.deleteRef({ ...REPO, ref: "heads/agent/nope" })).rejects.toMatchObject({
      status: 422,
      response: { data: { message: "Reference does not exist" } },
    });
    fake.state.addBranch("acme/widgets", "agent/issue-1");
    const del = await octokit.rest.git.deleteRef({ ...REPO, ref: "heads/agent/issue-1" });
    expect(del.status).toBe(204);
    expect(fake.state.repo("acme/widgets").branches.has("agent/issue-1")).toBe(false);
    fake.assertNoViolations();
  });

  it("compares branches through the commit graph", async () => {
    const head = fake.state.addBranch("acme/widgets", "agent/issue-7", { aheadBy: 2 });
    fake.state.addCommits("acme/widgets", "main", 1);
    const { data } = await octokit.rest.repos.compareCommitsWithBasehead({ ...REPO, basehead: "main...agent/issue-7" });
    expect(data).toMatchObject({ status: "diverged", ahead_by: 2, behind_by: 1, total_commits: 2 });
    expect(data.commits.at(-1)!.sha).toBe(head);
    fake.assertNoViolations();
  });

  it("creates a PR only when there are commits and none exists yet, then merges it", async () => {
    fake.state.addBranch("acme/widgets", "agent/empty");
    await expect(
      octokit.rest.pulls.create({ ...REPO, head: "agent/empty", base: "main", title: "t" }),
    ).rejects.toMatchObject({ status: 422 });

    const issue = fake.state.addIssue("acme/widgets", { title: "work" });
    fake.state.addBranch("acme/widgets", "agent/issue-2", { aheadBy: 1 });
    const { data: pr } = await octokit.rest.pulls.create({
      ...REPO,
      head: "agent/issue-2",
      base: "main",
      title: "Fix",
      body: `Fixes #${issue.number}`,
    });
    expect(pr.number).toBe(issue.number + 1); // issues and PRs share one sequence
    await expect(
      octokit.rest.pulls.create({ ...REPO, head: "agent/issue-2", base: "main", title: "again" }),
    ).rejects.toMatchObject({
      status: 422,
      response: { data: { errors: [{ message: "A pull request already exists for acme:agent/issue-2." }] } },
    });

    const listed = await octokit.rest.pulls.list({ ...REPO, head: "acme:agent/issue-2" });
    expect(listed.data.map((p) => p.number)).toEqual([pr.number]);

    const merged = await octokit.rest.pulls.merge({ ...REPO, pull_number: pr.number });
    expect(merged.data.merged).toBe(true);
    expect(fake.state.issue("acme/widgets", issue.number).state).toBe("closed");
    const { data: after } = await octokit.rest.pulls.get({ ...REPO, pull_number: pr.number });
    expect(after).toMatchObject({ state: "closed", merged: true, merge_commit_sha: merged.data.sha });
    fake.assertNoViolations();
  });

  it("updates a PR branch that is behind its base", async () => {
    const pr = fake.state.addPull("acme/widgets", { head: "agent/issue-3" });
    fake.state.addCommits("acme/widgets", "main", 2);
    const before = pr.headSha;
    const res = await octokit.rest.pulls.updateBranch({ ...REPO, pull_number: pr.number });
    expect(res.status).toBe(202);
    expect(pr.headSha).not.toBe(before);
    await expect(octokit.rest.pulls.updateBranch({ ...REPO, pull_number: pr.number })).rejects.toMatchObject({
      status: 422,
    });
    fake.assertNoViolations();
  });
});

describe("checks and actions", () => {
  it("lists check runs for a ref and reruns failed jobs", async () => {
    fake.state.addWorkflow("acme/widgets", { id: 11, path: "ci.yml" });
    const pr = fake.state.addPull("acme/widgets", { head: "agent/issue-4" });
    const run = fake.state.addWorkflowRun("acme/widgets", {
      workflowId: 11,
      headBranch: "agent/issue-4",
      conclusion: "failure",
      jobs: [
        { name: "test", conclusion: "failure", output: { title: "The runner has received a shutdown signal" } },
        { name: "lint", conclusion: "success" },
      ],
    });
    const { data } = await octokit.rest.checks.listForRef({ ...REPO, ref: pr.headSha });
    expect(data.total_count).toBe(2);
    const failed = data.check_runs.find((c) => c.name === "test")!;
    expect(failed).toMatchObject({
      conclusion: "failure",
      output: { title: "The runner has received a shutdown signal" },
    });
    expect(failed.details_url).toContain(`/actions/runs/${run.id}/job/${failed.id}`);

    const rerun = await octokit.rest.actions.reRunWorkflowFailedJobs({ ...REPO, run_id: run.id });
    expect(rerun.status).toBe(201);
    expect(fake.state.reruns).toMatchObject([{ kind: "failed-jobs", id: run.id }]);
    const latest = await octokit.rest.checks.listForRef({ ...REPO, ref: pr.headSha });
    expect(latest.data.check_runs.find((c) => c.name === "test")).toMatchObject({ status: "queued", conclusion: null });
    expect(latest.data.check_runs.find((c) => c.name === "lint")).toMatchObject({ conclusion: "success" });
    const { data: jobs } = await octokit.rest.actions.listJobsForWorkflowRun({ ...REPO, run_id: run.id });
    expect(jobs.jobs.map((j) => [j.name, j.run_attempt])).toEqual([
      ["lint", 2],
      ["test", 2],
    ]);
    fake.assertNoViolations();
  });

  it("records workflow dispatches and refuses workflows without the trigger", async () => {
    fake.state.addWorkflow("acme/widgets", { id: 21, path: "agent.yml", inputs: { issue: { required: true } } });
    fake.state.addWorkflow("acme/widgets", { id: 22, path: "ci.yml", dispatchable: false });
    const res = await octokit.rest.actions.createWorkflowDispatch({
      ...REPO,
      workflow_id: "agent.yml",
      ref: "main",
      inputs: { issue: "5" },
    });
    expect(res.status).toBe(204);
    expect(fake.state.dispatches).toMatchObject([
      { repo: "acme/widgets", workflowId: 21, ref: "main", inputs: { issue: "5" } },
    ]);
    const runs = await octokit.rest.actions.listWorkflowRuns({ ...REPO, workflow_id: 21, event: "workflow_dispatch" });
    expect(runs.data.workflow_runs).toHaveLength(1);

    await expect(
      octokit.rest.actions.createWorkflowDispatch({ ...REPO, workflow_id: 22, ref: "main" }),
    ).rejects.toMatchObject({
      status: 422,
      response: { data: { message: "Workflow does not have 'workflow_dispatch' trigger" } },
    });
    await expect(
      octokit.rest.actions.createWorkflowDispatch({ ...REPO, workflow_id: 21, ref: "nope", inputs: { issue: "1" } }),
    ).rejects.toMatchObject({ status: 422, response: { data: { message: "No ref found for: nope" } } });
    fake.assertNoViolations();
  });
});

describe("contents and config", () => {
  it("serves files base64-encoded, raw on request, and 404 when absent", async () => {
    fake.state.setFile("acme/widgets", ".github/orchestra.yml", "limits:\n  maxAttempts: 5\n");
    const { data } = await octokit.rest.repos.getContent({ ...REPO, path: ".github/orchestra.yml" });
    expect(Buffer.from((data as { content: string }).content, "base64").toString()).toBe("limits:\n  maxAttempts: 5\n");
    // Probot's context.config() reads through @probot/octokit-plugin-config with the raw media type
    const { config } = await octokit.config.get({ ...REPO, path: ".github/orchestra.yml" });
    expect(config).toEqual({ limits: { maxAttempts: 5 } });
    // absent in the repo and in the org's .github repo: the plugin yields {}
    const missing = await octokit.config.get({ ...REPO, path: ".github/absent.yml" });
    expect(missing.config).toEqual({});
    expect(missing.files.map((f) => f.config)).toEqual([null, null]);
    expect(fake.requestsFor("repos/get-content").at(-1)!.status).toBe(404);
    fake.assertNoViolations();
  });
});

describe("violations and error injection", () => {
  it("answers 422 and records a schema violation", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    const res = octokit.request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", {
      ...REPO,
      issue_number: issue.number,
      labels: 5 as unknown as string[],
    });
    await expect(res).rejects.toMatchObject({ status: 422 });
    expect(fake.violations).toHaveLength(1);
    expect(fake.violations[0]).toMatch(
      /^issues\/add-labels POST \/repos\/acme\/widgets\/issues\/1\/labels: request body/,
    );
    expect(() => fake.assertNoViolations()).toThrow(/1 violation/);
  });

  it("records unexpected routes and unknown query parameters", async () => {
    await expect(octokit.request("GET /repos/{owner}/{repo}/frobnicate", REPO)).rejects.toMatchObject({ status: 404 });
    await expect(octokit.request("GET /repos/{owner}/{repo}/deployments", REPO)).rejects.toMatchObject({ status: 404 });
    await octokit.request("GET /repos/{owner}/{repo}/issues", { ...REPO, label: "typo" });
    expect(fake.violations).toEqual([
      "unexpected route GET /repos/acme/widgets/frobnicate (not in GitHub's REST description)",
      "unexpected route GET /repos/acme/widgets/deployments (repos/list-deployments is not implemented by the fake)",
      "issues/list-for-repo GET /repos/acme/widgets/issues: unknown query parameter label (GitHub ignores it)",
    ]);
  });

  it("flags a pulls head filter without owner, which GitHub ignores", async () => {
    await octokit.rest.pulls.list({ ...REPO, head: "agent/issue-1" });
    expect(fake.violations[0]).toMatch(/has no "owner:" prefix/);
  });

  it("injects errors for the next N matching requests", async () => {
    fake.inject({ method: "GET", path: "/repos/acme/widgets/pulls", status: 502, times: 2 });
    await expect(octokit.rest.pulls.list(REPO)).rejects.toMatchObject({ status: 502 });
    await expect(octokit.rest.pulls.list(REPO)).rejects.toMatchObject({ status: 502 });
    expect((await octokit.rest.pulls.list(REPO)).status).toBe(200);
    fake.inject({ path: "issues/create", status: 503, body: { message: "Service Unavailable" } });
    await expect(octokit.rest.issues.create({ ...REPO, title: "x" })).rejects.toMatchObject({ status: 503 });
    expect(fake.requests.filter((r) => r.injected).map((r) => r.status)).toEqual([502, 502, 503]);
    fake.assertNoViolations();
  });
});

describe("performed injections and chaos", () => {
  it("performs the write, then answers the injected 502 (the answer was lost)", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    fake.inject({ method: "POST", path: "issues/create-comment", status: 502, perform: true });
    await expect(
      octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "once" }),
    ).rejects.toMatchObject({
      status: 502,
      response: { data: { message: "Bad Gateway" } },
    });
    expect(fake.state.commentsOn("acme/widgets", issue.number).map((c) => [c.body, c.user])).toEqual([
      ["once", "orchestra-test[bot]"],
    ]);
    const [rec] = fake.requestsFor("issues/create-comment");
    expect(rec).toMatchObject({ injected: true, status: 502, performedStatus: 201 });
    // the rule is used up: the retry creates a second comment and answers for real
    const again = await octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "once" });
    expect(again.status).toBe(201);
    expect(fake.state.commentsOn("acme/widgets", issue.number)).toHaveLength(2);
    expect(fake.requestsFor("issues/create-comment")[1]).not.toHaveProperty("injected");
    fake.assertNoViolations();
  });

  it("does not run the handler for an injection without perform", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    fake.inject({ path: "issues/create-comment", status: 502 });
    await expect(
      octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" }),
    ).rejects.toMatchObject({ status: 502 });
    expect(fake.state.commentsOn("acme/widgets", issue.number)).toEqual([]);
    expect(fake.requestsFor("issues/create-comment")[0]).not.toHaveProperty("performedStatus");
  });

  it("chaos with failRate 1 and performedShare 0 answers every write 502 and changes nothing", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x", labels: ["bug"] });
    await octokit.rest.issues.listLabelsOnIssue({ ...REPO, issue_number: issue.number }); // mints the token first
    fake.chaos({ seed: 1, failRate: 1, performedShare: 0, secondaryRateLimitRate: 0 });
    const writes = [
      octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" }),
      octokit.rest.issues.addLabels({ ...REPO, issue_number: issue.number, labels: ["agent:queued"] }),
      octokit.rest.issues.removeLabel({ ...REPO, issue_number: issue.number, name: "bug" }),
      octokit.rest.issues.update({ ...REPO, issue_number: issue.number, state: "closed" }),
      octokit.rest.git.createRef({
        ...REPO,
        ref: "refs/heads/agent/x",
        sha: fake.state.repo("acme/widgets").branches.get("main")!,
      }),
    ];
    for (const w of writes) expect(await status(w)).toBe(502);
    expect(fake.state.commentsOn("acme/widgets", issue.number)).toEqual([]);
    expect(fake.state.labelsOf("acme/widgets", issue.number)).toEqual(["bug"]);
    expect(fake.state.issue("acme/widgets", issue.number).state).toBe("open");
    expect(fake.state.repo("acme/widgets").branches.has("agent/x")).toBe(false);
    expect(fake.chaosStats()).toEqual({ writes: 5, failed502: 5, performed502: 0, rateLimited: 0 });
    const faulted = fake.requests.filter((r) => r.injected);
    expect(faulted).toHaveLength(5);
    expect(faulted.every((r) => r.status === 502 && r.performedStatus === undefined)).toBe(true);

    fake.chaos(null);
    expect((await octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" })).status).toBe(
      201,
    );
    expect(fake.chaosStats().writes).toBe(5); // switching off keeps the counters
    fake.assertNoViolations();
  });

  it("chaos with failRate 1 and performedShare 1 performs every write before answering 502", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    fake.chaos({ seed: 3, failRate: 1, performedShare: 1, secondaryRateLimitRate: 0 });
    expect(await status(octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" }))).toBe(
      502,
    );
    expect(fake.state.commentsOn("acme/widgets", issue.number)).toHaveLength(1);
    expect(fake.requestsFor("issues/create-comment")[0]).toMatchObject({
      injected: true,
      status: 502,
      performedStatus: 201,
    });
    expect(fake.chaosStats()).toEqual({ writes: 1, failed502: 1, performed502: 1, rateLimited: 0 });
    fake.assertNoViolations();
  });

  it("chaos with a seed is repeatable", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    const opts = { seed: 20240601, failRate: 0.3, performedShare: 0.5, secondaryRateLimitRate: 0.2 };
    const run = async (seed: number): Promise<number[]> => {
      fake.chaos({ ...opts, seed });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        statuses.push(
          await status(octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: `c${i}` })),
        );
      }
      return statuses;
    };
    const first = await run(opts.seed);
    const stats = fake.chaosStats();
    const second = await run(opts.seed);
    expect(second).toEqual(first);
    expect(fake.chaosStats()).toEqual(stats);
    // every kind of answer shows up, and the counters agree with them
    expect(new Set(first)).toEqual(new Set([200, 502, 403]));
    expect(stats).toEqual({
      writes: 40,
      failed502: first.filter((s) => s === 502).length,
      performed502: stats.performed502,
      rateLimited: first.filter((s) => s === 403).length,
    });
    expect(stats.performed502).toBeGreaterThan(0);
    expect(stats.performed502).toBeLessThan(stats.failed502);
    // comments exist for the successes and the performed 502s, twice over
    const created = first.filter((s) => s === 200).length + stats.performed502;
    expect(fake.state.commentsOn("acme/widgets", issue.number)).toHaveLength(2 * created);
    expect(await run(opts.seed + 1)).not.toEqual(first);
    fake.assertNoViolations();
  });

  it("never faults GETs, GraphQL or token minting", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    fake.chaos({ seed: 5, failRate: 0.5, secondaryRateLimitRate: 0.5 });
    fake.graphql.register("Viewer", () => ({ viewer: { login: "orchestra-test[bot]" } }));
    for (let i = 0; i < 3; i++) {
      // a fresh client mints a token with a POST first
      const client = installationClient(fake);
      expect((await client.rest.issues.get({ ...REPO, issue_number: issue.number })).status).toBe(200);
      expect((await client.rest.issues.listComments({ ...REPO, issue_number: issue.number })).status).toBe(200);
      expect(await client.graphql(`query Viewer { viewer { login } }`)).toEqual({
        viewer: { login: "orchestra-test[bot]" },
      });
    }
    expect(fake.requestsFor("apps/create-installation-access-token").map((r) => r.status)).toEqual([201, 201, 201]);
    expect(fake.requests.some((r) => r.injected)).toBe(false);
    expect(fake.chaosStats()).toEqual({ writes: 0, failed502: 0, performed502: 0, rateLimited: 0 });
    // while every write is faulted
    expect([403, 502]).toContain(
      await status(octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" })),
    );
    expect(fake.chaosStats().writes).toBe(1);
    fake.assertNoViolations();
  });

  it("answers a secondary rate limit like GitHub, with retry-after, and never performs it", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    fake.chaos({ seed: 9, failRate: 0, secondaryRateLimitRate: 1, retryAfterSeconds: 7 });
    const error = await octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" }).then(
      () => null,
      (e: unknown) =>
        e as {
          status: number;
          response: { headers: Record<string, string>; data: { message: string; documentation_url: string } };
        },
    );
    expect(error).not.toBeNull();
    expect(error!.status).toBe(403);
    expect(error!.response.headers["retry-after"]).toBe("7");
    const requestId = error!.response.headers["x-github-request-id"];
    expect(requestId).toMatch(/^FAKE:[0-9A-F]+$/);
    expect(error!.response.data).toMatchObject({
      message:
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. " +
        `If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
      documentation_url:
        "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    });
    expect(fake.state.commentsOn("acme/widgets", issue.number)).toEqual([]);
    expect(fake.requestsFor("issues/create-comment")[0]).toMatchObject({ injected: true, status: 403, requestId });
    expect(fake.requestsFor("issues/create-comment")[0]).not.toHaveProperty("performedStatus");
    expect(fake.chaosStats()).toEqual({ writes: 1, failed502: 0, performed502: 0, rateLimited: 1 });
    fake.assertNoViolations();
  });

  it("checks inject rules before chaos, and refuses impossible rates", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "x" });
    fake.chaos({ seed: 2, failRate: 1, performedShare: 0, secondaryRateLimitRate: 0 });
    fake.inject({ path: "issues/create-comment", status: 503, perform: true });
    expect(await status(octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" }))).toBe(
      503,
    );
    expect(fake.state.commentsOn("acme/widgets", issue.number)).toHaveLength(1);
    expect(fake.chaosStats().writes).toBe(0);
    expect(await status(octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" }))).toBe(
      502,
    );
    expect(fake.chaosStats().writes).toBe(1);
    expect(() => fake.chaos({ seed: 1, failRate: 0.7, secondaryRateLimitRate: 0.5 })).toThrow(/between 0 and 1/);
    expect(() => fake.chaos({ seed: 1, failRate: -0.1, secondaryRateLimitRate: 0 })).toThrow(/failRate/);
    fake.assertNoViolations();
  });
});

describe("graphql", () => {
  const MERGE_STATE = `
    query PullRequestMergeState($owner: String!, $repo: String!, $number: Int!) {
      repository(owner: $owner, name: $repo) {
        pullRequest(number: $number) { number mergeable state: mergeStateStatus headRefOid }
      }
    }`;

  it("answers PullRequestMergeState with only the selected fields", async () => {
    const pr = fake.state.addPull("acme/widgets", { head: "agent/issue-9" });
    fake.state.addCommits("acme/widgets", "main", 1);
    const data = await octokit.graphql(MERGE_STATE, { ...REPO, number: pr.number });
    expect(data).toEqual({
      repository: {
        pullRequest: { number: pr.number, mergeable: "MERGEABLE", state: "BEHIND", headRefOid: pr.headSha },
      },
    });
    fake.state.setPullConflicting("acme/widgets", pr.number);
    const again = await octokit.graphql<{ repository: { pullRequest: { mergeable: string; state: string } } }>(
      MERGE_STATE,
      {
        ...REPO,
        number: pr.number,
      },
    );
    expect(again.repository.pullRequest).toMatchObject({ mergeable: "CONFLICTING", state: "DIRTY" });
    fake.assertNoViolations();
  });

  it("answers IssueClosingPullRequests from closing keywords", async () => {
    const issue = fake.state.addIssue("acme/widgets", { title: "bug" });
    const pr = fake.state.addPull("acme/widgets", { head: "agent/issue-1", body: `Closes #${issue.number}` });
    const data = await octokit.graphql(
      `query IssueClosingPullRequests($owner: String!, $repo: String!, $number: Int!) {
        repository(owner: $owner, name: $repo) {
          issue(number: $number) {
            closedByPullRequestsReferences(first: 10, includeClosedPrs: true) {
              totalCount
              nodes { number state headRefName }
            }
          }
        }
      }`,
      { ...REPO, number: issue.number },
    );
    expect(data).toEqual({
      repository: {
        issue: {
          closedByPullRequestsReferences: {
            totalCount: 1,
            nodes: [{ number: pr.number, state: "OPEN", headRefName: "agent/issue-1" }],
          },
        },
      },
    });
    fake.assertNoViolations();
  });

  it("reports NOT_FOUND like GitHub; answers any operation, a registered one from its own handler", async () => {
    await expect(octokit.graphql(MERGE_STATE, { ...REPO, number: 999 })).rejects.toMatchObject({
      errors: [{ type: "NOT_FOUND", path: ["repository", "pullRequest"] }],
    });
    expect(await octokit.graphql(`query Whatever { viewer { login } }`)).toEqual({
      viewer: { login: "orchestra-test[bot]" },
    });
    fake.graphql.register("Whatever", () => ({ viewer: { login: "custom" } }));
    expect(await octokit.graphql(`query Whatever { viewer { login } }`)).toEqual({ viewer: { login: "custom" } });
    fake.assertNoViolations();
  });
});

describe("a Probot app aimed at the fake through GHE_HOST", () => {
  it("authenticates, reads its config and talks REST and GraphQL", async () => {
    fake.state.setFile("acme/widgets", ".github/orchestra.yml", "labels:\n  queued: todo\n");
    const issue = fake.state.addIssue("acme/widgets", { title: "Queue me", labels: ["todo"] });
    const probot: Probot = createProbot({
      env: { ...fake.env, WEBHOOK_SECRET: "s", LOG_LEVEL: "error" },
      overrides: { Octokit: TestOctokit },
    });
    const seen: unknown[] = [];
    await probot.load((app) => {
      app.on("issues.labeled", async (context) => {
        const config = await context.config<{ labels: { queued: string } }>("orchestra.yml");
        await context.octokit.rest.issues.addLabels(context.issue({ labels: ["agent:in-progress"] }));
        await context.octokit.rest.issues.removeLabel(context.issue({ name: config!.labels.queued }));
        seen.push(
          await context.octokit.graphql(
            `query IssueClosingPullRequests($owner: String!, $repo: String!, $number: Int!) {
              repository(owner: $owner, name: $repo) { issue(number: $number) { closedByPullRequestsReferences(first: 5) { totalCount } } }
            }`,
            // context.issue() says issue_number; the query wants number
            context.repo({ number: context.payload.issue.number }),
          ),
        );
      });
    });
    await probot.receive({
      id: "delivery-1",
      name: "issues",
      payload: fakeWebhookPayload(fake, "issues", "labeled", {
        repo: "acme/widgets",
        issue: issue.number,
        label: "todo",
      }) as never,
    });
    expect(fake.state.labelsOf("acme/widgets", issue.number)).toEqual(["agent:in-progress"]);
    expect(seen).toEqual([{ repository: { issue: { closedByPullRequestsReferences: { totalCount: 0 } } } }]);
    expect(fake.requests.map((r) => r.operationId)).toEqual([
      "apps/create-installation-access-token",
      "repos/get-content",
      "issues/add-labels",
      "issues/remove-label",
      "graphql:IssueClosingPullRequests",
    ]);
    expect(fake.requests.every((r) => r.headers["user-agent"]?.startsWith("probot/"))).toBe(true);
    fake.assertNoViolations();
  });
});

describe("response shapes", () => {
  it("match the response schemas in GitHub's description", async () => {
    const schemas = new ResponseSchemas();
    const issue = fake.state.addIssue("acme/widgets", { title: "t", labels: ["bug"] });
    fake.state.addComment("acme/widgets", issue.number, { body: "hi", user: "alice" });
    fake.state.addWorkflow("acme/widgets", { id: 31, path: "ci.yml" });
    const pr = fake.state.addPull("acme/widgets", { head: "agent/issue-x", body: `Fixes #${issue.number}` });
    const run = fake.state.addWorkflowRun("acme/widgets", {
      workflowId: 31,
      headBranch: "agent/issue-x",
      conclusion: "failure",
      jobs: [
        {
          name: "test",
          conclusion: "failure",
          steps: [{ name: "npm test", status: "completed", conclusion: "failure", number: 1 }],
        },
      ],
    });
    fake.state.setFile("acme/widgets", "README.md", "# hi\n");
    const app = new TestOctokit({
      auth: { appId: fake.appId, privateKey: fake.privateKey },
      baseUrl: fake.apiUrl,
    });

    fake.state.hookDeliveries.push(
      { event: "issues", action: "labeled", status: 502, installationId: INSTALLATION },
      { event: "push", status: 0 },
    );
    await app.request("GET /app");
    await app.request("GET /app/installations");
    await app.request("GET /app/hook/deliveries", { per_page: 1 });
    await app.request("GET /repos/{owner}/{repo}/installation", REPO);
    await octokit.rest.repos.get(REPO);
    await octokit.rest.issues.get({ ...REPO, issue_number: issue.number });
    await octokit.rest.issues.get({ ...REPO, issue_number: pr.number });
    await octokit.rest.issues.listForRepo(REPO);
    await octokit.rest.issues.create({ ...REPO, title: "new", labels: ["agent:queued"] });
    await octokit.rest.issues.update({
      ...REPO,
      issue_number: issue.number,
      state: "closed",
      state_reason: "not_planned",
    });
    await octokit.rest.issues.addLabels({ ...REPO, issue_number: issue.number, labels: ["x"] });
    await octokit.rest.issues.setLabels({ ...REPO, issue_number: issue.number, labels: ["y"] });
    await octokit.rest.issues.listLabelsOnIssue({ ...REPO, issue_number: issue.number });
    await octokit.rest.issues.getLabel({ ...REPO, name: "y" });
    await octokit.rest.issues.updateLabel({ ...REPO, name: "y", color: "ff0000" });
    const { data: c } = await octokit.rest.issues.createComment({ ...REPO, issue_number: issue.number, body: "b" });
    await octokit.rest.issues.listComments({ ...REPO, issue_number: issue.number });
    await octokit.rest.issues.updateComment({ ...REPO, comment_id: c.id, body: "c" });
    await octokit.rest.issues.getComment({ ...REPO, comment_id: c.id });
    await octokit.rest.reactions.createForIssueComment({ ...REPO, comment_id: c.id, content: "rocket" });
    await octokit.rest.pulls.list(REPO);
    await octokit.rest.pulls.get({ ...REPO, pull_number: pr.number });
    await octokit.rest.pulls.update({ ...REPO, pull_number: pr.number, title: "T" });
    await octokit.rest.pulls.listCommits({ ...REPO, pull_number: pr.number });
    await octokit.rest.git.getRef({ ...REPO, ref: "heads/main" });
    await octokit.rest.git.createRef({ ...REPO, ref: "refs/heads/tmp", sha: pr.headSha });
    await octokit.rest.repos.getBranch({ ...REPO, branch: "main" });
    await octokit.rest.repos.getCommit({ ...REPO, ref: "main" });
    await octokit.rest.repos.compareCommitsWithBasehead({ ...REPO, basehead: `main...${pr.headRef}` });
    await octokit.rest.repos.getCollaboratorPermissionLevel({ ...REPO, username: "acme" });
    await octokit.rest.repos.getContent({ ...REPO, path: "README.md" });
    await octokit.rest.checks.listForRef({ ...REPO, ref: pr.headSha });
    await octokit.rest.checks.listSuitesForRef({ ...REPO, ref: pr.headSha });
    const { data: mine } = await octokit.rest.checks.create({
      ...REPO,
      name: "orchestra",
      head_sha: pr.headSha,
      status: "in_progress",
    });
    await octokit.rest.checks.update({
      ...REPO,
      check_run_id: mine.id,
      conclusion: "success",
      output: { title: "ok", summary: "fine" },
    });
    await octokit.rest.checks.get({ ...REPO, check_run_id: mine.id });
    await octokit.rest.actions.listWorkflowRunsForRepo(REPO);
    await octokit.rest.actions.getWorkflowRun({ ...REPO, run_id: run.id });
    await octokit.rest.actions.listJobsForWorkflowRun({ ...REPO, run_id: run.id });
    await octokit.rest.actions.listRepoWorkflows(REPO);
    await octokit.rest.actions.reRunWorkflowFailedJobs({ ...REPO, run_id: run.id });
    await octokit.rest.pulls.updateBranch({ ...REPO, pull_number: pr.number }).catch(() => undefined);
    await octokit.rest.pulls.merge({ ...REPO, pull_number: pr.number });
    await octokit.rest.apps.listReposAccessibleToInstallation();

    const problems: string[] = [];
    for (const r of fake.requests) {
      if (!r.operationId || r.operationId.startsWith("graphql:") || r.status >= 300) continue;
      const problem = schemas.check(r.operationId, r.status, r.response);
      if (problem) problems.push(`${r.operationId} ${r.status}: ${problem}`);
    }
    expect(problems).toEqual([]);
    fake.assertNoViolations();
  });
});
