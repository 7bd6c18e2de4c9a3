import { backoffMs } from "../../src/retry/schedule.js";
import { pauseMs } from "../../src/effects/installations.js";
import { classifyBackoffMs } from "../../src/exits/settle.js";

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
