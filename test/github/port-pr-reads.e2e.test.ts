/**
 * The port's pull-request reads against the fake GitHub, through the real
 * adapter on Probot's octokit (installation auth, retries off): a commit's
 * pull requests, a review's comments, every page of check runs, an Actions
 * job's log tail, and the open pull requests into a base with their merge
 * state (GraphQL, validated against GitHub's schema). Absence is only
 * GitHub's 404 (and 410 for an expired log); a 502 is an error.
 */
import { ProbotOctokit } from "probot";
import { LOG_TAIL_MAX_BYTES, LOG_TAIL_MAX_CHARS } from "../../src/github/mappers.js";
import { octokitGitHub } from "../../src/github/octokit.js";
import { GitHubError, type GitHub } from "../../src/github/port.js";
import { startFakeGitHub, type FakeGitHub } from "../fake-github/index.js";
import { ResponseSchemas } from "../fake-github/response-schemas.js";

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));

const REPO = "acme/widgets";
const r = { owner: "acme", repo: "widgets" };
const INSTALLATION = 4242;

let fake: FakeGitHub;
let gh: GitHub;

beforeEach(async () => {
  fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION });
  const octokit = new TestOctokit({
    auth: { appId: fake.appId, privateKey: fake.privateKey, installationId: INSTALLATION },
    baseUrl: fake.apiUrl,
  });
  gh = octokitGitHub(octokit);
});

afterEach(async () => {
  fake.assertNoViolations();
  await fake.close();
});

async function failure(p: Promise<unknown>): Promise<GitHubError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(GitHubError);
  return e as GitHubError;
}

/** An Actions job (its id is its check run's) on `sha`. */
function actionsJob(sha: string, name = "test"): number {
  const wf = fake.state.addWorkflow(REPO, { path: `${name}.yml` });
  const run = fake.state.addWorkflowRun(REPO, {
    workflowId: wf.id,
    headSha: sha,
    conclusion: "failure",
    jobs: [{ name, conclusion: "failure" }],
  });
  return fake.state.jobsOf(fake.state.repo(REPO), run)[0]!.id;
}

test("pullsForCommit: the pull requests a commit belongs to, open or closed; on the default branch, the merged one", async () => {
  const first = fake.state.addBranch(REPO, "agent/issue-1", { aheadBy: 2 });
  const pr = fake.state.addPull(REPO, { head: "agent/issue-1", title: "One" });
  const older = fake.state.repo(REPO).commits.get(first)!.parents[0]!;
  expect((await gh.pullsForCommit(r, first)).map((p) => [p.number, p.headSha, p.state])).toEqual([
    [pr.number, first, "open"],
  ]);
  expect((await gh.pullsForCommit(r, older)).map((p) => p.number)).toEqual([pr.number]);
  expect(await gh.pullsForCommit(r, fake.state.repo(REPO).branches.get("main")!)).toEqual([]);

  fake.state.addPull(REPO, { head: "agent/closed", state: "closed" });
  const closedHead = fake.state.repo(REPO).branches.get("agent/closed")!;
  expect((await gh.pullsForCommit(r, closedHead)).map((p) => p.state)).toEqual(["closed"]);

  const mergeSha = fake.state.mergePull(REPO, pr.number);
  for (const sha of [mergeSha, first]) {
    const [merged, ...rest] = await gh.pullsForCommit(r, sha);
    expect(rest).toEqual([]);
    expect(merged).toMatchObject({ number: pr.number, merged: true, mergeCommitSha: mergeSha, headRepo: REPO });
  }
  expect((await failure(gh.pullsForCommit(r, "0".repeat(40)))).status).toBe(422);
});

test("reviewComments: every page of a review's inline comments; an outdated one keeps its original line", async () => {
  const pr = fake.state.addPull(REPO, { head: "agent/issue-2" });
  const comments = Array.from({ length: 104 }, (_, i) => ({ path: `src/f${i}.ts`, line: i + 1, body: `nit ${i}` }));
  const review = fake.state.addReview(REPO, pr.number, {
    user: "bob",
    state: "CHANGES_REQUESTED",
    body: "see inline",
    comments: [...comments, { path: "src/old.ts", line: null, originalLine: 7, body: "outdated" }],
  });
  const other = fake.state.addReview(REPO, pr.number, {
    user: "carol",
    state: "COMMENTED",
    comments: [{ path: "README.md", line: 1, body: "typo" }],
  });
  const read = await gh.reviewComments(r, pr.number, review.id);
  expect(read).toHaveLength(105);
  expect(read[0]).toEqual({ path: "src/f0.ts", line: 1, body: "nit 0", author: "bob" });
  expect(read[104]).toEqual({ path: "src/old.ts", line: 7, body: "outdated", author: "bob" });
  expect(fake.requestsFor("pulls/list-comments-for-review")).toHaveLength(2);
  expect(await gh.reviewComments(r, pr.number, other.id)).toEqual([
    { path: "README.md", line: 1, body: "typo", author: "carol" },
  ]);
  // a review of another pull request is not found through this one
  expect((await failure(gh.reviewComments(r, pr.number + 1000, review.id))).status).toBe(404);
});

test("checkRunsForRef: every page, not the first 100", async () => {
  const sha = fake.state.addBranch(REPO, "agent/issue-3", { aheadBy: 1 });
  for (let i = 0; i < 130; i++) {
    fake.state.addCheckRun(REPO, {
      headSha: sha,
      name: `check ${i}`,
      status: "completed",
      conclusion: i === 120 ? "failure" : "success",
    });
  }
  const runs = await gh.checkRunsForRef(r, sha);
  expect(runs).toHaveLength(130);
  expect(new Set(runs.map((c) => c.id)).size).toBe(130);
  expect(runs.filter((c) => c.conclusion === "failure").map((c) => c.name)).toEqual(["check 120"]);
  expect(fake.requestsFor("checks/list-for-ref").map((q) => q.query.page ?? "1")).toEqual(["1", "2"]);
});

test("jobLogTail: the last lines of a job's log through GitHub's redirect; none kept is null", async () => {
  const sha = fake.state.addBranch(REPO, "agent/issue-4", { aheadBy: 1 });
  const job = actionsJob(sha);
  const lines = Array.from({ length: 500 }, (_, i) => `2026-01-01T00:00:00.0000000Z line ${i + 1}`);
  fake.state.setJobLog(REPO, job, `${lines.join("\r\n")}\r\n\r\n\n`);
  expect(await gh.jobLogTail(r, job, 3)).toBe(lines.slice(-3).join("\n"));
  expect(await gh.jobLogTail(r, job, 1000)).toBe(lines.join("\n"));
  const logs = fake.requestsFor("actions/download-job-logs-for-workflow-run");
  expect(logs.map((q) => q.status)).toEqual([302, 302]);
  const downloads = () => fake.requests.filter((q) => q.path.startsWith("/_fake/downloads/job-logs/"));
  // only the last bytes are asked for; a short log comes whole (206 from its first byte)
  expect(downloads().map((q) => [q.status, q.headers["range"]])).toEqual([
    [206, `bytes=-${LOG_TAIL_MAX_BYTES}`],
    [206, `bytes=-${LOG_TAIL_MAX_BYTES}`],
  ]);

  // a long log is cut to its end
  fake.state.setJobLog(REPO, job, `${"x".repeat(30_000)}\nlast line`);
  const long = await gh.jobLogTail(r, job, 10);
  expect(long).toHaveLength(LOG_TAIL_MAX_CHARS);
  expect(long!.endsWith("x\nlast line")).toBe(true);

  // a 6 MB log: only its last LOG_TAIL_MAX_BYTES bytes cross the wire; the line (and character) they cut into is dropped
  const big = Array.from({ length: 60_000 }, (_, i) => `2026-01-01T00:00:00Z step ${i} ✓ ${"é".repeat(40)}`);
  fake.state.setJobLog(REPO, job, big.join("\n"));
  expect(await gh.jobLogTail(r, job, 3)).toBe(big.slice(-3).join("\n"));
  const served = downloads().at(-1)!;
  expect(served.status).toBe(206);
  expect((served.response as Buffer).length).toBe(LOG_TAIL_MAX_BYTES);
  const most = (await gh.jobLogTail(r, job, 100_000))!;
  expect(most).toHaveLength(LOG_TAIL_MAX_CHARS);
  expect(big.join("\n").endsWith(most)).toBe(true);

  // an empty log has no last bytes (416): no tail
  fake.state.setJobLog(REPO, job, "");
  expect(await gh.jobLogTail(r, job, 10)).toBeNull();
  expect(downloads().at(-1)!.status).toBe(416);

  // no log yet, no such job, a check run that is no Actions job: 404; an expired log: 410
  expect(await gh.jobLogTail(r, actionsJob(sha, "lint"), 10)).toBeNull();
  expect(await gh.jobLogTail(r, 987654321, 10)).toBeNull();
  const mine = fake.state.addCheckRun(REPO, { headSha: sha, name: "mine", app: "self" });
  expect(await gh.jobLogTail(r, mine.id, 10)).toBeNull();
  fake.state.setJobLog(REPO, job, null);
  expect(await gh.jobLogTail(r, job, 10)).toBeNull();
  expect(
    fake
      .requestsFor("actions/download-job-logs-for-workflow-run")
      .slice(-4)
      .map((q) => q.status),
  ).toEqual([404, 404, 404, 410]);
});

test("openPullsInto: every open pull request into the base, 100 a query, oldest first", async () => {
  const numbers: number[] = [];
  for (let i = 0; i < 105; i++) numbers.push(fake.state.addPull(REPO, { head: `agent/many-${i}` }).number);
  fake.state.addBranch(REPO, "release");
  fake.state.addPull(REPO, { head: "agent/elsewhere", base: "release" });
  fake.state.addPull(REPO, { head: "agent/closed", state: "closed" });
  const merged = fake.state.addPull(REPO, { head: "agent/merged" });
  fake.state.mergePull(REPO, merged.number);

  const open = await gh.openPullsInto(r, "main");
  expect(open.map((p) => p.number)).toEqual(numbers);
  expect(fake.requestsFor("graphql:OpenPullRequestsInto")).toHaveLength(2);
  const main = fake.state.repo(REPO).branches.get("main")!;
  // the merge moved main past every head: all are behind now
  expect(open[0]).toEqual({
    number: numbers[0],
    headRef: "agent/many-0",
    headSha: fake.state.pull(REPO, numbers[0]!).headSha,
    headRepo: REPO,
    baseRef: "main",
    baseSha: main,
    isDraft: false,
    mergeable: "MERGEABLE",
    mergeState: "BEHIND",
    reviewDecision: null,
    checks: null,
  });
  expect((await gh.openPullsInto(r, "release")).map((p) => p.headRef)).toEqual(["agent/elsewhere"]);
  expect(await gh.openPullsInto(r, "no-such-branch")).toEqual([]);
});

test("openPullsInto: mergeability, merge state, checks rollup and review decision come from the repository's state", async () => {
  fake.state.addBranch(REPO, "release");
  const into = (head: string, opts: { draft?: boolean; conflicting?: boolean } = {}) =>
    fake.state.addPull(REPO, { head, base: "release", ...opts });
  const clean = into("agent/clean");
  const dirty = into("agent/dirty", { conflicting: true });
  const draft = into("agent/draft", { draft: true });
  const red = into("agent/red");
  const pending = into("agent/pending");
  fake.state.addCheckRun(REPO, { headSha: clean.headSha, name: "ci", conclusion: "success" });
  fake.state.addCheckRun(REPO, { headSha: red.headSha, name: "ci", conclusion: "failure" });
  fake.state.addCheckRun(REPO, { headSha: pending.headSha, name: "ci", status: "in_progress" });
  const byHead = async () => new Map((await gh.openPullsInto(r, "release")).map((p) => [p.headRef, p]));

  let pulls = await byHead();
  expect(pulls.get("agent/clean")).toMatchObject({
    mergeable: "MERGEABLE",
    mergeState: "CLEAN",
    checks: "SUCCESS",
    reviewDecision: null,
  });
  expect(pulls.get("agent/dirty")).toMatchObject({ mergeable: "CONFLICTING", mergeState: "DIRTY", checks: null });
  expect(pulls.get("agent/draft")).toMatchObject({ isDraft: true, mergeState: "DRAFT" });
  expect(pulls.get("agent/red")).toMatchObject({ mergeState: "UNSTABLE", checks: "FAILURE" });
  expect(pulls.get("agent/pending")).toMatchObject({ mergeState: "UNSTABLE", checks: "PENDING" });

  fake.state.requireReviews(REPO, "release");
  fake.state.addReview(REPO, red.number, { user: "bob", state: "APPROVED" });
  fake.state.addReview(REPO, pending.number, { user: "bob", state: "APPROVED" });
  fake.state.addReview(REPO, pending.number, { user: "carol", state: "CHANGES_REQUESTED" });
  fake.state.addReview(REPO, draft.number, { user: "carol", state: "CHANGES_REQUESTED" });
  fake.state.addReview(REPO, draft.number, { user: "carol", state: "APPROVED" });
  pulls = await byHead();
  expect(pulls.get("agent/clean")).toMatchObject({ reviewDecision: "REVIEW_REQUIRED", mergeState: "BLOCKED" });
  expect(pulls.get("agent/red")?.reviewDecision).toBe("APPROVED");
  expect(pulls.get("agent/pending")?.reviewDecision).toBe("CHANGES_REQUESTED");
  expect(pulls.get("agent/draft")?.reviewDecision).toBe("APPROVED");

  fake.state.addCommits(REPO, "release", 1);
  fake.state.setPullConflicting(REPO, dirty.number, false);
  pulls = await byHead();
  expect(pulls.get("agent/dirty")).toMatchObject({ mergeable: "MERGEABLE", mergeState: "BEHIND" });
  expect(pulls.get("agent/clean")?.baseSha).toBe(fake.state.repo(REPO).branches.get("release"));
});

test("a 502 from GitHub is an error from every read, never absence or a short list", async () => {
  const pr = fake.state.addPull(REPO, { head: "agent/issue-9" });
  const review = fake.state.addReview(REPO, pr.number, {
    user: "bob",
    state: "COMMENTED",
    comments: [{ path: "a.ts", line: 1, body: "b" }],
  });
  const job = actionsJob(pr.headSha);
  fake.state.setJobLog(REPO, job, "boom\n");
  const reads: [string | RegExp, () => Promise<unknown>][] = [
    ["repos/list-pull-requests-associated-with-commit", () => gh.pullsForCommit(r, pr.headSha)],
    ["pulls/list-comments-for-review", () => gh.reviewComments(r, pr.number, review.id)],
    ["checks/list-for-ref", () => gh.checkRunsForRef(r, pr.headSha)],
    ["actions/download-job-logs-for-workflow-run", () => gh.jobLogTail(r, job, 5)],
    [/^\/_fake\/downloads\/job-logs\//, () => gh.jobLogTail(r, job, 5)],
    ["graphql:OpenPullRequestsInto", () => gh.openPullsInto(r, "main")],
  ];
  for (const [path, read] of reads) {
    fake.inject({ path, status: 502, times: 1 });
    expect(await failure(read())).toMatchObject({ status: 502, retryable: true });
    await expect(read()).resolves.toBeDefined();
  }
});

test("the fake's answers to these reads fit GitHub's description", async () => {
  const schemas = new ResponseSchemas();
  const pr = fake.state.addPull(REPO, { head: "agent/issue-10" });
  const review = fake.state.addReview(REPO, pr.number, {
    user: "bob",
    state: "COMMENTED",
    comments: [{ path: "a.ts", line: 3, body: "b" }],
  });
  fake.state.addCheckRun(REPO, { headSha: pr.headSha, name: "ci" });
  await gh.pullsForCommit(r, pr.headSha);
  await gh.reviewComments(r, pr.number, review.id);
  await gh.checkRunsForRef(r, pr.headSha);
  const answered = fake.requests.filter((q) => q.operationId && !q.operationId.startsWith("apps/") && q.status < 300);
  expect(answered.map((q) => q.operationId)).toEqual([
    "repos/list-pull-requests-associated-with-commit",
    "pulls/list-comments-for-review",
    "checks/list-for-ref",
  ]);
  const problems = answered.map((q) => schemas.check(q.operationId!, q.status, q.response)).filter((p) => p !== null);
  expect(problems).toEqual([]);
});
