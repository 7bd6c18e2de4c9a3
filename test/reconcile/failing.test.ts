import { nextStreaks, type Streak } from "../../src/reconcile/failing.js";

const T0 = new Date("2026-12-01T00:00:00Z");
const at = (min: number) => new Date(T0.getTime() + min * 60_000);
const streak = (runs: number, escalated = false): Streak => ({
  since: T0.toISOString(),
  runs,
  error: "502",
  escalatedAt: escalated ? at(10).toISOString() : null,
});

describe("nextStreaks: escalate a scope once per failing streak", () => {
  test.each([
    ["first failure starts a streak", {}, [["r", "502"]], { r: { runs: 1, escalatedAt: null } }, [], []],
    [
      "the third failure in a row escalates",
      { r: streak(2) },
      [["r", "502"]],
      { r: { runs: 3, escalatedAt: at(15).toISOString() } },
      ["r"],
      [],
    ],
    [
      "a fourth does not escalate again",
      { r: streak(3, true) },
      [["r", "502"]],
      { r: { runs: 4, escalatedAt: at(10).toISOString() } },
      [],
      [],
    ],
    ["success after an escalation recovers", { r: streak(3, true) }, [["r", null]], {}, [], ["r"]],
    ["success before escalation just ends the streak", { r: streak(2) }, [["r", null]], {}, [], []],
    ["a scope not read this run keeps its streak", { r: streak(2) }, [["s", null]], { r: { runs: 2 } }, [], []],
  ] as const)("%s", (_name, before, outcome, expected, escalate, recovered) => {
    const r = nextStreaks(before, new Map(outcome), at(15), 3);
    expect(Object.keys(r.streaks).sort()).toEqual(Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected)) expect(r.streaks[k]).toMatchObject(v);
    expect(r.escalate).toEqual(escalate);
    expect(r.recovered).toEqual(recovered);
  });

  test("the streak keeps its start and the newest error", () => {
    const r = nextStreaks({ r: streak(1) }, new Map([["r", "timeout"]]), at(5), 3);
    expect(r.streaks["r"]).toEqual({ since: T0.toISOString(), runs: 2, error: "timeout", escalatedAt: null });
  });
});
