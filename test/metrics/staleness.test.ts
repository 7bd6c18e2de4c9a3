import { staleSweep, staleThresholdMs } from "../../src/metrics/staleness.js";

describe("sweep staleness", () => {
  const start = new Date("2026-01-01T00:00:00Z");
  const at = (ms: number) => new Date(start.getTime() + ms);

  test("the threshold is ten intervals, and at least five minutes", () => {
    expect(staleThresholdMs(5_000)).toBe(300_000);
    expect(staleThresholdMs(60_000)).toBe(600_000);
    expect(staleThresholdMs(3_600_000)).toBe(36_000_000);
  });

  test("a success within the threshold is fresh; one just past it is stale and named", () => {
    const last = at(1_000);
    expect(staleSweep("sweep", last, start, 60_000, at(1_000 + 600_000))).toBeNull();
    expect(staleSweep("sweep", last, start, 60_000, at(1_000 + 600_001))).toEqual({
      sweep: "sweep",
      lastSuccessAt: last.toISOString(),
      thresholdMs: 600_000,
    });
  });

  test("before any success the service's start is the reference", () => {
    expect(staleSweep("sweep", undefined, start, 5_000, at(299_000))).toBeNull();
    expect(staleSweep("sweep", undefined, start, 5_000, at(300_001))).toEqual({
      sweep: "sweep",
      lastSuccessAt: null,
      thresholdMs: 300_000,
    });
  });
});
