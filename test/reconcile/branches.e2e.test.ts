/**
 * Branch hygiene end to end: a merged task's branch is deleted, unless the
 * repository deletes merged branches itself or the branch moved on after the
 * merge; agent branches nobody owns are listed for the operator and never
 * deleted.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const branches = () => rig.fake.state.repo(REPO).branches;
  const deletes = () => rig.fake.requests.filter((r) => r.method === "DELETE" && r.path.includes("/git/refs/"));

  /** A task whose run opened a pull request from its branch, merged by a person. */
  async function mergedTask(issue: number, beforeWebhook?: (branch: string) => void) {
    await rig.queue(issue);
    const w = await rig.worker(`w${issue}`);
    const { run } = (await w.claim()).body;
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, {
      head: run.branch,
      title: `Issue ${issue}`,
      body: `Closes #${issue}`,
      user: "agent-bot",
    });
    expect(
      (
        await w.exit(run.id, {
          leaseEpoch: run.leaseEpoch,
          exitCode: 0,
          branch: run.branch,
          headSha: head,
          testsPassed: true,
        })
      ).status,
    ).toBe(200);
    rig.fake.state.mergePull(REPO, pr.number, { by: "alice" });
    beforeWebhook?.(run.branch);
    await rig.deliver("pull_request", "closed", { pull: pr.number, sender: "alice" });
    await rig.sweep();
    return { branch: run.branch as string, pr: pr.number, taskId: (await rig.task(issue)).task.id as string };
  }
  async function effectOf(taskId: string) {
    const res = await rig.app.admin(`/api/v1/effects?task=${taskId}`);
    const { effects } = (await res.json()) as { effects: Array<{ kind: string; state: string; note: string | null }> };
    return effects.find((e) => e.kind === "delete-merged-branch");
  }

  test("a merged task's branch is deleted once; a branch that moved on after the merge is kept", async () => {
    rig = await startRig({ provider });
    const merged = await mergedTask(1);
    expect((await rig.task(1)).task.state).toBe("done");
    expect(branches().has(merged.branch)).toBe(false);
    expect(deletes()).toHaveLength(1);
    expect(await effectOf(merged.taskId)).toMatchObject({ state: "done" });

    // Someone pushed to the branch after the merge: those commits are in no pull request.
    const moved = await mergedTask(3, (branch) => rig.fake.state.addCommits(REPO, branch, 1));
    expect(branches().has(moved.branch)).toBe(true);
    expect(deletes()).toHaveLength(1);
    expect(await effectOf(moved.taskId)).toMatchObject({
      state: "dropped",
      note: expect.stringMatching(/branch kept: it moved to .* holds commits no pull request has/),
    });
  });

  test("a repository that deletes merged branches itself (its merge delivery says so) is left to it", async () => {
    rig = await startRig({ provider });
    rig.fake.state.repo(REPO).deleteBranchOnMerge = true;
    const merged = await mergedTask(5);
    expect(branches().has(merged.branch)).toBe(false);
    expect(deletes()).toEqual([]);
    // GitHub's delivery of the merge said so: no delete is recorded, and GitHub is not asked about the branch.
    expect(await effectOf(merged.taskId)).toBeUndefined();
    expect(rig.fake.requests.filter((r) => r.graphql?.operationName === "MergedBranch")).toEqual([]);
  });

  test("agent branches with no task, pull request or recent commit are listed as stale and never deleted", async () => {
    rig = await startRig({ provider });
    await rig.queue(7);
    const w = await rig.worker();
    const { run } = (await w.claim()).body;
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 }); // the live run's
    rig.fake.state.addBranch(REPO, "agent/with-pr", { aheadBy: 1 });
    rig.fake.state.addPull(REPO, { head: "agent/with-pr", title: "By hand", body: "", user: "alice" });
    const old = rig.fake.state.addBranch(REPO, "agent/abandoned", { aheadBy: 2 });
    rig.fake.state.repo(REPO).commits.get(old)!.date = new Date(rig.clock.now().getTime() - 30 * 86_400_000);
    rig.fake.state.addBranch(REPO, "agent/fresh", { aheadBy: 1 });
    rig.fake.state.addBranch(REPO, "feature/not-agent", { aheadBy: 1 });

    const res = await rig.app.admin(`/api/v1/branches?repo=${REPO}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      prefix: string;
      stale: number;
      branches: Array<{ name: string; task: string | null; pullRequests: number; stale: boolean; why: string }>;
    };
    expect(body.prefix).toBe("agent/");
    const byName = new Map(body.branches.map((b) => [b.name, b]));
    expect([...byName.keys()].sort()).toEqual(["agent/abandoned", "agent/fresh", run.branch, "agent/with-pr"].sort());
    expect(byName.get(run.branch)).toMatchObject({ stale: false, task: expect.any(String) });
    expect(byName.get("agent/with-pr")).toMatchObject({ stale: false, pullRequests: 1 });
    expect(byName.get("agent/fresh")).toMatchObject({ stale: false, why: expect.stringMatching(/last commit 0 day/) });
    expect(byName.get("agent/abandoned")).toMatchObject({ stale: true, why: expect.stringMatching(/30 days ago/) });
    expect(body.stale).toBe(1);
    expect(branches().has("agent/abandoned")).toBe(true);
    expect(deletes()).toEqual([]);
    // One GraphQL query lists them.
    expect(rig.fake.requestsFor("graphql:Branches")).toHaveLength(1);

    expect((await rig.app.admin("/api/v1/branches")).status).toBe(400);
    expect((await rig.app.admin("/api/v1/branches?repo=nobody/knows")).status).toBe(404);
    expect((await rig.app.admin(`/api/v1/branches?repo=${REPO}&staleDays=0`)).status).toBe(400);
  });
});
