/**
 * The overview's queue with more queued tasks than it reads, on each
 * database: every repository with queued work is listed, each with its own
 * count, whether or not its tasks fall among the first ones read in claim order.
 * The tasks in review and the ones done lately, latest change first.
 */
import { randomUUID } from "node:crypto";
import { Inbox } from "../../src/inbox/store.js";
import { inboxQueries } from "../../src/inbox/queries.js";
import { Outbox } from "../../src/effects/outbox.js";
import { effectsQueries } from "../../src/effects/queries.js";
import { DONE_LISTED, fleetOverview, QUEUE_READ, QUEUE_SHOWN } from "../../src/views/fleet.js";
import { viewsQueries } from "../../src/views/queries.js";
import { eachMigratedDatabase, providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  const each = eachMigratedDatabase(provider);

  test("beyond the tasks read, each repository's queue shows its first tasks and counts the rest", async () => {
    const now = new Date("2026-12-01T12:00:00Z");
    let k = 0;
    const queued = (repo: string, n: number, priority = 1000) =>
      Array.from({ length: n }, (_, i) => {
        const at = new Date(now.getTime() - 86_400_000 + k++ * 1000);
        return {
          id: randomUUID(),
          installationId: 1,
          repo,
          issue: i + 1,
          title: `${repo} ${i + 1}`,
          body: "",
          state: "queued",
          priority,
          queuedAt: at,
          branch: `agent/issue-${i + 1}`,
          blockersAt: at,
          createdAt: at,
          updatedAt: at,
        };
      });
    // acme/a's tasks fill the first QUEUE_READ in claim order; acme/b's all come after them; acme/c's come first (a priority label).
    await each.database.db.task.createMany({
      data: [...queued("acme/a", QUEUE_READ + 10), ...queued("acme/b", 30), ...queued("acme/c", 3, 0)],
    });

    const fleet = await fleetOverview({
      views: viewsQueries(each.database.db),
      inbox: new Inbox(inboxQueries(each.database.db), each.database),
      outbox: new Outbox(effectsQueries(each.database.db), each.database),
      clock: { now: () => now },
    });
    expect(fleet.queue.map((r) => [r.repo, r.tasks.length, r.more])).toEqual([
      ["acme/a", QUEUE_SHOWN, QUEUE_READ + 10 - QUEUE_SHOWN],
      ["acme/b", 0, 30],
      ["acme/c", 3, 0],
    ]);
    expect(fleet.queue.reduce((n, r) => n + r.tasks.length + r.more, 0)).toBe(fleet.counts["queued"]);
    expect(fleet.queue[0]!.tasks.map((q) => q.issue)).toEqual(Array.from({ length: QUEUE_SHOWN }, (_, i) => i + 1));
  });

  test("the tasks in review, and the last DONE_LISTED done, latest change first, each with its pull request", async () => {
    const now = new Date("2026-12-01T12:00:00Z");
    const task = (issue: number, state: string, minutesAgo: number) => {
      const at = new Date(now.getTime() - minutesAgo * 60_000);
      return {
        id: randomUUID(),
        installationId: 1,
        repo: "acme/app",
        issue,
        title: `Issue ${issue}`,
        body: "",
        state,
        prNumber: 100 + issue,
        queuedAt: at,
        branch: `agent/issue-${issue}`,
        createdAt: at,
        updatedAt: at,
      };
    };
    const done = Array.from({ length: DONE_LISTED + 5 }, (_, i) => task(10 + i, "done", 100 - i));
    await each.database.db.task.createMany({
      data: [task(1, "review", 30), task(2, "review", 5), task(3, "failed", 1), ...done],
    });
    const fleet = await fleetOverview({
      views: viewsQueries(each.database.db),
      inbox: new Inbox(inboxQueries(each.database.db), each.database),
      outbox: new Outbox(effectsQueries(each.database.db), each.database),
      clock: { now: () => now },
    });
    expect(fleet.review.map((t) => [t.issue, t.prNumber])).toEqual([
      [2, 102],
      [1, 101],
    ]);
    expect(fleet.done.map((t) => t.issue)).toEqual(
      done
        .map((t) => t.issue)
        .reverse()
        .slice(0, DONE_LISTED),
    );
    expect(fleet.counts["done"]).toBe(DONE_LISTED + 5);
  });
});
