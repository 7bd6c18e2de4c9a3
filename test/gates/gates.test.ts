/**
 * The gates, as tables: which one a queued task is waiting for, and the
 * breaker's decisions (when it opens, what its probe means, its cool-down).
 */
import { waitingFor, type GateFacts } from "../../src/gates/waiting.js";
import { coolDownMs, probeOutcome, tripOf, type EndedRun } from "../../src/gates/breaker.js";

const NOW = new Date("2026-06-01T12:00:00.000Z");
const later = new Date(NOW.getTime() + 60_000);
const earlier = new Date(NOW.getTime() - 60_000);

const REPO_ROW: NonNullable<GateFacts["repo"]> = {
  configProblems: null,
  paused: false,
  dispatch: false,
  maxPerRepo: 5,
  maxPerOrg: 20,
  breakerClass: null,
  breakerUntil: null,
  breakerRuns: null,
  breakerWhy: null,
  probeRunId: null,
  owner: "acme",
  access: null,
};
const FACTS: GateFacts = { now: NOW, repo: REPO_ROW, pause: null, liveInRepo: 0, liveInOrg: 0, workerCovers: true };
const TASK = {
  state: "queued",
  repo: "acme/app",
  backoffUntil: null,
  blockedBy: null,
  blockersAt: earlier,
  diagnostic: null,
};

describe("waitingFor: the first gate that holds a queued task", () => {
  test.each<
    [
      string,
      Partial<typeof TASK> | Record<string, unknown>,
      Partial<GateFacts> & { row?: Partial<typeof REPO_ROW> },
      string | null,
    ]
  >([
    ["nothing holds it", {}, {}, null],
    ["the installation's webhook deliveries are failing", {}, { deliveriesFailing: true }, "deliveries"],
    ["not queued", { state: "claimed" }, { row: { paused: true } }, null],
    ["an operator's service-wide pause", {}, { pause: { scope: "*", reason: "incident", by: "sam" } }, "paused"],
    ["configuration not read yet", {}, { repo: null }, "config-unread"],
    [
      "an invalid configuration",
      {},
      { row: { configProblems: JSON.stringify(["limits.maxAttempts: expected number"]) } },
      "config-invalid",
    ],
    ["paused: true in the configuration", {}, { row: { paused: true } }, "paused"],
    [
      "the breaker open",
      {},
      { row: { breakerUntil: later, breakerClass: "phantom", breakerRuns: JSON.stringify(["r1"]) } },
      "breaker",
    ],
    [
      "the breaker open: GitHub refuses every dispatch",
      {},
      { row: { breakerUntil: later, breakerClass: "dispatch-refused", breakerWhy: "no workflow_dispatch trigger" } },
      "breaker",
    ],
    ["the installation suspended", {}, { row: { access: "suspended" } }, "access"],
    ["the repository removed from the installation", {}, { row: { access: "removed", paused: true } }, "access"],
    ["the breaker half-open, its probe running", {}, { row: { breakerUntil: earlier, probeRunId: "r9" } }, "breaker"],
    ["the breaker past its cool-down, no probe yet: claimable", {}, { row: { breakerUntil: earlier } }, null],
    ["blocked by open issues", { blockedBy: JSON.stringify(["acme/app#3"]) }, {}, "blocked-by"],
    ["blockers not read yet", { blockersAt: null }, {}, "blockers-unread"],
    ["backing off", { backoffUntil: later }, {}, "backoff"],
    ["a backoff that has passed", { backoffUntil: earlier }, {}, null],
    ["no worker may claim here", {}, { workerCovers: false }, "no-worker"],
    ["no worker, but the App dispatches it", {}, { workerCovers: false, row: { dispatch: true } }, null],
    ["the repository at its limit", {}, { liveInRepo: 5 }, "repo-limit"],
    ["the organization at its limit", {}, { liveInRepo: 1, liveInOrg: 20 }, "org-limit"],
    [
      "paused wins over every later gate",
      { blockedBy: JSON.stringify(["acme/app#3"]) },
      { row: { paused: true }, liveInRepo: 9 },
      "paused",
    ],
  ])("%s", (_name, task, facts, gate) => {
    const { row, ...rest } = facts;
    const f: GateFacts = { ...FACTS, ...rest, ...(row ? { repo: { ...REPO_ROW, ...row } } : {}) };
    const w = waitingFor({ ...TASK, ...task }, f);
    expect(w?.gate ?? null).toBe(gate);
    if (w) expect(w.detail.length).toBeGreaterThan(10);
  });
  test("a dispatch breaker says what GitHub refuses, a removed repository what brings it back", () => {
    const breaker = { ...REPO_ROW, breakerUntil: later, breakerClass: "dispatch-refused", breakerWhy: "no trigger" };
    expect(waitingFor(TASK, { ...FACTS, repo: breaker })).toMatchObject({
      detail: expect.stringContaining("GitHub refuses every dispatch here (no trigger)"),
      until: later.toISOString(),
    });
    expect(waitingFor(TASK, { ...FACTS, repo: { ...REPO_ROW, access: "removed" } })?.detail).toContain("added back");
  });
  test("a timed gate says when it opens", () => {
    expect(waitingFor({ ...TASK, backoffUntil: later }, FACTS)?.until).toBe(later.toISOString());
  });
});

const cfg = { failures: 3, windowSeconds: 600, coolDownSeconds: 300 };
const run = (id: string, klass: string | null, minutesAgo: number): EndedRun => ({
  id,
  taskId: `t-${id}`,
  class: klass,
  endedAt: new Date(NOW.getTime() - minutesAgo * 60_000),
});

describe("the breaker opens", () => {
  test.each<[string, EndedRun[], Date | null, string | null]>([
    [
      "three alike within the window",
      [run("a", "phantom", 1), run("b", "phantom", 2), run("c", "phantom", 3)],
      null,
      "phantom",
    ],
    [
      "three, but different classes",
      [run("a", "phantom", 1), run("b", "debris-empty", 2), run("c", "unknown", 3)],
      null,
      null,
    ],
    [
      "one of the three outside the window",
      [run("a", "phantom", 1), run("b", "phantom", 2), run("c", "phantom", 11)],
      null,
      null,
    ],
    [
      "classes that are not failures",
      [run("a", "merged", 1), run("b", "merged", 2), run("c", "merged", 3)],
      null,
      null,
    ],
    [
      "questions are not failures",
      [run("a", "question", 1), run("b", "question", 2), run("c", "question", 3)],
      null,
      null,
    ],
    [
      "runs before the breaker last closed do not count",
      [run("a", "phantom", 1), run("b", "phantom", 2), run("c", "phantom", 3)],
      new Date(NOW.getTime() - 150_000),
      null,
    ],
  ])("%s", (_name, runs, closedAt, want) => {
    const t = tripOf(runs, cfg, NOW, closedAt);
    expect(t?.klass ?? null).toBe(want);
    if (t) expect(t.runs.map((r) => r.id)).toEqual(["c", "b", "a"]);
  });
});

describe("its probe", () => {
  test.each<[string, { state: string; class: string | null } | null, string]>([
    ["still running", { state: "live", class: null }, "wait"],
    ["ended, not classified yet", { state: "expired", class: null }, "wait"],
    ["opened a PR", { state: "review", class: null }, "close"],
    ["failed the same way", { state: "exited", class: "phantom" }, "reopen"],
    ["failed another way", { state: "exited", class: "debris-half-done" }, "close"],
    ["never started (dispatch refused)", { state: "aborted", class: null }, "again"],
    ["gone", null, "again"],
  ])("%s → %s", (_name, probe, want) => {
    expect(probeOutcome(probe, "phantom")).toBe(want);
  });
  test.each([
    [1, 300_000],
    [2, 600_000],
    [4, 2_400_000],
    [10, 2_400_000],
  ])("trip %i cools down for %i ms (doubling, at most 8×)", (trips, ms) => {
    expect(coolDownMs(cfg, trips)).toBe(ms);
  });
});
