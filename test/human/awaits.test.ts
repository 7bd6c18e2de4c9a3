/**
 * A close finds the questions waiting on it through one indexed read: an
 * issue closing that no question waits on reads nothing else, however many
 * tasks are claimed or blocked. Questions asked before the upgrade are found
 * the same way (the migration fills the column in).
 */
import pino from "pino";
import { openDatabase, type Database } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { humanQueries, type HumanQueries } from "../../src/human/queries.js";
import { awaitsOf, Questions } from "../../src/human/conditions.js";
import type { Tasks } from "../../src/apply/tasks.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";

const AT = new Date("2026-03-01T12:00:00Z");

describe("awaitsOf", () => {
  test.each<[string, string, string | null]>([
    ["issue-closed:12", "Acme/App", "acme/app#12"],
    ["pr-merged:Acme/Lib#7", "acme/app", "acme/lib#7"],
    ["pr-merged:https://github.com/acme/lib/pull/7", "acme/app", "acme/lib#7"],
    ["pr-merged:https://ghe.example.com/acme/lib/pull/7/", "acme/app", "acme/lib#7"],
    ["npm-version:zod@^4.2.0", "acme/app", null],
    ["when-ready", "acme/app", null],
  ])("%s in %s waits on %s", (condition, repo, want) => {
    expect(awaitsOf(condition, repo)).toBe(want);
  });
});

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let t: TestDb;
  let database: Database;
  afterEach(async () => {
    await database.close();
    await t.drop();
  });

  const task = (id: string, issue: number, state: string) =>
    database.db.task.create({
      data: {
        id,
        installationId: 1,
        repo: "acme/app",
        issue,
        title: "t",
        body: "b",
        state,
        queuedAt: AT,
        branch: `agent/issue-${issue}`,
        createdAt: AT,
        updatedAt: AT,
      },
    });
  const question = (id: string, taskId: string, condition: string, awaits?: string) =>
    database.db.decision.create({
      data: { id, taskId, kind: "question", body: "Wait?", author: "agent", condition, createdAt: AT, awaits },
    });

  /** The App's questions over the real queries, counting every read; raises are recorded, not applied. */
  function questions() {
    const reads: string[] = [];
    const real = humanQueries(database);
    const queries = Object.fromEntries(
      Object.entries(real).map(([name, read]: [string, (...args: unknown[]) => unknown]) => [
        name,
        (...args: unknown[]) => {
          reads.push(name);
          return read(...args);
        },
      ]),
    ) as unknown as HumanQueries;
    const raised: Array<{ taskId: string; decisionId: string }> = [];
    const tasks = {
      raise: (target: { taskId: string }, e: { decisionId: string }) => {
        raised.push({ taskId: target.taskId, decisionId: e.decisionId });
        return Promise.resolve({ outcome: "applied" });
      },
    } as unknown as Tasks;
    const q = new Questions({
      queries,
      tasks,
      githubFor: () => Promise.reject(new Error("no GitHub here")),
      clock: { now: () => AT },
      log: pino({ level: "silent" }),
      npmRegistry: "http://127.0.0.1:9",
    });
    return { q, reads, raised };
  }

  test("an issue nobody waits on reads one index; the questions waiting on a close are met, and no others", async () => {
    t = await testDatabase(provider, { migrated: true });
    database = await openDatabase(t.url, { poolSize: 2 });
    // A fleet of blocked tasks, each waiting on an issue of its own.
    for (let i = 1; i <= 40; i++) {
      await task(`t${i}`, i, i % 2 ? "blocked" : "claimed");
      await question(`q${i}`, `t${i}`, `issue-closed:${100 + i}`, awaitsOf(`issue-closed:${100 + i}`, "acme/app")!);
    }
    await task("done", 50, "done");
    await question("q-done", "done", "issue-closed:101", "acme/app#101");
    await question("q-pr", "t2", "pr-merged:https://github.com/Acme/App/pull/101", "acme/app#101");

    const unrelated = questions();
    expect(await unrelated.q.onClosed("acme/app", 999, false)).toBe(0);
    expect(unrelated.reads).toEqual(["awaiting"]);
    expect(unrelated.raised).toEqual([]);

    // Issue #101 closes: t1's question is met; the done task's is not; a PR condition waits for a merge.
    const closed = questions();
    expect(await closed.q.onClosed("Acme/App", 101, false)).toBe(1);
    expect(closed.raised).toEqual([{ taskId: "t1", decisionId: "q1" }]);
    expect(closed.reads).toEqual(["awaiting", "questionTasks"]);

    // #101 is a pull request and it merged: both the issue and the PR condition are met.
    const merged = questions();
    expect(await merged.q.onClosed("acme/app", 101, true)).toBe(2);
    expect(merged.raised.map((r) => r.decisionId).sort()).toEqual(["q-pr", "q1"]);

    if (provider === "sqlite") {
      const plan = await database.db.$queryRawUnsafe<Array<{ detail: string }>>(
        `EXPLAIN QUERY PLAN SELECT * FROM "Decision" WHERE "awaits" = ? AND "kind" = 'question' AND "answeredAt" IS NULL`,
        "acme/app#999",
      );
      expect(plan.map((p) => p.detail).join("\n")).toContain("Decision_awaits_idx");
    }
  });

  test("questions asked before the upgrade are found by the issue or PR they wait on", async () => {
    t = await testDatabase(provider);
    database = await openDatabase(t.url, { poolSize: 2 });
    await migrate(database, () => {}, { through: "0011_fleet_issue" });
    await task("t1", 1, "blocked");
    const insert = (id: string, condition: string | null, answered = false) =>
      database.db.$executeRawUnsafe(
        `INSERT INTO "Decision" ("id","taskId","kind","body","author","condition","createdAt","answeredAt") ` +
          (provider === "sqlite" ? `VALUES (?,?,?,?,?,?,?,?)` : `VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`),
        id,
        "t1",
        "question",
        "Wait?",
        "agent",
        condition,
        provider === "sqlite" ? AT.getTime() : AT,
        answered ? (provider === "sqlite" ? AT.getTime() : AT) : null,
      );
    await insert("issue", "issue-closed:9");
    await insert("ref", "pr-merged:Acme/Lib#7");
    await insert("url", "pr-merged:https://github.com/acme/lib/pull/8");
    await insert("url-slash", "pr-merged:https://ghe.example.com/acme/lib/pull/10/");
    await insert("npm", "npm-version:zod@^4.2.0");
    await insert("plain", null);
    await insert("answered", "issue-closed:11", true);
    await migrate(database, () => {});
    const rows = await database.db.decision.findMany({ orderBy: { id: "asc" }, select: { id: true, awaits: true } });
    expect(rows).toEqual([
      { id: "answered", awaits: null },
      { id: "issue", awaits: "acme/app#9" },
      { id: "npm", awaits: null },
      { id: "plain", awaits: null },
      { id: "ref", awaits: "acme/lib#7" },
      { id: "url", awaits: "acme/lib#8" },
      { id: "url-slash", awaits: "acme/lib#10" },
    ]);
  });
});
