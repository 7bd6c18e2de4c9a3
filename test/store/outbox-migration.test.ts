/**
 * Upgrading a database from before the outbox: comments already posted keep
 * their keys (never posted again), and label writes that had not reached
 * GitHub become label effects, on both providers.
 */
import { openDatabase } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { providers, testDatabase } from "../support/databases.js";

test.each(providers.map((p) => [p]))("%s: notices and unsynced labels carry over into the outbox", async (provider) => {
  const t = await testDatabase(provider);
  const database = await openDatabase(t.url, { poolSize: 2 });
  try {
    await migrate(database, () => {}, { through: "0004_run_recovery" });
    const db = database.db;
    const bool = (b: boolean) => (provider === "sqlite" ? (b ? 1 : 0) : b);
    const at = provider === "sqlite" ? Date.parse("2026-01-02T03:04:05Z") : new Date("2026-01-02T03:04:05Z");
    await db.$executeRawUnsafe(
      `INSERT INTO "Notice" ("key", "createdAt") VALUES ('escalation:r1:phantom', $1)`.replace(
        "$1",
        provider === "sqlite" ? "?" : "$1",
      ),
      at,
    );
    for (const [id, issue, label, synced] of [
      ["t1", 1, "agent:review", false],
      ["t2", 2, "agent:queued", true],
      ["t3", 3, null, false],
    ] as const) {
      const cols = `"id","installationId","repo","issue","title","body","state","queuedAt","branch","label","labelSynced","labelOnGitHub","version","createdAt","updatedAt"`;
      const marks =
        provider === "sqlite"
          ? Array(15).fill("?").join(",")
          : Array.from({ length: 15 }, (_, i) => `$${i + 1}`).join(",");
      await db.$executeRawUnsafe(
        `INSERT INTO "Task" (${cols}) VALUES (${marks})`,
        id,
        7,
        "acme/app",
        issue,
        "t",
        "",
        "review",
        at,
        `agent/issue-${issue}`,
        label,
        bool(synced),
        "agent:in-progress",
        4,
        at,
        at,
      );
    }
    const report = await migrate(database);
    expect(report.applied).toContain("0005_outbox");
    const effects = await db.effect.findMany({ orderBy: { key: "asc" } });
    expect(effects.map((e) => [e.key, e.kind, e.state, e.taskId])).toEqual([
      ["escalation:r1:phantom", "comment", "done", null],
      ["label:t1:v4", "label", "pending", "t1"],
      ["label:t3:v4", "label", "pending", "t3"],
    ]);
    expect(JSON.parse(effects[1]!.payload)).toEqual({
      issue: 1,
      label: "agent:review",
      others: ["agent:queued", "agent:in-progress", "agent:review", "agent:blocked", "agent:failed"],
    });
    expect(JSON.parse(effects[2]!.payload)).toMatchObject({ issue: 3, label: null });
    expect(effects[1]).toMatchObject({ installationId: 7, repo: "acme/app" });
    expect(await db.task.count()).toBe(3);
  } finally {
    await database.close();
    await t.drop();
  }
});
