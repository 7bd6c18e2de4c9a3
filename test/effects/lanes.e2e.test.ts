/**
 * The executor's lanes: within an installation, the writes that make GitHub
 * tell the truth about who owns a task go before housekeeping. A busy
 * installation has 200 stale branches queued for deletion when a worker
 * claims a task: the claim's `agent:in-progress` label goes out first, and the
 * housekeeping still all gets done.
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

    await rig.settle();
    expect(rig.labels(1)).toEqual(["agent:in-progress"]);
    const deleted = rig.fake.requests.filter(isBranchDelete);
    expect(deleted).toHaveLength(STALE);
  });
});
