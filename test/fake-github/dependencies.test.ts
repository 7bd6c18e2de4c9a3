/**
 * Issue dependencies ("blocked by") in the fake, read through the real port
 * (src/github/octokit.ts on Probot's octokit, installation auth), and the
 * fake's REST answers checked against GitHub's description.
 */
import { ProbotOctokit } from "probot";
import { newCounts, instrument } from "../../src/github/instrument.js";
import { octokitGitHub } from "../../src/github/octokit.js";
import { GitHubError, WRITE_METHODS, type BlockerInfo, type GitHub } from "../../src/github/port.js";
import { errorBody, HttpError } from "./http.js";
import { startFakeGitHub, type DependencySummary, type FakeGitHub } from "./index.js";
import { ResponseSchemas } from "./response-schemas.js";

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));
type Client = InstanceType<typeof ProbotOctokit>;

const REPO = "acme/widgets";
const OTHER = "acme/gadgets";
const r = { owner: "acme", repo: "widgets" };
const INSTALLATION = 4242;

let fake: FakeGitHub;
let octokit: Client;
let gh: GitHub;

beforeEach(async () => {
  fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION });
  fake.state.addRepo(OTHER, { installationId: INSTALLATION });
  octokit = new TestOctokit({
    auth: { appId: fake.appId, privateKey: fake.privateKey, installationId: INSTALLATION },
    baseUrl: fake.apiUrl,
  });
  gh = octokitGitHub(octokit);
});

afterEach(async () => {
  fake.assertNoViolations();
  await fake.close();
});

/** The issue's `issue_dependencies_summary` as the REST API serves it. */
async function summaryOf(repo: string, number: number): Promise<DependencySummary> {
  const [owner, name] = repo.split("/") as [string, string];
  const { data } = await octokit.rest.issues.get({ owner, repo: name, issue_number: number });
  return (data as { issue_dependencies_summary: DependencySummary }).issue_dependencies_summary;
}

const open = (repo: string, number: number): BlockerInfo => ({ repo, number, state: "open" });
const closed = (repo: string, number: number): BlockerInfo => ({ repo, number, state: "closed" });
const counts = (blocked_by: number, total_blocked_by: number, blocking = 0, total_blocking = 0): DependencySummary => ({
  blocked_by,
  blocking,
  total_blocked_by,
  total_blocking,
});

test("blocking, closing the blocker and unblocking, step by step", async () => {
  const issue = fake.state.addIssue(REPO, { number: 1, title: "Blocked" }).number;
  fake.state.addIssue(REPO, { number: 2, title: "Blocker" });
  fake.state.addIssue(OTHER, { number: 7, title: "Blocker elsewhere" });
  fake.state.addIssue(REPO, { number: 3, title: "Blocker by API" });
  const byApi = fake.state.issue(REPO, 3);

  const steps: [what: string, act: () => unknown, blockers: BlockerInfo[], summary: DependencySummary][] = [
    ["nothing blocks it", () => undefined, [], counts(0, 0)],
    ["#2 blocks it", () => fake.state.block(REPO, issue, REPO, 2), [open(REPO, 2)], counts(1, 1)],
    ["blocking twice is one edge", () => fake.state.block(REPO, issue, REPO, 2), [open(REPO, 2)], counts(1, 1)],
    [
      "an issue of another repository blocks it too",
      () => fake.state.block(REPO, issue, OTHER, 7),
      [open(REPO, 2), open(OTHER, 7)],
      counts(2, 2),
    ],
    [
      "#2 is closed: still listed, no longer counted as open",
      () => fake.state.closeIssue(REPO, 2),
      [closed(REPO, 2), open(OTHER, 7)],
      counts(1, 2),
    ],
    [
      "#2 is reopened",
      () => fake.state.setIssueState(fake.state.issue(REPO, 2), "open", null),
      [open(REPO, 2), open(OTHER, 7)],
      counts(2, 2),
    ],
    ["#2 no longer blocks it", () => fake.state.unblock(REPO, issue, REPO, 2), [open(OTHER, 7)], counts(1, 1)],
    [
      "#3 added through the API, by id",
      () => octokit.rest.issues.addBlockedByDependency({ ...r, issue_number: issue, issue_id: byApi.id }),
      [open(OTHER, 7), open(REPO, 3)],
      counts(2, 2),
    ],
    [
      "#3 removed through the API, by id",
      () => octokit.rest.issues.removeDependencyBlockedBy({ ...r, issue_number: issue, issue_id: byApi.id }),
      [open(OTHER, 7)],
      counts(1, 1),
    ],
    [
      "the other repository's issue no longer blocks it",
      () => fake.state.unblock(REPO, issue, OTHER, 7),
      [],
      counts(0, 0),
    ],
  ];
  for (const [what, act, blockers, summary] of steps) {
    await act();
    expect({ what, blockers: await gh.blockedBy(r, issue), summary: await summaryOf(REPO, issue) }).toEqual({
      what,
      blockers,
      summary,
    });
  }
  expect(fake.state.unblock(REPO, issue, OTHER, 7)).toBe(false);
});

test("the blocker's summary counts the open issues it blocks", async () => {
  fake.state.addIssue(REPO, { number: 1 });
  fake.state.addIssue(REPO, { number: 2 });
  fake.state.addIssue(OTHER, { number: 1 });
  fake.state.block(REPO, 1, OTHER, 1);
  fake.state.block(REPO, 2, OTHER, 1);
  expect(await summaryOf(OTHER, 1)).toEqual(counts(0, 0, 2, 2));
  fake.state.closeIssue(REPO, 2);
  expect(await summaryOf(OTHER, 1)).toEqual(counts(0, 0, 1, 2));
  expect(fake.state.blockersOf(REPO, 1).map((b) => `${b.repo.fullName}#${b.issue.number}`)).toEqual([`${OTHER}#1`]);
});

test("reads every page of more than 100 blockers", async () => {
  const issue = fake.state.addIssue(REPO, { title: "Blocked by many" }).number;
  const blockers: BlockerInfo[] = [];
  for (let i = 0; i < 150; i++) {
    const b = fake.state.addIssue(i % 2 ? REPO : OTHER, { state: i % 3 ? "open" : "closed" });
    fake.state.block(REPO, issue, i % 2 ? REPO : OTHER, b.number);
    blockers.push({ repo: i % 2 ? REPO : OTHER, number: b.number, state: b.state });
  }
  expect(await gh.blockedBy(r, issue)).toEqual(blockers);
  const pages = fake.requestsFor("issues/list-dependencies-blocked-by");
  expect(pages.map((p) => [p.query.per_page, p.query.page ?? "1", (p.response as unknown[]).length])).toEqual([
    ["100", "1", 100],
    ["100", "2", 50],
  ]);
  expect(await summaryOf(REPO, issue)).toEqual(counts(100, 150));
});

test("a missing issue and a failed page throw; nothing reads as no blockers", async () => {
  const missing = gh.blockedBy(r, 999);
  await expect(missing).rejects.toBeInstanceOf(GitHubError);
  await expect(missing).rejects.toMatchObject({ status: 404, retryable: false });

  const issue = fake.state.addIssue(REPO).number;
  for (let i = 0; i < 101; i++) fake.state.block(REPO, issue, REPO, fake.state.addIssue(REPO).number);
  let seen = 0;
  fake.beforeHandle((operationId) => {
    if (operationId === "issues/list-dependencies-blocked-by" && ++seen === 2) {
      throw new HttpError(502, errorBody(502, "Server Error", "https://docs.github.com/rest"));
    }
  });
  await expect(gh.blockedBy(r, issue)).rejects.toMatchObject({ status: 502, retryable: true });
});

test("counts as a read in the cost ledger", async () => {
  expect(WRITE_METHODS.has("blockedBy")).toBe(false);
  const issue = fake.state.addIssue(REPO).number;
  const ledger = newCounts();
  await instrument(gh, ledger).blockedBy(r, issue);
  expect(ledger).toEqual({ reads: 1, writes: 0, writeFailed: false });
});

test.each([
  ["a blocker the installation cannot see", "hidden", 404],
  ["an unknown issue id", "unknown", 404],
  ["the issue itself", "self", 422],
  ["a pull request", "pull", 422],
  ["an edge that exists already", "duplicate", 422],
] as const)("POST refuses %s", async (_what, kind, status) => {
  fake.state.addInstallation(7, "other");
  fake.state.addRepo("other/secret", { installationId: 7 });
  const issue = fake.state.addIssue(REPO);
  const existing = fake.state.addIssue(REPO);
  fake.state.block(REPO, issue.number, REPO, existing.number);
  const ids = {
    hidden: fake.state.addIssue("other/secret").id,
    unknown: 123_456_789,
    self: issue.id,
    pull: fake.state.issue(REPO, fake.state.addPull(REPO, { head: "feature" }).number).id,
    duplicate: existing.id,
  };
  await expect(
    octokit.rest.issues.addBlockedByDependency({ ...r, issue_number: issue.number, issue_id: ids[kind] }),
  ).rejects.toMatchObject({ status });
  expect(fake.state.blockersOf(REPO, issue.number).map((b) => b.issue.id)).toEqual([existing.id]);
});

test("answers as GitHub's description says: 201 with a Location, 200 on delete, 404 for an edge that is not there", async () => {
  const schemas = new ResponseSchemas();
  const issue = fake.state.addIssue(REPO, { labels: ["bug"] });
  const blocker = fake.state.addIssue(OTHER, { title: "Elsewhere" });
  const added = await octokit.rest.issues.addBlockedByDependency({
    ...r,
    issue_number: issue.number,
    issue_id: blocker.id,
  });
  expect(added.status).toBe(201);
  expect(added.data).toMatchObject({
    id: blocker.id,
    number: blocker.number,
    repository_url: `${fake.apiUrl}/repos/${OTHER}`,
  });
  expect(added.headers.location).toBe(`${fake.apiUrl}/repos/${REPO}/issues/${issue.number}/dependencies/blocked_by`);
  const listed = await octokit.rest.issues.listDependenciesBlockedBy({ ...r, issue_number: issue.number });
  expect(listed.data.map((i) => i.id)).toEqual([blocker.id]);
  await octokit.rest.issues.get({ ...r, issue_number: issue.number });
  const removed = await octokit.rest.issues.removeDependencyBlockedBy({
    ...r,
    issue_number: issue.number,
    issue_id: blocker.id,
  });
  expect(removed.status).toBe(200);
  expect(removed.data).toMatchObject({ id: blocker.id });
  await expect(
    octokit.rest.issues.removeDependencyBlockedBy({ ...r, issue_number: issue.number, issue_id: blocker.id }),
  ).rejects.toMatchObject({ status: 404 });

  const problems: string[] = [];
  const answered = fake.requests.filter((q) => q.operationId && !q.operationId.startsWith("apps/") && q.status < 300);
  expect(answered.map((q) => `${q.operationId} ${q.status}`)).toEqual([
    "issues/add-blocked-by-dependency 201",
    "issues/list-dependencies-blocked-by 200",
    "issues/get 200",
    "issues/remove-dependency-blocked-by 200",
  ]);
  for (const q of answered) {
    const problem = schemas.check(q.operationId!, q.status, q.response);
    if (problem) problems.push(`${q.operationId} ${q.status}: ${problem}`);
  }
  expect(problems).toEqual([]);
});
