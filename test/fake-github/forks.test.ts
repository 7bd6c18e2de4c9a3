/**
 * Forks in the fake, read through Probot's Octokit and the App's own port
 * (src/github/octokit.ts): a fork's repository JSON, pull requests into the
 * parent from a fork's branch (their head, the `head=owner:branch` filter, a
 * commit's pull requests, closing references), a fork's branch and a
 * same-named branch of the parent kept apart, and every REST answer checked
 * against GitHub's description.
 */
import { ProbotOctokit } from "probot";
import { octokitGitHub } from "../../src/github/octokit.js";
import type { GitHub } from "../../src/github/port.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";
import { ResponseSchemas } from "./response-schemas.js";

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));
type Client = InstanceType<typeof ProbotOctokit>;

const REPO = "acme/widgets";
const FORK = "mallory/widgets";
const r = { owner: "acme", repo: "widgets" };
const BRANCH = "agent/issue-7";

let fake: FakeGitHub;
let octokit: Client;
let gh: GitHub;
let schemas: ResponseSchemas;

beforeAll(() => {
  schemas = new ResponseSchemas();
});

beforeEach(async () => {
  fake = await startFakeGitHub();
  fake.state.addInstallation(4242, "acme");
  fake.state.addRepo(REPO, { installationId: 4242 });
  octokit = client(4242);
  gh = octokitGitHub(octokit);
});

afterEach(async () => {
  fake.assertNoViolations();
  // every REST answer fits GitHub's description
  const problems = fake.requests
    .filter((q) => q.operationId && !q.operationId.startsWith("graphql:") && q.status < 300)
    .map((q) => schemas.check(q.operationId!, q.status, q.response))
    .filter((p) => p !== null);
  expect(problems).toEqual([]);
  await fake.close();
});

function client(installationId: number): Client {
  return new TestOctokit({
    auth: { appId: fake.appId, privateKey: fake.privateKey, installationId },
    baseUrl: fake.apiUrl,
  });
}

/** Issue #7 in the parent; mallory's fork with two commits on agent/issue-7 and PR #8 from it saying "Closes #7". */
function forkPull() {
  fake.state.addIssue(REPO, { number: 7 });
  fake.state.addFork(REPO, "mallory");
  const head = fake.state.addBranch(FORK, BRANCH, { aheadBy: 2, author: "mallory" });
  const pr = fake.state.addPull(REPO, { head: BRANCH, headRepo: FORK, number: 8, body: "Closes #7", user: "mallory" });
  return { head, pr };
}

test("a fork is a repository of its own that starts with its parent's history", async () => {
  fake.state.addInstallation(5151, "mallory", { accountType: "User" });
  fake.state.addBranch(REPO, "feature", { aheadBy: 1 });
  fake.state.addIssue(REPO, { number: 3 });
  const fork = fake.state.addFork(REPO, "mallory");
  const parent = fake.state.repo(REPO);
  expect(fork.fullName).toBe(FORK);
  expect(fork.parent).toBe(parent);
  expect([...fork.branches]).toEqual([...parent.branches]);
  expect(fork.isPrivate).toBe(parent.isPrivate);
  // its own issue numbers
  expect(fake.state.addIssue(FORK).number).toBe(1);
  // later commits stay where they were made
  const forkOnly = fake.state.addCommits(FORK, "main");
  expect(parent.commits.has(forkOnly)).toBe(false);
  expect(parent.branches.get("main")).not.toBe(forkOnly);

  const { data: f } = await client(5151).rest.repos.get({ owner: "mallory", repo: "widgets" });
  expect(f).toMatchObject({
    full_name: FORK,
    fork: true,
    parent: { full_name: REPO, fork: false },
    source: { full_name: REPO },
  });
  const { data: p } = await octokit.rest.repos.get(r);
  expect(p).toMatchObject({ full_name: REPO, fork: false, forks_count: 1, network_count: 1 });
  expect(p).not.toHaveProperty("parent");

  // a fork of the fork: its parent is the fork, its source the root
  fake.state.addInstallation(6161, "trent", { accountType: "User" });
  fake.state.addFork(FORK, "trent");
  const { data: t } = await client(6161).rest.repos.get({ owner: "trent", repo: "widgets" });
  expect(t).toMatchObject({ fork: true, parent: { full_name: FORK, fork: true }, source: { full_name: REPO } });
  expect(() => fake.state.addFork(REPO, "acme")).toThrow(/own owner/);
});

test("a pull request from a fork's branch lives in the parent and its head is the fork's", async () => {
  const { head, pr } = forkPull();
  expect(pr).toMatchObject({ number: 8, headRef: BRANCH, headRepo: FORK, headSha: head });
  // the fork's issue numbers are its own: #8 is the parent's
  expect(fake.state.repo(FORK).pulls.size).toBe(0);

  const { data } = await octokit.rest.pulls.get({ ...r, pull_number: 8 });
  expect(data.head).toMatchObject({
    label: `mallory:${BRANCH}`,
    ref: BRANCH,
    sha: head,
    user: { login: "mallory" },
    repo: { full_name: FORK, fork: true },
  });
  expect(data.base).toMatchObject({ label: "acme:main", ref: "main", repo: { full_name: REPO, fork: false } });
  // its commits are readable in the parent, as GitHub keeps refs/pull/8/head there
  expect((await octokit.rest.pulls.listCommits({ ...r, pull_number: 8 })).data.map((c) => c.sha).at(-1)).toBe(head);
  expect(
    (await octokit.rest.repos.compareCommitsWithBasehead({ ...r, basehead: `main...${head}` })).data.ahead_by,
  ).toBe(2);
  // a commit's pull requests in the parent include the fork's
  expect((await gh.pullsForCommit(r, head)).map((p) => [p.number, p.headRepo])).toEqual([[8, FORK]]);
  expect((await gh.getPull(r, 8))?.headRepo).toBe(FORK);

  // the fork's branch must exist, and the fork must be of the network
  expect(() => fake.state.addPull(REPO, { head: "nope", headRepo: FORK })).toThrow(
    /no branch nope in mallory\/widgets/,
  );
  fake.state.addRepo("bob/widgets");
  fake.state.addBranch("bob/widgets", "x", { aheadBy: 1 });
  expect(() => fake.state.addPull(REPO, { head: "x", headRepo: "bob/widgets" })).toThrow(
    /not in acme\/widgets's network/,
  );
});

test("head=owner:branch matches the head repository's owner and the branch, as on GitHub", async () => {
  forkPull();
  fake.state.addBranch(REPO, BRANCH, { aheadBy: 1 });
  fake.state.addPull(REPO, { head: BRANCH, number: 9 });
  const list = async (head?: string) =>
    (await octokit.rest.pulls.list({ ...r, state: "all", ...(head ? { head } : {}) })).data.map((p) => [
      p.number,
      p.head.label,
    ]);
  expect(await list(`acme:${BRANCH}`)).toEqual([[9, `acme:${BRANCH}`]]);
  expect(await list(`mallory:${BRANCH}`)).toEqual([[8, `mallory:${BRANCH}`]]);
  expect(await list(`Mallory:${BRANCH}`)).toEqual([[8, `mallory:${BRANCH}`]]);
  expect(await list(`bob:${BRANCH}`)).toEqual([]);
  expect(await list(`mallory:other`)).toEqual([]);
  // newest first
  expect(await list()).toEqual([
    [9, `acme:${BRANCH}`],
    [8, `mallory:${BRANCH}`],
  ]);
  // the App's own read asks for its owner's branch and so never sees the fork's
  expect((await gh.pullsForBranch(r, BRANCH, "all")).map((p) => [p.number, p.headRepo])).toEqual([[9, REPO]]);
});

test("a fork's branch and a same-named branch of the parent move and die apart", () => {
  const { head } = forkPull();
  fake.state.addBranch(REPO, BRANCH, { aheadBy: 1 });
  const own = fake.state.addPull(REPO, { head: BRANCH, number: 9 });
  const fork = fake.state.pull(REPO, 8);

  const ownNext = fake.state.addCommits(REPO, BRANCH);
  expect([own.headSha, fork.headSha]).toEqual([ownNext, head]);
  const forkNext = fake.state.addCommits(FORK, BRANCH);
  expect([own.headSha, fork.headSha]).toEqual([ownNext, forkNext]);
  // the new head is readable in the parent
  expect(fake.state.resolveRef(fake.state.repo(REPO), forkNext)).toBe(forkNext);

  fake.state.deleteBranch(REPO, BRANCH);
  expect([fake.state.issue(REPO, 9).state, fake.state.issue(REPO, 8).state]).toEqual(["closed", "open"]);
  fake.state.deleteBranch(FORK, BRANCH);
  expect(fake.state.issue(REPO, 8).state).toBe("closed");
});

test("a fork's pull request saying Closes #7 closes the parent's #7 (GraphQL, and on merge)", async () => {
  forkPull();
  const { repository } = await octokit.graphql<any>(
    `query ForkPull($owner: String!, $repo: String!) { repository(owner: $owner, name: $repo) {
      pullRequest(number: 8) { isCrossRepository headRefName headRepository { nameWithOwner isFork parent { nameWithOwner } }
        headRepositoryOwner { login } maintainerCanModify closingIssuesReferences(first: 5) { nodes { number } } }
      issue(number: 7) { closedByPullRequestsReferences(first: 5) { nodes { number isCrossRepository } } } } }`,
    { owner: "acme", repo: "widgets" },
  );
  expect(repository).toEqual({
    pullRequest: {
      isCrossRepository: true,
      headRefName: BRANCH,
      headRepository: { nameWithOwner: FORK, isFork: true, parent: { nameWithOwner: REPO } },
      headRepositoryOwner: { login: "mallory" },
      maintainerCanModify: false,
      closingIssuesReferences: { nodes: [{ number: 7 }] },
    },
    issue: { closedByPullRequestsReferences: { nodes: [{ number: 8, isCrossRepository: true }] } },
  });

  const sha = fake.state.mergePull(REPO, 8, { by: "acme" });
  expect(fake.state.repo(REPO).commits.get(sha)?.message).toBe(`Merge pull request #8 from mallory/${BRANCH}`);
  expect(fake.state.issue(REPO, 7).state).toBe("closed");
});

test("POST pulls with head mallory:branch opens a pull request from the fork", async () => {
  fake.state.addFork(REPO, "mallory");
  const head = fake.state.addBranch(FORK, BRANCH, { aheadBy: 1 });
  const { data } = await octokit.rest.pulls.create({ ...r, head: `mallory:${BRANCH}`, base: "main", title: "t" });
  expect(data.head).toMatchObject({ label: `mallory:${BRANCH}`, sha: head, repo: { full_name: FORK } });
  expect(fake.state.pull(REPO, data.number).headRepo).toBe(FORK);
  await expect(
    octokit.rest.pulls.create({ ...r, head: `mallory:${BRANCH}`, base: "main", title: "t" }),
  ).rejects.toMatchObject({ status: 422 });
  await expect(
    octokit.rest.pulls.create({ ...r, head: `bob:${BRANCH}`, base: "main", title: "t" }),
  ).rejects.toMatchObject({ status: 422 });
  // the parent's branch of the same name is another head: its pull request is another one
  fake.state.addBranch(REPO, BRANCH, { aheadBy: 1 });
  const { data: own } = await octokit.rest.pulls.create({ ...r, head: `acme:${BRANCH}`, base: "main", title: "own" });
  expect(own.head.repo?.full_name).toBe(REPO);

  // updating the fork's branch needs "allow edits from maintainers"
  fake.state.addCommits(REPO, "main");
  await expect(octokit.rest.pulls.updateBranch({ ...r, pull_number: data.number })).rejects.toMatchObject({
    status: 422,
  });
  await octokit.rest.pulls.update({ ...r, pull_number: data.number, maintainer_can_modify: true });
  await octokit.rest.pulls.updateBranch({ ...r, pull_number: data.number });
  const forkHead = fake.state.repo(FORK).branches.get(BRANCH)!;
  expect(forkHead).not.toBe(head);
  expect(fake.state.pull(REPO, data.number).headSha).toBe(forkHead);
  expect(fake.state.repo(REPO).branches.get(BRANCH)).toBe(own.head.sha);
});

test("webhooks and check runs render a fork's pull request as GitHub does", async () => {
  const { head } = forkPull();
  const payload = fakeWebhookPayload(fake, "pull_request", "opened", { repo: REPO, pull: 8, sender: "mallory" }) as any;
  expect(payload.repository.full_name).toBe(REPO);
  expect(payload.pull_request.head).toMatchObject({
    label: `mallory:${BRANCH}`,
    user: { login: "mallory" },
    repo: { full_name: FORK, fork: true },
  });
  expect(payload.pull_request.base.repo.full_name).toBe(REPO);
  // (the support helper's `organization` is a user's shape, not an organization's: left out of the check)
  delete payload.organization;
  expect(schemas.checkComponent("webhook-pull-request-opened", payload)).toBeNull();

  // the Checks API lists no pull request for a fork's head
  fake.state.addCheckRun(REPO, { headSha: head, name: "ci" });
  const own = fake.state.addPull(REPO, { head: "agent/issue-9", number: 9 });
  fake.state.addCheckRun(REPO, { headSha: own.headSha, name: "ci" });
  const prsOf = async (ref: string) =>
    (await octokit.rest.checks.listForRef({ ...r, ref })).data.check_runs[0]!.pull_requests.map((p) => p.number);
  expect(await prsOf(head)).toEqual([]);
  expect(await prsOf(own.headSha)).toEqual([9]);
});
