/** The readiness cache with a fake clock and a counting probe: one query per 5 s, however many callers. */
import { judge, Readiness, READY_CACHE_MS } from "../../src/health/readiness.js";

function setup(outcomes: Array<{ pending: string[] } | Error>) {
  const clock = { ms: 1_000_000, now: () => new Date(clock.ms) };
  let probes = 0;
  let release: (() => void) | null = null;
  let hold = false;
  const probe = async () => {
    const o = outcomes[Math.min(probes, outcomes.length - 1)]!;
    probes++;
    if (hold) await new Promise<void>((r) => (release = r));
    if (o instanceof Error) throw o;
    return o;
  };
  const readiness = new Readiness(probe, clock);
  return { clock, readiness, probes: () => probes, hold: (on: boolean) => (hold = on), release: () => release?.() };
}

describe("Readiness", () => {
  test("a thousand checks within 5 s ask the database once", async () => {
    const s = setup([{ pending: [] }]);
    for (let i = 0; i < 1000; i++) expect((await s.readiness.check()).ready).toBe(true);
    expect(s.probes()).toBe(1);
  });

  test("checks arriving while one runs share it", async () => {
    const s = setup([{ pending: [] }]);
    s.hold(true);
    const all = Promise.all(Array.from({ length: 50 }, () => s.readiness.check()));
    await Promise.resolve();
    s.release();
    const answers = await all;
    expect(new Set(answers).size).toBe(1);
    expect(s.probes()).toBe(1);
  });

  test("the answer is renewed once it is 5 s old, not before", async () => {
    const s = setup([{ pending: [] }, { pending: ["0011_next"] }]);
    expect((await s.readiness.check()).ready).toBe(true);
    s.clock.ms += READY_CACHE_MS - 1;
    expect((await s.readiness.check()).ready).toBe(true);
    expect(s.probes()).toBe(1);
    s.clock.ms += 1;
    const c = await s.readiness.check();
    expect(c).toMatchObject({ ready: false, reason: "migrations not applied", pending: ["0011_next"] });
    expect(s.probes()).toBe(2);
  });

  test("a failure is cached too: a flood against a dead database is one query per 5 s", async () => {
    const s = setup([new Error("connect ECONNREFUSED 127.0.0.1:5432")]);
    for (let i = 0; i < 100; i++)
      expect(await s.readiness.check()).toMatchObject({ ready: false, reason: "database unreachable" });
    expect(s.probes()).toBe(1);
  });

  test("a clock that went back renews the answer", async () => {
    const s = setup([{ pending: [] }]);
    await s.readiness.check();
    s.clock.ms -= 60_000;
    await s.readiness.check();
    expect(s.probes()).toBe(2);
  });
});

describe("judge", () => {
  const at = new Date(0);
  test.each([
    ["all applied", { pending: [] }, { ready: true, reason: null, error: null, pending: [] }],
    [
      "pending migrations",
      { pending: ["0010_edges"] },
      { ready: false, reason: "migrations not applied", error: null, pending: ["0010_edges"] },
    ],
    [
      "an error: its last line, URLs masked",
      { error: new Error("Invalid\nconnect to postgresql://u:hunter2@db/x failed") },
      { ready: false, reason: "database unreachable", error: "connect to postgresql://u:***@db/x failed", pending: [] },
    ],
    [
      "a thrown string",
      { error: "boom" },
      { ready: false, reason: "database unreachable", error: "boom", pending: [] },
    ],
  ])("%s", (_name, outcome, expected) => {
    expect(judge(outcome, at)).toEqual({ ...expected, checkedAt: at });
  });
});
