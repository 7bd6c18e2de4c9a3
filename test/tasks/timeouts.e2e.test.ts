/**
 * A check that times out again when rerun on the same commit is the change's
 * own hang: the first timeout reruns the failed jobs (it may be the runner's),
 * the second queues fix-checks with both timeouts as its evidence, never an
 * infrastructure escalation.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { deliverCiRun } from "../support/ci-runs.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });
  const reruns = () => rig.fake.state.reruns.filter((r) => r.kind === "failed-jobs");

  test("a timeout, its rerun, the same check timing out again on the same commit: fix-checks with both timeouts", async () => {
    rig = await startRig({ provider });
    const w = await rig.worker();
    const { pr, head } = await rig.inReview(w, 1);
    const first = await deliverCiRun(rig, head, [
      { name: "e2e", conclusion: "timed_out" },
      { name: "lint", conclusion: "success" },
    ]);
    expect(reruns()).toEqual([expect.objectContaining({ id: first.id })]);
    expect((await rig.task(1)).task.state).toBe("review");

    await deliverCiRun(rig, head, [
      {
        name: "e2e",
        conclusion: "timed_out",
        summary: "The job running on runner 7 has exceeded the maximum execution time of 30 minutes.",
      },
    ]);
    expect(reruns()).toHaveLength(1);
    const t = await rig.task(1);
    expect(t.task).toMatchObject({
      state: "queued",
      continuation: {
        kind: "fix-checks",
        prNumber: pr,
        headSha: head,
        checks: [expect.objectContaining({ name: "e2e", conclusion: "timed_out" })],
      },
    });
    // Both timeouts are the evidence: the first check run and its rerun's, by id.
    const [a, b] = rig.fake.state
      .checkRunsFor(rig.fake.state.repo(REPO), head)
      .filter((c) => c.name === "e2e" && c.conclusion === "timed_out")
      .sort((x, y) => x.id - y.id);
    expect(t.task.continuation.reason).toBe(
      `checks failed on pull request #${pr}: e2e timed out again when rerun on the same commit ` +
        `(check runs ${a!.id}, ${b!.id}): the change hangs, not the runner`,
    );
    expect(
      rig.fake.state
        .commentsOn(rig.fake.state.repo("acme/app").fullName, 1)
        .filter((c) => c.body.includes("needs a human")),
    ).toEqual([]);
  });
});
