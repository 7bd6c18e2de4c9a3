import { Registry } from "prom-client";
import { ignoredRows, lagSeconds, TableGauges } from "../../src/metrics/collector.js";
import type { Db } from "../../src/store/db.js";
import { metricsQueries } from "../../src/metrics/queries.js";
import { parseExposition, valueOf } from "./exposition.js";

describe("table gauges", () => {
  test("the inbox lag is the oldest pending delivery's age, 0 when none waits or the clock is behind", () => {
    const now = new Date("2026-01-01T00:01:00Z");
    expect(lagSeconds(new Date("2026-01-01T00:00:30Z"), now)).toBe(30);
    expect(lagSeconds(null, now)).toBe(0);
    expect(lagSeconds(new Date("2026-01-01T00:02:00Z"), now)).toBe(0);
  });

  test("only ignored.* counters are ignored inputs, labelled by their reason", () => {
    expect(
      ignoredRows([
        { name: "ignored.own-echo", value: 3 },
        { name: "other", value: 9 },
      ]),
    ).toEqual([{ labels: { reason: "own-echo" }, value: 3 }]);
  });

  // A database stand-in that counts reads and answers what the test sets.
  function fakeDb(state: { pending: number }) {
    let reads = 0;
    const db = {
      delivery: {
        groupBy: async () => {
          reads++;
          return [{ state: "pending", _count: { _all: state.pending } }];
        },
        count: async () => 1,
        findFirst: async () => null,
      },
      counter: { findMany: async () => [] },
      task: { groupBy: async () => [{ state: "queued", repo: "a/b", _count: { _all: 2 } }] },
      run: {
        groupBy: async (q: { by: string[] }) =>
          q.by[0] === "class"
            ? [{ class: "infra", _count: { _all: 1 } }]
            : [{ recovery: "retry", _count: { _all: 1 } }],
      },
      effect: { groupBy: async () => [{ state: "done", kind: "label", _count: { _all: 5 } }] },
    };
    return { db: db as unknown as Db, reads: () => reads };
  }

  test("one read of the tables serves every scrape for 5 s; after that the next scrape reads again", async () => {
    const registry = new Registry();
    const state = { pending: 4 };
    const { db, reads } = fakeDb(state);
    const clock = { t: 0, now: () => new Date(clock.t) };
    const gauges = new TableGauges(registry, metricsQueries(db), clock);
    await Promise.all(Array.from({ length: 50 }, () => gauges.refresh()));
    expect(reads()).toBe(1);
    let s = parseExposition(await registry.metrics()).samples;
    expect(valueOf(s, "orchestra_deliveries", { state: "pending" })).toBe(4);
    expect(valueOf(s, "orchestra_deliveries", { state: "retrying" })).toBe(1);
    expect(valueOf(s, "orchestra_tasks", { state: "queued", repo: "a/b" })).toBe(2);
    expect(valueOf(s, "orchestra_runs_by_class", { class: "infra" })).toBe(1);
    expect(valueOf(s, "orchestra_recoveries", { action: "retry" })).toBe(1);
    expect(valueOf(s, "orchestra_effects", { state: "done", kind: "label" })).toBe(5);

    state.pending = 7;
    clock.t = 4_999;
    await gauges.refresh();
    expect(reads()).toBe(1);
    clock.t = 5_000;
    await gauges.refresh();
    expect(reads()).toBe(2);
    s = parseExposition(await registry.metrics()).samples;
    expect(valueOf(s, "orchestra_deliveries", { state: "pending" })).toBe(7);
  });
});
