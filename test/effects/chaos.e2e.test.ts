/**
 * GitHub misbehaving: 20% of writes answer 502 (half of them after taking
 * effect) and 10% hit a secondary rate limit. A task's whole path (queue →
 * claim → PR → merge), a phantom exit and an escalation still converge to the
 * right labels and comments, with no duplicate objects and a bounded number
 * of calls.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";

let rig: Rig;
afterEach(async () => {
  rig.fake.chaos(null);
  rig.fake.assertNoViolations();
  await rig.stop();
});

const writes = () =>
  rig.fake.requests.filter((q) => q.method !== "GET" && !q.path.includes("/access_tokens") && q.path !== "/graphql");

test.each([[1], [2], [3]])("seed %i: every path converges to the truth on GitHub", async (seed) => {
  rig = await startRig();
  rig.fake.chaos({ seed, failRate: 0.2, performedShare: 0.5, secondaryRateLimitRate: 0.1, retryAfterSeconds: 1 });
  const w = await rig.worker();

  // Queue → claim → PR → merge.
  await rig.queue(1);
  const run1 = (await w.claim()).body.run;
  rig.fake.state.addBranch(REPO, run1.branch, { aheadBy: 1 });
  const pr = rig.fake.state.addPull(REPO, { head: run1.branch, body: "Closes #1" });
  await rig.deliver("pull_request", "opened", { pull: pr.number, sender: "agent-bot" });
  expect((await w.exit(run1.id, { leaseEpoch: run1.leaseEpoch, exitCode: 0 })).body).toMatchObject({
    outcome: "review",
  });
  rig.fake.state.mergePull(REPO, pr.number, { by: "alice" });
  await rig.deliver("pull_request", "closed", { pull: pr.number, sender: "alice" });

  // A phantom (exit 0, no PR, an empty branch) and an escalation (one comment, whatever the lost answers).
  await rig.queue(11);
  await rig.queue(12);
  const run2 = (await w.claim()).body.run;
  const run3 = (await w.claim()).body.run;
  rig.fake.state.addBranch(REPO, run2.branch);
  expect((await w.exit(run2.id, { leaseEpoch: run2.leaseEpoch, exitCode: 0 })).body).toMatchObject({
    class: "phantom",
  });
  expect((await w.exit(run3.id, { leaseEpoch: run3.leaseEpoch, exitCode: 1, turnCapHit: true })).body).toMatchObject({
    class: "turn-cap-spinning",
  });

  await rig.settle();
  expect(rig.labels(1)).toEqual([]);
  expect(rig.labels(11)).toEqual(["agent:queued"]);
  expect(rig.labels(12)).toEqual(["agent:blocked"]);
  expect(rig.fake.state.repo(REPO).branches.has(run2.branch)).toBe(false);
  expect(rig.fake.state.commentsOn(REPO, 12)).toHaveLength(1);
  expect(rig.fake.state.commentsOn(REPO, 1)).toHaveLength(0);
  expect(rig.fake.state.commentsOn(REPO, 11)).toHaveLength(0);
  const parked = (await (await rig.app.admin("/api/v1/effects?state=parked")).json()) as { effects: unknown[] };
  expect(parked.effects).toEqual([]);

  // Bounded: the fault-free path makes 16 writes (5 + 5 + 5 label writes and a comment,
  // a branch delete); faults may cost retries, never a storm.
  const stats = rig.fake.chaosStats();
  expect(stats.failed502 + stats.rateLimited).toBeGreaterThan(0);
  expect(writes().length).toBeLessThanOrEqual(3 * 16);
});
