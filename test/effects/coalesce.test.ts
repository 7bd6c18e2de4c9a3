/**
 * Coalescing over the real databases: which older effects of a coalescing
 * key a newly recorded one drops (src/apply/coalesce.ts), and which newer
 * effect makes the executor drop one it claimed (Outbox.supersededBy).
 */
import { randomUUID } from "node:crypto";
import { openDatabase, type Database } from "../../src/store/db.js";
import { atomically } from "../../src/store/sql.js";
import { supersedeSteps } from "../../src/apply/coalesce.js";
import { effectsQueries } from "../../src/effects/queries.js";
import { Outbox, type OutboxEffect } from "../../src/effects/outbox.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";

const NOW = new Date("2026-03-01T12:00:00Z");
const at = (s: number) => new Date(NOW.getTime() + s * 1000);
const KEY = "fleet-issue:acme/app";

type Row = { key: string; state: string; due?: Date; attempts?: number; created?: Date; coalesceKey?: string | null };

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let t: TestDb;
  let database: Database;
  beforeEach(async () => {
    t = await testDatabase(provider, { migrated: true });
    database = await openDatabase(t.url, { poolSize: 2 });
  });
  afterEach(async () => {
    await database.close();
    await t.drop();
  });

  /** Rows in this order (seq rising), all of `KEY` unless they say. */
  async function record(rows: Row[]): Promise<void> {
    for (const r of rows)
      await database.db.effect.create({
        data: {
          id: randomUUID(),
          key: r.key,
          installationId: 1,
          repo: "acme/app",
          kind: "fleet-issue",
          payload: "{}",
          state: r.state,
          attempts: r.attempts ?? 0,
          nextAttemptAt: r.due ?? NOW,
          createdAt: r.created ?? NOW,
          coalesceKey: r.coalesceKey === undefined ? KEY : r.coalesceKey,
        },
      });
  }
  const states = async () =>
    Object.fromEntries(
      (await database.db.effect.findMany({ orderBy: { seq: "asc" } })).map((e) => [
        e.key,
        `${e.state} ${e.note ?? ""}`,
      ]),
    );

  const createdOf = async (key: string) => (await database.db.effect.findUnique({ where: { key } }))!.createdAt;

  test("a new effect due now drops every older pending one of its key, and nothing else", async () => {
    await record([
      { key: "due-now", state: "pending", created: at(-60) },
      { key: "retrying", state: "pending", due: at(600), attempts: 2, created: at(-30) },
      { key: "in-flight", state: "running", created: at(-90) },
      { key: "done", state: "done" },
      { key: "other-key", state: "pending", coalesceKey: "fleet-issue:acme/other" },
      { key: "uncoalesced", state: "pending", coalesceKey: null },
      { key: "new", state: "pending" },
      { key: "newer", state: "pending" },
    ]);
    await atomically(database, supersedeSteps(KEY, "new", NOW, NOW));
    expect(await states()).toEqual({
      "due-now": "dropped superseded by effect new",
      retrying: "dropped superseded by effect new",
      "in-flight": "running ",
      done: "done ",
      "other-key": "pending ",
      uncoalesced: "pending ",
      new: "pending ",
      newer: "pending ",
    });
    // It takes the place in line of the oldest it dropped (not of the one in flight).
    expect(await createdOf("new")).toEqual(at(-60));
    expect(await createdOf("newer")).toEqual(NOW);
  });

  test("a debounced effect due later drops only those that would not go out before it", async () => {
    await record([
      { key: "earlier-window", state: "pending", due: at(30) },
      { key: "retrying-later", state: "pending", due: at(900), attempts: 1, created: at(-45) },
      { key: "next-window", state: "pending", due: at(90) },
    ]);
    await atomically(database, supersedeSteps(KEY, "next-window", at(90), NOW));
    expect(await states()).toEqual({
      "earlier-window": "pending ",
      "retrying-later": "dropped superseded by effect next-window",
      "next-window": "pending ",
    });
    expect(await createdOf("next-window")).toEqual(at(-45));
  });

  test.each([
    ["done", NOW, "newer"],
    ["running", NOW, "newer"],
    ["dropped", NOW, "newer"],
    ["pending", NOW, "newer"],
    ["pending", at(60), null],
  ])("a claimed effect behind a newer one %s (due %s) is superseded by: %s", async (state, due, expected) => {
    await record([
      { key: "claimed", state: "running", attempts: 2 },
      { key: "newer", state, due },
    ]);
    const outbox = new Outbox(effectsQueries(database.db), database);
    const row = (await database.db.effect.findUnique({ where: { key: "claimed" } }))!;
    const claimed = { seq: row.seq, coalesceKey: row.coalesceKey } as OutboxEffect;
    expect(await outbox.supersededBy(claimed, NOW)).toBe(expected);
    expect(await outbox.supersededBy({ ...claimed, coalesceKey: null }, NOW)).toBeNull();
  });
});
