/**
 * Coalesced writes: a task taken the whole way (queued, claimed by the real
 * `orchestra worker`, its PR opened, merged, done) while the App's writes to
 * GitHub waited. Each later label and check-run effect does what the earlier
 * ones would have, so those are dropped as they are recorded and never tried:
 * GitHub gets one label write and one check run, not one per state.
 */
import { providers } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { REPO } from "../support/lifecycle-rig.js";
import { startLoop, type LoopRig } from "../support/worker-rig.js";

interface EffectRow {
  kind: string;
  key: string;
  state: string;
  attempts: number;
  note: string | null;
}

describe.each(providers)("coalesced writes on %s", (provider) => {
  let rig: LoopRig;
  afterEach(async () => {
    rig?.fake.assertNoViolations();
    await rig?.stop();
  });

  const taskOf = async (issue: number) =>
    (await rig.task(issue)) as { task: { state: string; prNumber: number | null }; effects: EffectRow[] };

  test("queued → claimed → review → done before any write went out: one label write and one check run", async () => {
    rig = await startLoop({ provider, effects: { start: false } });
    await rig.queue(1);
    const agent = rig.agent("fix", "echo 'fix' > src/app.txt\ngit add src/app.txt\ngit commit -qm 'Fix'");
    const { code, stderr } = await rig.once(["--agent", agent]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const { task } = await taskOf(1);
    expect(task.state).toBe("review");
    rig.fake.state.mergePull(REPO, task.prNumber!, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: task.prNumber!, sender: "alice" });
    await eventually(async () => ((await taskOf(1)).task.state === "done" ? true : undefined), 10_000, "done");

    // Before the executor ran, only the newest of each is left to go out.
    const before = (await taskOf(1)).effects;
    for (const kind of ["label", "check-run"]) {
      const all = before.filter((e) => e.kind === kind);
      expect(all.length).toBeGreaterThan(1);
      const newest = all[all.length - 1]!;
      expect(newest).toMatchObject({ state: "pending", attempts: 0 });
      // Each one was dropped by the next, as that one was recorded.
      all.slice(0, -1).forEach((older, i) =>
        expect(older).toMatchObject({
          state: "dropped",
          attempts: 0,
          note: `superseded by effect ${all[i + 1]!.key}`,
        }),
      );
    }

    const from = rig.fake.requests.length;
    rig.startEffects();
    await rig.settle();
    expect(rig.labels(1)).toEqual([]);
    const writes = rig.writesSince(from).map((w) => `${w.method} ${w.path}`);
    expect(writes.filter((w) => /\/issues\/1\/labels/.test(w))).toHaveLength(1);
    expect(writes.filter((w) => /\/check-runs/.test(w))).toEqual([`POST /repos/${REPO}/check-runs`]);
  });
});
