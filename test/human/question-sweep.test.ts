/**
 * The question-expiry sweep over the real queries: it takes open questions
 * of tasks that wait on them, the longest expired first and a batch at a
 * time, so questions left open by tasks that moved on (rows from before
 * questions closed with their task) never hold a real expiry back. The
 * upgrade closes such rows.
 */
import { openDatabase, type Database } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { humanQueries } from "../../src/human/queries.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";

const AT = new Date("2026-03-01T12:00:00Z");
const DAY = 24 * 3600_000;
const at = (days: number) => new Date(AT.getTime() + days * DAY);

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let t: TestDb;
  let database: Database;
  afterEach(async () => {
    await database.close();
    await t.drop();
  });

  const task = (id: string, issue: number, state: string, runId: string | null = null) =>
    database.db.task.create({
      data: {
        id,
        installationId: 1,
        repo: "acme/app",
        issue,
        title: "t",
        body: "b",
        state,
        runId,
        queuedAt: AT,
        branch: `agent/issue-${issue}`,
        createdAt: AT,
        updatedAt: at(1),
      },
    });
  const question = (id: string, taskId: string, expiresAt: Date, runId: string | null = null) =>
    database.db.decision.create({
      data: { id, taskId, runId, kind: "question", body: `Question ${id}?`, author: "run", createdAt: AT, expiresAt },
    });

  test("a flood of questions whose tasks moved on does not delay a real expiry; real ones go oldest first", async () => {
    t = await testDatabase(provider, { migrated: true });
    database = await openDatabase(t.url, { poolSize: 2 });
    // 60 questions long expired, of tasks that left blocked (review, queued, done) without closing them.
    const states = ["review", "queued", "done"];
    for (let i = 0; i < 60; i++) {
      await task(`z${i}`, 100 + i, states[i % 3]!);
      await question(`zq${i}`, `z${i}`, at(i / 100));
    }
    // Three real ones, expired later than every zombie; one not expired yet.
    await task("b1", 1, "blocked");
    await question("q-late", "b1", at(8));
    await task("b2", 2, "blocked");
    await question("q-early", "b2", at(7));
    await task("c3", 3, "claimed", "r3");
    await question("q-claimed", "c3", at(7.5), "r3");
    await task("b4", 4, "blocked");
    await question("q-future", "b4", at(30));

    const queries = humanQueries(database);
    const now = at(9);
    expect((await queries.expiredQuestions(now, 20)).map((q) => q.id)).toEqual(["q-early", "q-claimed", "q-late"]);
    expect((await queries.expiredQuestions(now, 2)).map((q) => q.id)).toEqual(["q-early", "q-claimed"]);
    expect(await queries.expiredQuestions(at(7.2), 20)).toEqual([
      { id: "q-early", taskId: "b2", body: "Question q-early?", condition: null },
    ]);
    // The conditions sweep reads the same set.
    await question("zq-cond", "z0", at(1)).then(() =>
      database.db.decision.update({ where: { id: "zq-cond" }, data: { condition: "issue-closed:9" } }),
    );
    await database.db.decision.update({ where: { id: "q-late" }, data: { condition: "issue-closed:8" } });
    expect((await queries.conditionQuestions(200)).map((q) => q.id)).toEqual(["q-late"]);
  });

  test("the upgrade closes questions whose task left blocked or whose claimed task's run is another", async () => {
    t = await testDatabase(provider);
    database = await openDatabase(t.url, { poolSize: 2 });
    await migrate(database, () => {}, { through: "0016_run_credentials" });
    await task("review", 1, "review");
    await question("q-review", "review", at(7));
    await task("blocked", 2, "blocked");
    await question("q-blocked", "blocked", at(7));
    await task("claimed", 3, "claimed", "r-now");
    await question("q-live", "claimed", at(7), "r-now");
    await question("q-earlier-run", "claimed", at(7), "r-before");
    const report = await migrate(database, () => {});
    expect(report.applied).toEqual(["0017_questions_close"]);
    const rows = await database.db.decision.findMany({
      orderBy: { id: "asc" },
      select: { id: true, answeredAt: true },
    });
    expect(rows).toEqual([
      { id: "q-blocked", answeredAt: null },
      { id: "q-earlier-run", answeredAt: at(1) },
      { id: "q-live", answeredAt: null },
      { id: "q-review", answeredAt: at(1) },
    ]);
  });
});
