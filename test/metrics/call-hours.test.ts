/** GitHub calls per hour in the counter table, on each database: tallied, written in batches, kept on failure, pruned. */
import { CallHours, CALLS_PREFIX } from "../../src/metrics/call-hours.js";
import { metricsQueries } from "../../src/metrics/queries.js";
import { eachMigratedDatabase, providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  const each = eachMigratedDatabase(provider);

  test("calls are written at most once per interval, then read back per hour with zeros between", async () => {
    const clock = { ms: Date.parse("2026-12-01T08:59:58Z"), now: () => new Date(clock.ms) };
    const hours = new CallHours(
      { database: each.database, queries: metricsQueries(each.database.db), clock },
      { flushMs: 10_000, keepHours: 48 },
    );
    hours.count("read"); // the first call writes at once
    await hours.flush();
    for (let i = 0; i < 5; i++) hours.count("write");
    clock.ms += 3_000; // 09:00:01, a new hour
    hours.count("read");
    const stored = async () =>
      Object.fromEntries(
        (await each.database.db.counter.findMany({ where: { name: { startsWith: CALLS_PREFIX } } })).map((r) => [
          r.name,
          r.value,
        ]),
      );
    expect(await stored()).toEqual({ "github.calls.2026-12-01T08.read": 1 });
    const series = await hours.lastHours(3);
    expect(series.map((h) => [h.hour.toISOString(), h.reads, h.writes])).toEqual([
      ["2026-12-01T07:00:00.000Z", 0, 0],
      ["2026-12-01T08:00:00.000Z", 1, 5],
      ["2026-12-01T09:00:00.000Z", 1, 0],
    ]);
  });

  test("a failed write keeps its tally for the next; hours past keepHours are deleted", async () => {
    const clock = { ms: Date.parse("2026-12-01T08:00:00Z"), now: () => new Date(clock.ms) };
    let unreachable = false;
    const flaky = {
      db: each.database.db,
      provider: each.database.provider,
      get raw() {
        if (unreachable) throw new Error("database unreachable");
        return each.database.raw;
      },
    };
    const errors: unknown[] = [];
    const hours = new CallHours(
      { database: flaky, queries: metricsQueries(flaky.db), clock, onError: (err) => errors.push(err) },
      { flushMs: 60_000, keepHours: 2 },
    );
    const rows = async () =>
      (await each.database.db.counter.findMany({ orderBy: { name: "asc" } })).map((r) => [r.name, r.value]);
    unreachable = true;
    hours.count("write");
    hours.count("write");
    await expect(hours.flush()).rejects.toThrow("database unreachable");
    expect(await rows()).toEqual([]);
    unreachable = false;
    await hours.flush();
    expect(await rows()).toEqual([["github.calls.2026-12-01T08.write", 2]]);
    clock.ms += 3 * 3_600_000; // 11:00: 08:00 is past the two hours kept
    hours.count("read");
    await hours.flush();
    expect(await rows()).toEqual([["github.calls.2026-12-01T11.read", 1]]);
    expect(String(errors[0])).toContain("database unreachable"); // the background write the first call started
  });
});
