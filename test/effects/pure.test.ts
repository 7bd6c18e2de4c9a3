import { backoffMs, retryDecision, type Failure } from "../../src/retry/schedule.js";
import { attemptsBeforeParking } from "../../src/effects/failure.js";
import { pauseMs } from "../../src/effects/installations.js";
import { classifyBackoffMs } from "../../src/exits/settle.js";
import { laneOf } from "../../src/machine/effects.js";
import { PERFORMERS } from "../../src/effects/perform.js";

describe("an effect's retry delay: 2 s doubling to 10 min, ±25% jitter, never above the cap", () => {
  const policy = { baseMs: 2_000, capMs: 600_000 };
  test.each([
    [1, 2_000],
    [2, 4_000],
    [5, 32_000],
    [9, 512_000],
    [10, 600_000],
    [30, 600_000],
  ])("attempt %i → %i ms before jitter", (attempt, ms) => {
    expect(backoffMs(attempt, policy, () => 0.5)).toBe(ms);
    expect(backoffMs(attempt, policy, () => 0)).toBe(Math.round(ms * 0.75));
    expect(backoffMs(attempt, policy, () => 0.999999)).toBeLessThanOrEqual(Math.min(ms * 1.25, policy.capMs));
  });
});

describe("how long an installation without a token is left alone", () => {
  test.each([
    [1, 60_000],
    [2, 120_000],
    [6, 1_920_000],
    [7, 3_600_000],
    [20, 3_600_000],
  ])("failure %i → %i ms", (n, ms) => expect(pauseMs(n)).toBe(ms));
});

describe("how long a run GitHub could not be asked about waits", () => {
  test.each([
    [1, 30_000],
    [2, 60_000],
    [6, 960_000],
    [7, 1_800_000],
    [50, 1_800_000],
  ])("failure %i → %i ms", (n, ms) => expect(classifyBackoffMs(n)).toBe(ms));
});

describe("how many attempts a deterministic failure of an effect gets before it is parked", () => {
  const policy = { baseMs: 2_000, capMs: 600_000, windowMs: 6 * 3_600_000 };
  const now = new Date("2026-06-01T12:00:00Z");
  test.each<[string, Failure, { deterministicAttempts?: number }, number]>([
    ["a GraphQL query GitHub refused: at once", { class: "graphql" }, {}, 1],
    [
      "a GraphQL query GitHub refused, whatever the performer allows",
      { class: "graphql" },
      { deterministicAttempts: 5 },
      1,
    ],
    ["a 4xx: three", { class: "deterministic" }, {}, 3],
    ["a refused dispatch: the performer's one", { class: "deterministic" }, { deterministicAttempts: 1 }, 1],
  ])("%s", (_n, failure, performer, attempts) => {
    expect(attemptsBeforeParking(failure, performer)).toBe(attempts);
    const at = (n: number) =>
      retryDecision({ failure, attempts: n, firstFailedAt: null, now, policy: { ...policy, maxAttempts: attempts } });
    expect(at(attempts)).toMatchObject({ park: true });
    if (attempts > 1) expect(at(attempts - 1)).toHaveProperty("retryAt");
  });

  test("a refused query is parked saying so, never as an outage", () => {
    const d = retryDecision({
      failure: { class: "graphql" },
      attempts: 1,
      firstFailedAt: null,
      now,
      policy: { ...policy, maxAttempts: 1 },
    });
    expect(d).toMatchObject({ park: true, why: expect.stringContaining("a GraphQL query GitHub refused") });
  });
});

const LANE_OF = [
  ["label", 1],
  ["remove-label", 1],
  ["revoke-credentials", 2],
  ["comment", 2],
  ["reaction", 2],
  ["create-pull", 2],
  ["dispatch", 2],
  ["rerun-failed-jobs", 2],
  ["rerequest-check-suite", 2],
  ["update-branch", 2],
  ["check-run", 3],
  ["delete-branch", 3],
  ["delete-merged-branch", 3],
  ["fleet-issue", 3],
] as const;

describe("the executor's lanes: a claim's interlock, then ownership, then what people wait for, then housekeeping", () => {
  test.each(LANE_OF)("%s → lane %i", (kind, lane) => expect(laneOf(kind)).toBe(lane));
  test("the table names every kind the executor performs", () =>
    expect(LANE_OF.map(([kind]) => kind).sort()).toEqual(Object.keys(PERFORMERS).sort()));
});
