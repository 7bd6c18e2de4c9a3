/**
 * The in-memory GitHub port: what it writes a later read sees, GitHub's
 * refusals are GitHubErrors as the adapter throws them, what it does not
 * model is a plain Error naming the method, every call is recorded, and an
 * injected error is thrown exactly as often as asked.
 */
import { failureOf } from "../../src/github/errors.js";
import { GitHubError, type RepoRef } from "../../src/github/port.js";
import { gitHubError, memoryGitHub, OPERATIONS, type GitHubErrorKind, type MemoryGitHub } from "./memory-github.js";

/** The names of labels as the port answers them. */
const named = (labels: ReadonlyArray<{ name: string }> | null) => labels?.map((l) => l.name) ?? null;

const R: RepoRef = { owner: "o", repo: "r" };
const AT = new Date("2030-01-02T12:00:00Z");

/** A fake with o/r (issue #1 by octocat), an agent workflow and the clock at AT. */
function fake(): MemoryGitHub {
  let t = AT.getTime();
  return memoryGitHub({
    now: () => new Date((t += 1000)),
    repos: {
      "o/r": {
        issues: [{ title: "one", body: "first", labels: ["bug"] }],
        workflows: { "agent.yml": { runName: "agent ${{ inputs.run }}" } },
        permissions: { alice: "write" },
      },
    },
  });
}

describe("state: what the port writes, a later read sees", () => {
  test.each<[string, (gh: MemoryGitHub) => Promise<void>]>([
    [
      "labels: added once whatever their case, answered after, removed idempotently",
      async (gh) => {
        expect(named(await gh.addLabels(R, 1, ["agent:queued", "BUG"]))).toEqual(["bug", "agent:queued"]);
        expect(named(await gh.issueLabels(R, 1))).toEqual(["bug", "agent:queued"]);
        await gh.removeLabel(R, 1, "Agent:Queued");
        await gh.removeLabel(R, 1, "agent:queued");
        await gh.removeLabel(R, 99, "agent:queued");
        expect(named(await gh.issueLabels(R, 1))).toEqual(["bug"]);
        expect((await gh.getIssue(R, 1))?.labels).toEqual(["bug"]);
        expect(await gh.issueLabels(R, 99)).toBeNull();
      },
    ],
    [
      "issues: created as the App, body replaced, listed by creator newest first without pull requests",
      async (gh) => {
        const made = await gh.createIssue(R, { title: "fleet", body: "b" });
        expect(made).toEqual({
          number: 2,
          title: "fleet",
          body: "b",
          state: "open",
          labels: [],
          author: "orchestra[bot]",
          isPullRequest: false,
        });
        expect(await gh.updateIssueBody(R, 2, "b2")).toMatchObject({ number: 2, body: "b2" });
        expect(await gh.getIssue(R, 2)).toMatchObject({ body: "b2" });
        await gh.createIssue(R, { title: "later", body: "" });
        gh.commit("o/r", "topic");
        await gh.createPull(R, { title: "pr", body: "", head: "topic", base: "main" });
        expect((await gh.issuesCreatedBy(R, "orchestra[bot]")).map((i) => i.number)).toEqual([3, 2]);
        expect(await gh.issuesCreatedBy(R, "orchestra[bot]", { state: "closed" })).toEqual([]);
        expect(await gh.getIssue(R, 4)).toMatchObject({ isPullRequest: true });
        expect(await gh.updateIssueBody(R, 42, "x")).toBeNull();
      },
    ],
    [
      "a deleted issue: absent to reads, 410 to writes",
      async (gh) => {
        gh.deleteIssue("o/r", 1);
        expect(await gh.getIssue(R, 1)).toBeNull();
        expect(await gh.issueLabels(R, 1)).toBeNull();
        const err = await gh.createComment(R, 1, "x").catch((e: unknown) => e);
        expect(err).toBeInstanceOf(GitHubError);
        expect(err).toMatchObject({ status: 410, operation: "create comment" });
      },
    ],
    [
      "comments: created as the App, listed oldest first, since and perPage honoured, reactions kept once",
      async (gh) => {
        const old = gh.addComment("o/r", 1, "earlier", { at: new Date("2020-01-01T00:00:00Z") });
        const c = await gh.createComment(R, 1, "hello");
        expect(c).toEqual({
          id: c.id,
          body: "hello",
          author: "orchestra[bot]",
          url: `https://github.com/o/r/issues/1#issuecomment-${c.id}`,
        });
        expect(await gh.listComments(R, 1)).toEqual([old, c]);
        expect(await gh.listComments(R, 1, { since: new Date("2029-01-01T00:00:00Z") })).toEqual([c]);
        expect(await gh.listComments(R, 1, { perPage: 1 })).toEqual([old]);
        await gh.addReaction(R, c.id, "eyes");
        await gh.addReaction(R, c.id, "eyes");
        expect(gh.comments("o/r", 1)[1]!.reactions).toEqual([{ content: "eyes", user: "orchestra[bot]" }]);
      },
    ],
    [
      "dependencies and sub-issues as seeded",
      async (gh) => {
        gh.setBlockedBy("o/r", 1, [{ repo: "o/other", number: 3, state: "open" }]);
        expect(await gh.blockedBy(R, 1)).toEqual([{ repo: "o/other", number: 3, state: "open" }]);
        gh.addIssue("o/r", {
          number: 10,
          labels: ["agent:queued"],
          subIssues: [{ repo: "o/r", number: 1, state: "open" }],
        });
        expect(await gh.issuesLabelled(R, ["agent:queued"])).toEqual([
          expect.objectContaining({
            number: 10,
            labels: ["agent:queued"],
            subIssues: [{ repo: "o/r", number: 1, state: "open" }],
            subIssuesTotal: 1,
          }),
        ]);
      },
    ],
    [
      "issuesLabelled: the last adder of each label asked for, a person or the App",
      async (gh) => {
        gh.label("o/r", 1, ["agent:queued"], { actor: "alice" });
        await gh.addLabels(R, 1, ["agent:review"]);
        const [one] = await gh.issuesLabelled(R, ["agent:queued", "agent:review"]);
        expect(one!.labelledBy).toEqual([
          { label: "agent:queued", actor: "alice", actorType: "User", at: expect.any(String) },
          { label: "agent:review", actor: "orchestra[bot]", actorType: "Bot", at: expect.any(String) },
        ]);
      },
    ],
    [
      "pull requests: created from a branch ahead of its base, found by branch, commit and closing reference",
      async (gh) => {
        const sha = gh.commit("o/r", "agent/1");
        const pr = await gh.createPull(R, { title: "t", body: "Closes #1", head: "agent/1", base: "main" });
        expect(pr).toMatchObject({ number: 2, state: "open", headRef: "agent/1", headSha: sha, headRepo: "o/r" });
        expect(pr.url).toBe("https://github.com/o/r/pull/2");
        expect(await gh.getPull(R, 2)).toEqual(pr);
        expect(await gh.pullsForBranch(R, "agent/1", "open")).toEqual([pr]);
        expect(await gh.pullsForBranch(R, "agent/1", "closed")).toEqual([]);
        expect(await gh.pullsForCommit(R, sha)).toEqual([pr]);
        const merged = gh.mergePull("o/r", 2);
        expect(merged).toMatchObject({ state: "closed", merged: true, mergeCommitSha: gh.branch("o/r", "main") });
        expect((await gh.getIssue(R, 1))?.state).toBe("closed");
      },
    ],
    [
      "branches and compare: a commit on the base puts the head behind, Update branch catches it up",
      async (gh) => {
        gh.commit("o/r", "agent/2");
        const pr = await gh.createPull(R, { title: "t", body: "", head: "agent/2", base: "main" });
        expect(await gh.compare(R, "main", "agent/2")).toMatchObject({ status: "ahead", aheadBy: 1, behindBy: 0 });
        gh.commit("o/r", "main");
        expect(await gh.compare(R, "main", "agent/2")).toMatchObject({ status: "diverged", aheadBy: 1, behindBy: 1 });
        expect((await gh.openPullsInto(R, "main"))[0]).toMatchObject({ number: pr.number, mergeState: "BEHIND" });
        await gh.updatePullBranch(R, pr.number, pr.headSha);
        const head = await gh.getBranch(R, "agent/2");
        expect((await gh.getPull(R, pr.number))?.headSha).toBe(head?.sha);
        expect(await gh.compare(R, "main", "agent/2")).toMatchObject({ status: "ahead", aheadBy: 2, behindBy: 0 });
        expect((await gh.openPullsInto(R, "main"))[0]).toMatchObject({ mergeState: "CLEAN", checks: null });
        expect(await gh.compare(R, "main", "nope")).toBeNull();
        expect((await gh.branchesWithPrefix(R, "agent/")).map((b) => [b.name, b.pullRequests])).toEqual([
          ["agent/2", 1],
        ]);
      },
    ],
    [
      "deleting a branch: gone to reads, false the second time, its open pull request closed",
      async (gh) => {
        gh.commit("o/r", "agent/3");
        const pr = await gh.createPull(R, { title: "t", body: "", head: "agent/3", base: "main" });
        expect(await gh.deleteBranch(R, "agent/3")).toBe(true);
        expect(await gh.deleteBranch(R, "agent/3")).toBe(false);
        expect(await gh.getBranch(R, "agent/3")).toBeNull();
        expect((await gh.getPull(R, pr.number))?.state).toBe("closed");
      },
    ],
    [
      "check runs: created in the App's suite, updated, rolled up on the pull request",
      async (gh) => {
        const sha = gh.commit("o/r", "agent/4");
        await gh.createPull(R, { title: "t", body: "", head: "agent/4", base: "main" });
        await gh.createCheckRun(R, {
          name: "Orchestra",
          headSha: sha,
          status: "in_progress",
          title: "t",
          summary: "s",
        });
        const [run] = await gh.checkRunsForRef(R, "agent/4");
        expect(run).toMatchObject({ name: "Orchestra", headSha: sha, status: "in_progress", conclusion: null });
        expect(run!.checkSuiteId).toEqual(expect.any(Number));
        expect((await gh.openPullsInto(R, "main"))[0]).toMatchObject({ checks: "PENDING", mergeState: "UNSTABLE" });
        await gh.updateCheckRun(R, run!.id, { status: "completed", conclusion: "success", title: "t2", summary: "s2" });
        expect(await gh.checkRunsForRef(R, sha)).toEqual([
          { ...run, status: "completed", conclusion: "success", output: { title: "t2", summary: "s2" } },
        ]);
        expect((await gh.openPullsInto(R, "main"))[0]).toMatchObject({ checks: "SUCCESS", mergeState: "CLEAN" });
        await gh.rerequestCheckSuite(R, run!.checkSuiteId!);
        expect(gh.rerequestedSuites("o/r")).toEqual([run!.checkSuiteId]);
      },
    ],
    [
      "workflow runs: a failed job's log tail, its rerun queues the failed jobs only",
      async (gh) => {
        const { run, jobs } = gh.addWorkflowRun("o/r", {
          workflow: "ci.yml",
          jobs: [
            { name: "unit", conclusion: "failure", log: "a\nb\nc\n\n" },
            { name: "lint", conclusion: "success" },
          ],
        });
        expect(run).toMatchObject({ status: "completed", conclusion: "failure" });
        expect(jobs.map((j) => j.workflowRunId)).toEqual([run.id, run.id]);
        expect(await gh.jobLogTail(R, jobs[0]!.id, 2)).toBe("b\nc");
        expect(await gh.jobLogTail(R, jobs[1]!.id, 2)).toBeNull();
        await gh.rerunFailedJobs(R, run.id);
        const after = await gh.checkRunsForRef(R, "main");
        expect(after.map((c) => [c.name, c.status, c.conclusion])).toEqual([
          ["unit", "queued", null],
          ["lint", "completed", "success"],
        ]);
        expect(gh.workflowRuns("o/r")[0]).toMatchObject({ status: "queued", reruns: 1 });
      },
    ],
    [
      "dispatch: a run titled by run-name, found again by dispatchedRuns since the dispatch",
      async (gh) => {
        const before = new Date(AT.getTime());
        const { workflowRunId } = await gh.dispatchWorkflow(R, "agent.yml", "main", { run: "run-7" });
        expect(workflowRunId).toEqual(expect.any(Number));
        const runs = await gh.dispatchedRuns(R, "agent.yml", before);
        expect(runs).toEqual([
          { id: workflowRunId, displayTitle: "agent run-7", status: "queued", createdAt: expect.any(String) },
        ]);
        expect(await gh.dispatchedRuns(R, "agent.yml", new Date("2100-01-01T00:00:00Z"))).toEqual([]);
        expect(gh.workflowRuns("o/r")[0]).toMatchObject({ inputs: { run: "run-7" }, event: "workflow_dispatch" });
      },
    ],
    [
      "repository facts: default branch, permissions, config with the owner's .github as fallback, installation",
      async (gh) => {
        gh.addRepo("o/.github", { configs: { "orchestra.yml": { from: "org" } }, installed: false });
        expect(await gh.defaultBranch(R)).toBe("main");
        expect(await gh.mergedBranch(R, "main")).toEqual({
          sha: expect.any(String),
          deletesMergedBranches: false,
          openPull: null,
        });
        expect(await gh.mergedBranch(R, "no-such-branch")).toBeNull();
        expect(await gh.permission(R, "alice")).toBe("write");
        expect(await gh.permission(R, "mallory")).toBe("none");
        expect(await gh.readConfig(R, "orchestra.yml")).toEqual({ from: "org" });
        gh.setConfig("o/r", "orchestra.yml", { from: "repo" });
        expect(await gh.readConfig(R, "orchestra.yml")).toEqual({ from: "repo" });
        expect(await gh.readConfig(R, "other.yml")).toBeNull();
        expect(await gh.installationRepos()).toEqual(["o/r"]);
      },
    ],
  ])("%s", async (_name, scenario) => {
    await scenario(fake());
  });

  test("answers are copies: changing one does not change GitHub", async () => {
    const gh = fake();
    (await gh.issueLabels(R, 1))!.push({ name: "sneaked", nodeId: "LA_sneaked" });
    (await gh.getIssue(R, 1))!.labels.push("sneaked");
    expect(named(await gh.issueLabels(R, 1))).toEqual(["bug"]);
  });
});

describe("GitHub's refusals are GitHubErrors, as the adapter throws them", () => {
  const pull = (head: string) => ({ title: "t", body: "", head, base: "main" });
  const checkRun = (headSha: string) => ({
    name: "c",
    headSha,
    status: "completed" as const,
    conclusion: "success" as const,
    title: "t",
    summary: "s",
  });
  test.each<[string, (gh: MemoryGitHub) => Promise<unknown>, number, string]>([
    ["a label on a missing issue", (gh) => gh.addLabels(R, 9, ["x"]), 404, "add labels"],
    ["a comment on a missing issue", (gh) => gh.createComment(R, 9, "x"), 404, "create comment"],
    ["the comments of a missing issue", (gh) => gh.listComments(R, 9), 404, "list comments"],
    ["a reaction to a missing comment", (gh) => gh.addReaction(R, 9, "+1"), 404, "add reaction"],
    ["the blockers of a missing issue", (gh) => gh.blockedBy(R, 9), 404, "list blocked-by dependencies"],
    ["a pull request from a missing branch", (gh) => gh.createPull(R, pull("nope")), 422, "create pull request"],
    ["a pull request with nothing to merge", (gh) => gh.createPull(R, pull("main")), 422, "create pull request"],
    [
      "a second open pull request from a branch",
      async (gh) => {
        gh.commit("o/r", "b");
        await gh.createPull(R, pull("b"));
        return gh.createPull(R, pull("b"));
      },
      422,
      "create pull request",
    ],
    [
      "updating a branch whose head moved",
      async (gh) => {
        gh.commit("o/r", "b");
        const pr = await gh.createPull(R, pull("b"));
        gh.commit("o/r", "main");
        return gh.updatePullBranch(R, pr.number, "0".repeat(40));
      },
      422,
      "update pull request branch",
    ],
    [
      "a check run on an unknown commit",
      (gh) => gh.createCheckRun(R, checkRun("f".repeat(40))),
      422,
      "create check run",
    ],
    ["updating a missing check run", (gh) => gh.updateCheckRun(R, 1, checkRun("")), 404, "update check run"],
    [
      "updating another App's check run",
      (gh) =>
        gh.updateCheckRun(
          R,
          gh.addWorkflowRun("o/r", { workflow: "ci.yml", jobs: [{ name: "j" }] }).jobs[0]!.id,
          checkRun(""),
        ),
      403,
      "update check run",
    ],
    ["rerequesting a missing suite", (gh) => gh.rerequestCheckSuite(R, 1), 404, "rerequest check suite"],
    ["rerunning a missing workflow run", (gh) => gh.rerunFailedJobs(R, 1), 404, "rerun failed jobs"],
    [
      "dispatching an unknown workflow",
      (gh) => gh.dispatchWorkflow(R, "nope.yml", "main", {}),
      404,
      "dispatch workflow",
    ],
    ["dispatching on a missing ref", (gh) => gh.dispatchWorkflow(R, "agent.yml", "nope", {}), 422, "dispatch workflow"],
    ["review comments of a missing review", (gh) => gh.reviewComments(R, 1, 5), 404, "list review comments"],
  ])("%s", async (_name, act, status, operation) => {
    const err = await act(fake()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubError);
    expect(err).toMatchObject({ status, operation, retryable: false });
  });
});

describe("what the fake does not model is a plain Error naming the method", () => {
  test.each<[string, (gh: MemoryGitHub) => Promise<unknown>, RegExp]>([
    [
      "an unknown repository",
      (gh) => gh.getIssue({ owner: "o", repo: "x" }, 1),
      /^memoryGitHub\.getIssue: no repository o\/x/,
    ],
    [
      "a pull request from a fork's branch",
      (gh) => gh.createPull(R, { title: "t", body: "", head: "f:b", base: "main" }),
      /^memoryGitHub\.createPull: /,
    ],
    ["deleting the default branch", (gh) => gh.deleteBranch(R, "main"), /^memoryGitHub\.deleteBranch: /],
  ])("%s", async (_name, act, message) => {
    const err = await act(fake()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(GitHubError);
    expect((err as Error).message).toMatch(message);
  });
});

describe("calls are recorded", () => {
  test("every call in order, with a copy of its arguments, and what it threw", async () => {
    const gh = fake();
    const labels = ["a"];
    await gh.addLabels(R, 1, labels);
    labels.push("b");
    await gh.createComment(R, 9, "x").catch(() => {});
    await gh.installationRepos();
    expect(gh.calls).toEqual([
      { method: "addLabels", args: [R, 1, ["a"]] },
      { method: "createComment", args: [R, 9, "x"], error: expect.any(GitHubError) },
      { method: "installationRepos", args: [] },
    ]);
    expect(gh.callsTo("addLabels")).toHaveLength(1);
    expect(gh.callsTo("removeLabel")).toEqual([]);
  });

  test("seeding and reading the fake's state are not port calls", () => {
    const gh = fake();
    gh.addIssue("o/r", { title: "x" });
    gh.commit("o/r", "b");
    gh.issue("o/r", 1);
    expect(gh.calls).toEqual([]);
  });
});

describe("injected errors", () => {
  const kinds: Array<[GitHubErrorKind, Partial<GitHubError>, ReturnType<typeof failureOf>["class"]]> = [
    ["rate-limited", { status: 403, retryable: true, retryAfterMs: 30_000, mayHaveSent: false }, "rate-limit"],
    ["quota-exhausted", { status: 403, retryable: true }, "rate-limit"],
    ["server-error", { status: 502, retryable: true, mayHaveSent: true }, "github-5xx"],
    ["network", { status: undefined, retryable: true, mayHaveSent: true }, "network"],
    ["not-found", { status: 404, retryable: false }, "deterministic"],
    ["gone", { status: 410, retryable: false }, "deterministic"],
    ["forbidden", { status: 403, retryable: false, retryAfterMs: undefined }, "deterministic"],
    ["validation", { status: 422, retryable: false }, "deterministic"],
    ["token", { status: 403, tokenFailure: true, operation: "mint installation token" }, "deterministic"],
  ];
  test.each(kinds)("%s: a real GitHubError the retry classifier reads as the adapter's", (kind, fields, failure) => {
    const e = gitHubError(kind, "listComments", { retryAfterMs: 30_000 });
    expect(e).toBeInstanceOf(GitHubError);
    expect(e).toMatchObject({ operation: OPERATIONS.listComments, ...fields });
    expect(failureOf(e).class).toBe(failure);
  });

  test.each([1, 2, 5])("fail(times: %i) throws exactly that often, then the method works again", async (times) => {
    const gh = fake();
    const err = gitHubError("server-error", "listComments");
    gh.fail("listComments", err, { times });
    expect(gh.failuresLeft("listComments")).toBe(times);
    for (let i = 0; i < times; i++) await expect(gh.listComments(R, 1)).rejects.toBe(err);
    expect(await gh.listComments(R, 1)).toEqual([]);
    expect(gh.failuresLeft("listComments")).toBe(0);
    expect(gh.callsTo("listComments").map((c) => c.error)).toEqual([...Array<GitHubError>(times).fill(err), undefined]);
    // other methods were never affected
    expect(named(await gh.issueLabels(R, 1))).toEqual(["bug"]);
  });

  test("failNext: one call throws and changes nothing; the next is performed", async () => {
    const gh = fake();
    gh.failNext("addLabels", gitHubError("rate-limited", "addLabels"));
    const err = await gh.addLabels(R, 1, ["x"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubError);
    expect(failureOf(err)).toEqual({ class: "rate-limit", retryAfterMs: 60_000 });
    expect(named(await gh.issueLabels(R, 1))).toEqual(["bug"]);
    expect(named(await gh.addLabels(R, 1, ["x"]))).toEqual(["bug", "x"]);
  });

  test("applied: the write takes effect and its answer is lost", async () => {
    const gh = fake();
    gh.failNext("createComment", gitHubError("server-error", "createComment"), { applied: true });
    await expect(gh.createComment(R, 1, "once")).rejects.toMatchObject({ status: 502, mayHaveSent: true });
    expect((await gh.listComments(R, 1)).map((c) => c.body)).toEqual(["once"]);
  });

  test("queued failures are thrown in order; a factory makes a new error each time; Infinity until cleared", async () => {
    const gh = fake();
    gh.failNext("getPull", gitHubError("network", "getPull"));
    gh.fail("getPull", () => gitHubError("server-error", "getPull"), { times: 2 });
    const seen: unknown[] = [];
    for (let i = 0; i < 3; i++) seen.push(await gh.getPull(R, 1).catch((e: unknown) => e));
    expect(seen.map((e) => (e as GitHubError).status)).toEqual([undefined, 502, 502]);
    expect(seen[1]).not.toBe(seen[2]);
    expect(await gh.getPull(R, 1)).toBeNull();

    gh.fail("getPull", gitHubError("server-error", "getPull"), { times: Infinity });
    for (let i = 0; i < 10; i++) await expect(gh.getPull(R, 1)).rejects.toBeInstanceOf(GitHubError);
    gh.clearFailures();
    expect(await gh.getPull(R, 1)).toBeNull();
  });

  test.each<[string, () => void, RegExp]>([
    [
      "a 404 where the port answers null",
      () => fake().fail("getIssue", gitHubError("not-found", "getIssue")),
      /getIssue answers GitHub's 404 itself/,
    ],
    [
      "a 404 where the port answers success",
      () => fake().failNext("removeLabel", gitHubError("not-found", "removeLabel")),
      /removeLabel answers GitHub's 404 itself/,
    ],
    ["times 0", () => fake().fail("getIssue", new Error("x"), { times: 0 }), /times must be a positive integer/],
    ["times 1.5", () => fake().fail("getIssue", new Error("x"), { times: 1.5 }), /times must be a positive integer/],
  ])("refused: %s", (_name, arrange, message) => {
    expect(arrange).toThrow(message);
  });
});
