/**
 * The executor through a GitHub outage, on simulated time: the writes a
 * claim causes fail with 502 (token minting included) for six hours and are
 * retried on the production schedule (2 s doubling to 10 min), none parked;
 * once GitHub is back they are performed.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { eventually } from "../support/orchestra.js";
import { providers } from "../support/databases.js";

const MIN = 60_000;
const HOUR = 60 * MIN;

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.outage(null);
    await rig.stop();
  });

  test("writes failing on 502 through 6 h of outage keep retrying at most 10 min apart, none parked, and are performed once GitHub is back", async () => {
    rig = await startRig({ provider, effects: { start: false, backoff: { baseMs: 2_000, capMs: 10 * MIN } } });
    await rig.queue(3);
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(200);
    const db = rig.app.database.db;
    const task = await db.task.findUniqueOrThrow({ where: { repo_issue: { repo: REPO, issue: 3 } } });
    // The writes the claim caused, not yet performed.
    const ids = (await db.effect.findMany({ where: { taskId: task.id, state: "pending" }, select: { id: true } })).map(
      (e) => e.id,
    );
    expect(ids.length).toBeGreaterThan(0);
    const effects = () => db.effect.findMany({ where: { id: { in: ids } }, orderBy: { seq: "asc" } });

    rig.fake.outage({ status: 502 });
    const start = rig.clock.now().getTime();
    rig.startEffects();
    const attempts = new Map<string, number[]>(); // effect id → simulated times of its failed attempts
    const scheduled: number[] = [];
    for (;;) {
      // Every due effect has been tried and its failure recorded.
      const rows = await eventually(
        async () => {
          const now = rig.clock.now();
          const all = await effects();
          // A label for a state the task has already left is dropped without a write.
          // Parking is the failure this test looks for: it ends the wait too, to be reported below.
          return all.every(
            (e) => e.state === "dropped" || e.state === "parked" || (e.state === "pending" && e.nextAttemptAt > now),
          )
            ? all.filter((e) => e.state === "pending")
            : undefined;
        },
        10_000,
        "due effects tried",
      );
      for (const e of rows) {
        const ring = JSON.parse(e.errors) as Array<{ at: string; class: string }>;
        const last = ring.at(-1);
        if (!last) continue;
        expect(last.class).toBe("github-502");
        const times = attempts.get(e.id) ?? [];
        const at = Date.parse(last.at);
        if (times.at(-1) !== at) {
          times.push(at);
          scheduled.push(e.nextAttemptAt.getTime() - at);
        }
        attempts.set(e.id, times);
      }
      const next = Math.min(...rows.map((e) => e.nextAttemptAt.getTime()));
      if (rows.length === 0 || next > start + 6 * HOUR - MIN) break;
      rig.clock.advanceTo(next);
      rig.app.orchestra.executor.poke();
    }

    // 5 h 59 min into the outage: nothing parked, every write still pending.
    expect((await effects()).filter((e) => e.state === "parked").map((e) => e.note)).toEqual([]);
    const during = (await effects()).filter((e) => e.state !== "dropped");
    expect(during.length).toBeGreaterThan(0);
    expect(during.map((e) => e.state)).toEqual(during.map(() => "pending"));
    expect(attempts.size).toBe(during.length);
    expect(await db.effect.count({ where: { state: "parked" } })).toBe(0);
    expect(Math.max(...scheduled)).toBeLessThanOrEqual(10 * MIN);
    for (const [, times] of attempts) {
      expect(times.length).toBeGreaterThanOrEqual(36);
      expect(times.at(-1)! - start).toBeGreaterThanOrEqual(6 * HOUR - 11 * MIN);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(10 * MIN + 5_000);
    }

    // GitHub is back: the next attempts perform them.
    rig.fake.outage(null);
    rig.clock.advanceTo(Math.max(...during.map((e) => e.nextAttemptAt.getTime())));
    rig.app.orchestra.executor.poke();
    await rig.settle();
    const after = await effects();
    expect(after.map((e) => e.state).filter((s) => s !== "done" && s !== "dropped")).toEqual([]);
    expect(rig.labels(3)).toEqual(["agent:in-progress"]);
  });

  test("a write failing on 502 past the retry window is parked, its note saying what failed, for how long, and how to replay it", async () => {
    rig = await startRig({
      provider,
      env: { ORCHESTRA_RETRY_WINDOW_HOURS: "1" },
      effects: { start: false, backoff: { baseMs: 2_000, capMs: 10 * MIN } },
    });
    await rig.queue(4);
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(200);
    const db = rig.app.database.db;
    const task = await db.task.findUniqueOrThrow({ where: { repo_issue: { repo: REPO, issue: 4 } } });
    const ids = (await db.effect.findMany({ where: { taskId: task.id, state: "pending" }, select: { id: true } })).map(
      (e) => e.id,
    );
    const effects = () =>
      db.effect.findMany({ where: { id: { in: ids }, state: { not: "dropped" } }, orderBy: { seq: "asc" } });

    rig.fake.outage({ status: 502 });
    const start = rig.clock.now().getTime();
    rig.startEffects();
    for (;;) {
      const rows = await eventually(
        async () => {
          const now = rig.clock.now();
          const all = await effects();
          return all.every((e) => e.state === "parked" || (e.state === "pending" && e.nextAttemptAt > now))
            ? all
            : undefined;
        },
        10_000,
        "due effects tried",
      );
      const pending = rows.filter((e) => e.state === "pending");
      if (pending.length === 0) break;
      rig.clock.advanceTo(Math.min(...pending.map((e) => e.nextAttemptAt.getTime())));
      rig.app.orchestra.executor.poke();
    }
    const parked = await effects();
    expect(parked.length).toBeGreaterThan(0);
    for (const e of parked) {
      expect(e.state).toBe("parked");
      expect(e.note).toMatch(
        new RegExp(
          `^parked after ${e.attempts} attempt\\(s\\): GitHub server errors \\(5xx\\) for 1 h( \\d+ min)?: ${e.attempts} attempts, and the retry window is 1 h; last error: .*502.*\\. Fix the cause, then run: orchestra effects replay ${e.id}$`,
        ),
      );
      const ring = JSON.parse(e.errors) as Array<{ at: string; windowFrom: string }>;
      const parkedAt = Date.parse(ring.at(-1)!.at);
      expect(parkedAt - Date.parse(ring.at(-1)!.windowFrom)).toBeGreaterThanOrEqual(HOUR);
      expect(parkedAt - start).toBeLessThan(HOUR + 10 * MIN + 5_000);
    }
  });
});
