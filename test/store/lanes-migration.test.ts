/**
 * Upgrading a database from before the interlock lane: the effects still to be performed keep their order, each
 * one rank down, so a pending comment still waits behind a pending label and housekeeping behind both.
 */
import { openDatabase } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { LANES } from "../../src/machine/effects.js";
import { providers, testDatabase } from "../support/databases.js";

test.each(providers.map((p) => [p]))("%s: pending effects move one lane down, finished ones stay", async (provider) => {
  const t = await testDatabase(provider);
  const database = await openDatabase(t.url, { poolSize: 2 });
  try {
    await migrate(database, () => {}, { through: "0024_effect_lanes" });
    const at = new Date("2026-11-30T10:00:00Z");
    // Lanes as they were numbered then: 0 ownership, 1 waited-for, 2 housekeeping.
    const rows: Array<[string, string, string, number]> = [
      ["label:t1:v2", "label", "pending", 0],
      ["comment:t1", "comment", "pending", 1],
      ["delete-branch:t1", "delete-branch", "running", 2],
      ["check-run:t2", "check-run", "parked", 2],
      ["label:t2:v5", "label", "done", 0],
    ];
    await database.db.effect.createMany({
      data: rows.map(([key, kind, state, lane]) => ({
        id: key,
        key,
        installationId: 7,
        repo: "acme/app",
        kind,
        payload: "{}",
        state,
        nextAttemptAt: at,
        createdAt: at,
        lane,
      })),
    });
    const report = await migrate(database);
    expect(report.applied).toContain("0025_effect_interlock_lane");
    const lanes = await database.db.effect.findMany({ select: { key: true, lane: true }, orderBy: { seq: "asc" } });
    // Ranks now: 0 interlock, 1 ownership, 2 waited-for, 3 housekeeping; a finished effect is never claimed again.
    expect(lanes.map((e) => [e.key, e.lane])).toEqual([
      ["label:t1:v2", LANES.indexOf("ownership")],
      ["comment:t1", LANES.indexOf("waited-for")],
      ["delete-branch:t1", LANES.indexOf("housekeeping")],
      ["check-run:t2", LANES.indexOf("housekeeping")],
      ["label:t2:v5", 0],
    ]);
  } finally {
    await database.close();
    await t.drop();
  }
});
