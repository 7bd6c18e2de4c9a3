/**
 * A suspended installation, or a repository removed from it, pauses its
 * tasks instead of cancelling them for good: nothing is claimed there, a live
 * run's lease is revoked (it could not push) and its task queued again
 * uncharged, GitHub writes wait. Unsuspending, or adding the repository
 * back, resumes them where they were. GitHub's own example payloads.
 */
import { INSTALLATION, REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { fakeWebhookPayload } from "../support/webhooks.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  let w: WorkerClient;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  function installationEvent(action: "suspend" | "unsuspend") {
    const inst = rig.fake.state.installations.get(INSTALLATION)!;
    return fakeWebhookPayload(
      rig.fake,
      "installation",
      action,
      { repo: REPO, sender: "alice" },
      { installation: rig.fake.json.installation(inst), repositories: undefined },
    );
  }

  function repositoriesEvent(action: "added" | "removed") {
    const r = rig.fake.json.repo(rig.fake.state.repo(REPO)) as Record<string, unknown>;
    const listed = [{ id: r["id"], node_id: r["node_id"], name: r["name"], full_name: r["full_name"], private: false }];
    const inst = rig.fake.state.installations.get(INSTALLATION)!;
    return fakeWebhookPayload(
      rig.fake,
      "installation_repositories",
      action,
      { repo: REPO, sender: "alice" },
      {
        installation: rig.fake.json.installation(inst),
        repositories_added: action === "added" ? listed : [],
        repositories_removed: action === "removed" ? listed : [],
      },
    );
  }

  /** Issue 1 claimed by a live run, issue 2 queued behind it. */
  async function twoTasks(): Promise<{ id: string; leaseEpoch: string }> {
    rig = await startRig({ provider });
    w = await rig.worker();
    await rig.queue(1);
    const claim = await w.claim();
    expect(claim.body.task.issue).toBe(1);
    await rig.queue(2);
    return claim.body.run;
  }

  async function expectPaused(detail: string): Promise<void> {
    for (const issue of [1, 2]) {
      const t = await rig.task(issue);
      expect(t.task).toMatchObject({ state: "queued", attempt: 0, lease: null, waitingFor: { gate: "access" } });
      expect(t.task.waitingFor.detail).toContain(detail);
      expect(t.task.diagnostic).toMatch(/^paused: /);
      expect(rig.fake.state.commentsOn(REPO, issue)).toHaveLength(0);
    }
    expect((await w.claim()).status).toBe(204);
  }

  /** Resumed: GitHub shows the queue label again, and the interrupted task is claimed first, resuming its branch. */
  async function expectResumed(): Promise<void> {
    await rig.settle();
    expect(rig.labels(1)).toEqual(["agent:queued"]);
    const t = await rig.task(1);
    expect(t.task.diagnostic).toBeNull();
    expect(t.task.waitingFor).toBeUndefined();
    const next = await w.claim();
    expect(next.status).toBe(200);
    expect(next.body.task.issue).toBe(1);
    expect(next.body.run).toMatchObject({ attempt: 1, continuation: { kind: "resume" } });
    expect((await w.claim()).body.task.issue).toBe(2);
  }

  test("a suspended installation pauses its tasks; unsuspending resumes them", async () => {
    const run = await twoTasks();
    const inst = rig.fake.state.installations.get(INSTALLATION)!;
    inst.suspendedAt = rig.clock.now();
    // GitHub refuses the suspended installation's tokens, the ones it minted earlier too.
    const writes = rig.fake.requests.length;
    await rig.deliverPayload("installation", installationEvent("suspend"));
    await expectPaused("installation is suspended");
    const t = await rig.task(1);
    expect(t.runs[0]).toMatchObject({ state: "revoked" });
    expect((await w.heartbeat(run.id, run.leaseEpoch)).body).toMatchObject({ reason: "revoked" });
    // Sweeps leave it alone and nothing is written meanwhile; the label swap waits.
    for (let i = 0; i < 3; i++) {
      rig.clock.advance(3600_000);
      await rig.sweep();
    }
    expect((await rig.task(1)).task.state).toBe("queued");
    expect(rig.writesSince(writes)).toEqual([]);
    expect(rig.labels(1)).toEqual(["agent:in-progress"]);

    inst.suspendedAt = null;
    await rig.deliverPayload("installation", installationEvent("unsuspend"));
    await expectResumed();
  });

  test("a repository removed from the installation pauses its tasks; added back, they resume", async () => {
    await twoTasks();
    const repo = rig.fake.state.repo(REPO);
    repo.installationId = null;
    const writes = rig.fake.requests.length;
    await rig.deliverPayload("installation_repositories", repositoriesEvent("removed"));
    await expectPaused("removed from the App's installation");
    expect((await rig.task(1)).task.state).not.toBe("cancelled");
    rig.clock.advance(3600_000);
    await rig.sweep();
    expect(rig.writesSince(writes)).toEqual([]);

    repo.installationId = INSTALLATION;
    await rig.deliverPayload("installation_repositories", repositoriesEvent("added"));
    await expectResumed();
  });
});
