/**
 * The executor's lanes: within an installation, the writes that make GitHub
 * tell the truth about who owns a task go before housekeeping. A busy
 * installation has 200 stale branches queued for deletion when a worker
 * claims a task: the claim's `agent:in-progress` label goes out first, and the
 * housekeeping still all gets done. Claims made together tell GitHub who
 * owns each issue before any of them takes `agent:queued` off.
 */
import { randomUUID } from "node:crypto";
import { laneOf } from "../../src/machine/effects.js";
import { eventually } from "../support/orchestra.js";
import { INSTALLATION, REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import type { RecordedRequest } from "../fake-github/index.js";

const STALE = 200;

const isBranchDelete = (r: RecordedRequest) => r.route === "DELETE /repos/{owner}/{repo}/git/refs/{ref}";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test(`with ${STALE} branch deletes pending, a claim's interlock label is the next write`, async () => {
    rig = await startRig({ provider, effects: { start: false } });
    const now = rig.clock.now();
    // The backlog, as released runs leave it: each a branch with nothing ahead of the default branch.
    const rows = Array.from({ length: STALE }, (_, i) => {
      const branch = `agent/stale-${i}`;
      rig.fake.state.addBranch(REPO, branch);
      return {
        id: randomUUID(),
        key: `delete-branch:stale-${i}`,
        installationId: INSTALLATION,
        repo: REPO,
        kind: "delete-branch",
        payload: JSON.stringify({ branch, attempt: 1 }),
        state: "pending",
        nextAttemptAt: now,
        createdAt: now,
        lane: laneOf("delete-branch"),
      };
    });
    await rig.app.database.db.effect.createMany({ data: rows });
    await rig.queue(1);
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(200);

    rig.startEffects();
    await eventually(async () => (rig.labels(1).includes("agent:in-progress") ? true : undefined), 20_000, "label");
    const writes = rig.fake.requests.filter((r) => r.method !== "GET" && !r.path.includes("access_tokens"));
    const label = writes.findIndex((r) => r.method === "POST" && r.path.endsWith("/issues/1/labels"));
    const firstDelete = writes.findIndex(isBranchDelete);
    expect(label).toBeGreaterThanOrEqual(0);
    expect(firstDelete === -1 || label < firstDelete).toBe(true);

    // 200 deletes at the machine's speed, however busy it is: the wait is generous, the outcome the same.
    await rig.settle(180_000);
    expect(rig.labels(1)).toEqual(["agent:in-progress"]);
    const deleted = rig.fake.requests.filter(isBranchDelete);
    expect(deleted).toHaveLength(STALE);
  }, 240_000);

  test("a claim made while finished tasks' label removals wait: its interlock is the next write", async () => {
    rig = await startRig({ provider, effects: { start: false } });
    const now = rig.clock.now();
    // Ownership writes already waiting, as finished tasks leave them when claims outrun GitHub's pace.
    const finished = [11, 12, 13, 14, 15];
    for (const issue of finished)
      rig.fake.state.addIssue(REPO, { number: issue, title: `Done ${issue}`, labels: ["agent:review"], user: "alice" });
    await rig.app.database.db.effect.createMany({
      data: finished.map((issue) => ({
        id: randomUUID(),
        key: `remove-label:done-${issue}`,
        installationId: INSTALLATION,
        repo: REPO,
        kind: "remove-label",
        payload: JSON.stringify({ issue, label: "agent:review" }),
        state: "pending",
        nextAttemptAt: now,
        createdAt: now,
        lane: laneOf("remove-label"),
      })),
    });
    await rig.queue(1);
    expect((await (await rig.worker()).claim()).status).toBe(200);

    rig.startEffects();
    await rig.settle();
    const labelWrites = rig.fake.requests.filter((r) => r.method !== "GET" && /\/issues\/\d+\/labels/.test(r.path));
    expect(labelWrites[0]).toMatchObject({ method: "POST", body: { labels: ["agent:in-progress"] } });
    expect(labelWrites[0]!.path).toMatch(/\/issues\/1\/labels$/);
    expect(rig.labels(1)).toEqual(["agent:in-progress"]);
    for (const issue of finished) expect(rig.labels(issue)).toEqual([]);
  });

  /** The label writes GitHub saw: REST ones by route and issue, a swap request by the issues it names. */
  const labelWrites = () =>
    rig.fake.requests
      .filter(
        (r) =>
          r.graphql?.operationName === "SwapLabels" || (r.method !== "GET" && /\/issues\/\d+\/labels/.test(r.path)),
      )
      .map((r) =>
        r.graphql
          ? `swap ${Object.keys(r.graphql.variables).filter((k) => k.startsWith("issue")).length}`
          : `${r.method} ${r.path.replace(/^.*\/issues\//, "#")}`,
      );

  test("three claims at once: their three swaps (interlock on, queued off) are one request", async () => {
    rig = await startRig({ provider, effects: { start: false } });
    rig.fake.state.addLabel(REPO, "agent:in-progress"); // made by the repository's first claim, long ago
    for (const n of [1, 2, 3]) await rig.queue(n);
    for (const name of ["a", "b", "c"]) expect((await (await rig.worker(name)).claim()).status).toBe(200);

    rig.startEffects();
    await rig.settle();
    // The issues' ids and the queued label's came with the deliveries; the interlock's is read once for all three.
    expect(labelWrites()).toEqual(["swap 3"]);
    expect(rig.fake.requestsFor("issues/get-label")).toHaveLength(1);
    for (const n of [1, 2, 3]) expect(rig.labels(n)).toEqual(["agent:in-progress"]);
    rig.fake.assertNoViolations();
  });

  test("three claims in a repository that never had the interlock: read once, each added by name before a queued label comes off", async () => {
    rig = await startRig({ provider, effects: { start: false } });
    for (const n of [1, 2, 3]) await rig.queue(n);
    for (const name of ["a", "b", "c"]) expect((await (await rig.worker(name)).claim()).status).toBe(200);

    rig.startEffects();
    await rig.settle();
    // No id to swap by (GitHub makes the label with the first add by name): the three performed together read the
    // repository's label once, each adds it by name, and the queued labels come off only after all three are on.
    expect(rig.fake.requestsFor("issues/get-label")).toHaveLength(1);
    const writes = labelWrites();
    expect(writes.slice(0, 3).sort()).toEqual(["POST #1/labels", "POST #2/labels", "POST #3/labels"]);
    expect(writes.slice(3).sort()).toEqual([1, 2, 3].map((n) => `DELETE #${n}/labels/agent%3Aqueued`));
    for (const n of [1, 2, 3]) expect(rig.labels(n)).toEqual(["agent:in-progress"]);
    rig.fake.assertNoViolations();
  });
});
