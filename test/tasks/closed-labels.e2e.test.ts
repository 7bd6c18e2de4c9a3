/**
 * A closed issue keeps no agent:* label, also when Orchestra has no task for
 * it (labels set before the App was installed, or by hand while it was
 * down): the close event's own payload shows them, so they go at once.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const labelWrites = (from: number) =>
    rig.fake.requests.slice(from).filter((r) => r.method !== "GET" && r.path.includes("/labels"));

  test("closing an issue Orchestra has no task for takes its stale agent:* labels off at once, and only those", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addIssue(REPO, { number: 30, labels: ["agent:in-progress", "Agent:Review", "bug"] });
    rig.fake.state.closeIssue(REPO, 30, "not_planned");
    await rig.deliver("issues", "closed", { issue: 30, sender: "alice" });
    expect(rig.fake.state.labelsOf(REPO, 30)).toEqual(["bug"]);
    expect(await rig.app.database.db.task.count({ where: { issue: 30 } })).toBe(0);

    // The same delivery again writes nothing more; an issue without agent labels gets no write at all.
    const before = rig.fake.requests.length;
    rig.fake.state.addIssue(REPO, { number: 31, labels: ["bug"] });
    rig.fake.state.closeIssue(REPO, 31, "completed");
    await rig.deliver("issues", "closed", { issue: 31, sender: "alice" });
    expect(labelWrites(before)).toEqual([]);
    expect(rig.fake.state.labelsOf(REPO, 31)).toEqual(["bug"]);
  });

  test("a cancelled task's closed issue loses an agent label put back by hand", async () => {
    rig = await startRig({ provider });
    await rig.queue(32);
    rig.fake.state.closeIssue(REPO, 32, "not_planned");
    await rig.deliver("issues", "closed", { issue: 32, sender: "alice" });
    expect((await rig.task(32)).task.state).toBe("cancelled");
    expect(rig.labels(32)).toEqual([]);
    // Reopened, labelled agent:blocked by an admin's script that the App does not see, closed again.
    rig.fake.state.setIssueState(rig.fake.state.issue(REPO, 32), "open", null);
    rig.fake.state.labelIssue(REPO, 32, "agent:blocked", "ops-script");
    rig.fake.state.closeIssue(REPO, 32, "not_planned");
    await rig.deliver("issues", "closed", { issue: 32, sender: "alice" });
    expect(rig.labels(32)).toEqual([]);
  });
});
