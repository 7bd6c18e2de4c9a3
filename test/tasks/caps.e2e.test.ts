/**
 * A run's caps, checked at every heartbeat: its wall-clock time
 * (limits.maxRunSeconds) and the task's model spend (limits.maxCostUsd).
 * Past either the lease stops renewing with a 409 that says which, and ends
 * at its expiry: the worker still pushes its work and reports its exit.
 */
import { startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const beat = (w: WorkerClient, run: { id: string; leaseEpoch: string }, body: Record<string, unknown>) =>
    w.call("POST", `/api/v1/runs/${run.id}/heartbeat`, { leaseEpoch: run.leaseEpoch, ...body });
  const leaseOf = async (issue: number) =>
    (await rig.app.database.db.task.findFirstOrThrow({ where: { issue } })).leaseExpiresAt?.toISOString() ?? null;

  test("past limits.maxRunSeconds the lease stops renewing with 409 over-time; the exit before it ends is taken", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxRunSeconds: 600\n");
    await rig.queue(1);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    for (const step of ["plan", "edit", "test", "fix", "test-again"]) {
      rig.clock.advance(100_000);
      expect((await beat(w, run, { progress: { step } })).status).toBe(200);
    }
    rig.clock.advance(100_000);
    const before = await leaseOf(1);
    const over = await beat(w, run, { progress: { step: "more" } });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ reason: "over-time", retryable: false });
    expect(over.body.error).toMatch(/started 6\d\d s ago and limits.maxRunSeconds is 600; the lease is not renewed/);
    // Not renewed, not ended: the worker has the rest of its lease to hand the work off.
    expect(await leaseOf(1)).toBe(before);
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 143, handoff: true, dirty: false });
    expect(exit.status).toBe(200);
    expect(exit.body).toMatchObject({ outcome: "classified" });
  });

  test("a heartbeat whose usage reaches limits.maxCostUsd gets 409 over-budget; the exit blocks the task with one comment", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxCostUsd: 5\n");
    await rig.queue(2);
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    const usage = (costUsd: number) => ({ inputTokens: 1000, outputTokens: 100, costUsd });
    rig.clock.advance(60_000);
    expect((await beat(w, run, { progress: { step: "a" }, usage: usage(2) })).status).toBe(200);
    rig.clock.advance(60_000);
    const over = await beat(w, run, { progress: { step: "b" }, usage: usage(5.5) });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ reason: "over-budget" });
    expect(over.body.error).toMatch(/model spend is \$5\.50 of limits.maxCostUsd \$5\.00/);
    // Refused, and still counted: the spend the heartbeat reported is on the task.
    expect((await rig.task(2)).cost).toMatchObject({ costUsd: 5.5 });
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 143, handoff: true, usage: usage(5.5) });
    expect(exit.status).toBe(200);
    const t = await rig.task(2);
    expect(t.task.state).toBe("blocked");
    const budget = rig.fake.state.commentsOn("acme/app", 2).filter((c) => c.body.includes("limits.maxCostUsd"));
    expect(budget).toHaveLength(1);
  });
});
