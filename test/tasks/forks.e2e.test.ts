/**
 * Pull requests from forks end to end: a fork's branch named like the task's
 * branch, with a pull request into the task's repository that says
 * "Closes #n", never proves an agent's exit and never moves a task to review;
 * only a pull request from the run's own branch in the task's repository
 * does. Signed webhooks into the real App, workers over the real HTTP API,
 * the fake GitHub (which models forks as GitHub has them) behind it.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

const FORK = "mallory/app";

/**
 * mallory forks the repository, pushes two commits to a branch named like
 * the task's and opens pull request `number` from it into REPO, saying it
 * closes the task's issue.
 */
function forkPull(rig: Rig, issue: number, number: number): { branch: string; head: string } {
  const branch = `agent/issue-${issue}`;
  rig.fake.state.setPermission(REPO, "mallory", "read");
  rig.fake.state.addFork(REPO, "mallory");
  const head = rig.fake.state.addBranch(FORK, branch, { aheadBy: 2, author: "mallory" });
  rig.fake.state.addPull(REPO, {
    head: branch,
    headRepo: FORK,
    number,
    title: `Fix #${issue}`,
    body: `Closes #${issue}`,
    user: "mallory",
  });
  return { branch, head };
}

/** GitHub write requests the App sent about pull request `number` since `from`. */
function writesTo(rig: Rig, from: number, number: number) {
  return rig.writesSince(from).filter((w) => new RegExp(`/(issues|pulls)/${number}(/|$)`).test(w.path));
}

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("a fork's pull request from a same-named branch saying Closes #7 does not prove the agent's exit", async () => {
    rig = await startRig({ provider });
    await rig.queue(7);
    const w = await rig.worker();
    const claim = await w.claim();
    expect(claim.body.run).toMatchObject({ attempt: 1, branch: "agent/issue-7" });
    const { id: runId, leaseEpoch } = claim.body.run;
    const { branch, head } = forkPull(rig, 7, 20);
    // the fake answers as GitHub would: the pull request is the fork's, and it closes #7
    const pr = rig.fake.json.pull(rig.fake.state.repo(REPO), rig.fake.state.pull(REPO, 20), true) as any;
    expect(pr.head).toMatchObject({ label: "mallory:agent/issue-7", repo: { full_name: FORK, fork: true } });
    expect(rig.fake.state.closingIssues(rig.fake.state.repo(REPO), rig.fake.state.pull(REPO, 20))).toEqual([7]);

    const before = rig.fake.requests.length;
    const exit = await w.exit(runId, { leaseEpoch, exitCode: 0, branch });
    expect(exit.status).toBe(200);
    // the task's own branch has nothing: no pull request, no branch on GitHub
    expect(exit.body).toMatchObject({
      outcome: "classified",
      class: "phantom",
      recovery: "delete-branch-requeue",
      evidence: { pr: null, branch: null },
    });
    expect(exit.body.prNumber).toBeUndefined();
    // the exit asked for the run's branch in the task's repository only
    const lists = rig.fake.requestsFor("pulls/list").slice(-1);
    expect(lists.map((q) => q.query.head)).toEqual([`acme:${branch}`]);
    expect(lists[0]!.response).toEqual([]);

    const t = await rig.task(7);
    expect(t.task).toMatchObject({ state: "queued", prNumber: null, attempt: 1 });
    expect(t.runs[0]).toMatchObject({ id: runId, prNumber: null });
    expect(t.runs[0].state).not.toBe("review");
    expect(rig.labels(7)).toEqual(["agent:queued"]);
    // the fork's pull request and branch are left alone
    expect(rig.fake.state.issue(REPO, 20).state).toBe("open");
    expect(rig.fake.state.labelsOf(REPO, 20)).toEqual([]);
    expect(rig.fake.state.repo(FORK).branches.get(branch)).toBe(head);
    expect(writesTo(rig, before, 20)).toEqual([]);
  });

  test("pull_request.opened (and synchronize) for a fork's pull request changes nothing", async () => {
    rig = await startRig({ provider });
    await rig.queue(7);
    const w = await rig.worker();
    const { id: runId, leaseEpoch } = (await w.claim()).body.run;
    const { branch } = forkPull(rig, 7, 20);
    const taskBefore = (await rig.task(7)).task;
    expect(taskBefore).toMatchObject({ state: "claimed", prNumber: null });

    const before = rig.fake.requests.length;
    await rig.deliver("pull_request", "opened", { pull: 20, sender: "mallory" });
    rig.fake.state.addCommits(FORK, branch, 1, { author: "mallory" });
    await rig.deliver("pull_request", "synchronize", { pull: 20, sender: "mallory" });
    expect(rig.writesSince(before)).toEqual([]);
    expect((await rig.task(7)).task).toEqual(taskBefore);
    expect(rig.labels(7)).toEqual(["agent:in-progress"]);
    expect(rig.fake.state.labelsOf(REPO, 20)).toEqual([]);
    // the lease is the worker's still
    expect((await w.heartbeat(runId, leaseEpoch)).status).toBe(200);

    // nor after the run: the task queued again stays queued
    const exit = await w.exit(runId, { leaseEpoch, exitCode: 0, branch });
    expect(exit.body).toMatchObject({ outcome: "classified", class: "phantom" });
    await rig.deliver("pull_request", "opened", { pull: 20, sender: "mallory" });
    expect((await rig.task(7)).task).toMatchObject({ state: "queued", prNumber: null });
    expect(rig.labels(7)).toEqual(["agent:queued"]);
  });

  test("the agent's own pull request from acme/app:agent/issue-7 proves the exit, not the fork's", async () => {
    rig = await startRig({ provider });
    await rig.queue(7);
    const w = await rig.worker();
    const { id: runId, leaseEpoch } = (await w.claim()).body.run;
    const { branch, head: forkHead } = forkPull(rig, 7, 20);
    await rig.deliver("pull_request", "opened", { pull: 20, sender: "mallory" });
    expect(rig.labels(7)).toEqual(["agent:in-progress"]);

    // the agent pushes the run's branch and opens its pull request (#30; #21-29 left unused)
    const head = rig.fake.state.addBranch(REPO, branch, { aheadBy: 2, author: "agent-bot" });
    const own = rig.fake.state.addPull(REPO, {
      head: branch,
      number: 30,
      title: "Thing 7",
      body: "Closes #7",
      user: "agent-bot",
    });
    // the fork's pull request did not follow the parent's branch of the same name
    expect(rig.fake.state.pull(REPO, 20).headSha).toBe(forkHead);

    const exit = await w.exit(runId, { leaseEpoch, exitCode: 0, branch, headSha: head, testsPassed: true });
    expect(exit.status).toBe(200);
    expect(exit.body).toMatchObject({
      outcome: "review",
      prNumber: own.number,
      evidence: { pr: own.number, headSha: head, branch },
    });
    expect(rig.labels(7)).toEqual(["agent:review"]);
    const t = await rig.task(7);
    expect(t.task).toMatchObject({ state: "review", prNumber: 30 });
    expect(t.runs[0]).toMatchObject({ id: runId, state: "review", prNumber: 30 });

    // GitHub's pull_request.opened for both: neither changes the pull request the task follows
    await rig.deliver("pull_request", "opened", { pull: 30, sender: "agent-bot" });
    await rig.deliver("pull_request", "opened", { pull: 20, sender: "mallory" });
    expect((await rig.task(7)).task).toMatchObject({ state: "review", prNumber: 30 });
    expect(rig.fake.state.labelsOf(REPO, 20)).toEqual([]);
    // what Orchestra reports on GitHub is about its own head, never the fork's
    const runs = [...rig.fake.state.repo(REPO).checkRuns.values()].filter((c) => c.app === "self");
    expect(runs.map((c) => c.headSha)).toEqual([head]);
  });
});
