/**
 * Releasing a run before its agent started (preflight failed), end to end:
 * the task is queued again at once with no attempt used, no class and its
 * label back to queued through the outbox; a stale epoch is refused; the
 * repository's breaker never counts releases. A worker that keeps releasing,
 * or keeps dying with its leases, is paused: its claims say why and what to
 * do, the operator sees it (API and CLI) and resumes it.
 */
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { childEnv } from "../support/cli.js";
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { onceForAll, providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  const anyDb = onceForAll(provider);
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const release = (w: WorkerClient, run: { id: string; leaseEpoch: string }, reason: string, key?: string) =>
    w.call(
      "POST",
      `/api/v1/runs/${run.id}/release`,
      { leaseEpoch: run.leaseEpoch, reason },
      key ? { "idempotency-key": key } : {},
    );
  const listed = async (id: string) => {
    const res = await rig.app.admin("/api/v1/workers");
    return ((await res.json()) as { workers: Array<{ id: string; paused: unknown }> }).workers.find(
      (x) => x.id === id,
    )!;
  };

  test("a released run queues its task at once: no attempt used, no class, label back to queued; a stale epoch is 409", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    const w = await rig.worker();
    const first = (await w.claim()).body.run;
    expect(first.attempt).toBe(1);
    expect(rig.labels(1)).toEqual(["agent:in-progress"]);

    const stale = await release(w, { id: first.id, leaseEpoch: "not-the-epoch" }, "clone failed");
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ reason: "stale-epoch", retryable: false });
    expect((await rig.task(1)).task.state).toBe("claimed");

    const r = await release(w, first, "clone failed: no space left on device", "release-1");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      outcome: "released",
      task: { id: expect.any(String), state: "queued" },
      run: { id: first.id, attempt: 1, state: "released" },
      paused: null,
    });
    // The same call again under its Idempotency-Key: the same answer, nothing released twice.
    const again = await release(w, first, "clone failed: no space left on device", "release-1");
    expect(again).toEqual(r);
    // Without the key it is a lease that is gone.
    expect((await release(w, first, "clone failed")).body).toMatchObject({ reason: "released" });
    // Heartbeats on it are refused the same way.
    expect((await w.heartbeat(first.id, first.leaseEpoch)).body).toMatchObject({ reason: "released" });

    const t = await rig.task(1);
    expect(t.task).toMatchObject({ state: "queued", attempt: 0 });
    expect(t.runs[0]).toMatchObject({
      state: "released",
      class: null,
      recovery: null,
      endReason: "released before its agent started: clone failed: no space left on device",
    });
    expect(rig.labels(1)).toEqual(["agent:queued"]);
    expect(t.cost.attempts).toBe(0);

    // The next claim is the same attempt again.
    const second = (await w.claim()).body.run;
    expect(second.id).not.toBe(first.id);
    expect(second.attempt).toBe(1);
    expect(second.continuation).toBeNull();
  });

  test("releases never count towards the repository's breaker", async () => {
    rig = await startRig({ provider });
    rig.config("breaker:\n  failures: 2\n");
    for (const issue of [1, 2, 3, 4]) await rig.queue(issue);
    // Two workers, so that neither is paused: the point here is the repository.
    const workers = [await rig.worker("a"), await rig.worker("b")];
    for (let i = 0; i < 4; i++) {
      const w = workers[i % 2]!;
      const run = (await w.claim()).body.run;
      expect((await release(w, run, "agent binary missing")).status).toBe(200);
    }
    await rig.sweep();
    const repo = await rig.app.database.db.repo.findUnique({ where: { id: REPO } });
    expect(repo?.breakerUntil ?? null).toBeNull();
    expect((await workers[0]!.claim()).status).toBe(200);
  });

  test("three releases within ten minutes pause the worker; its claims say why and what to do; resume lifts it", async () => {
    rig = await startRig({ provider });
    for (const issue of [1, 2]) await rig.queue(issue);
    const w = await rig.worker("laptop");
    for (const n of [1, 2, 3]) {
      rig.clock.advance(60_000);
      const run = (await w.claim()).body.run;
      const r = await release(w, run, `disk full (${n})`);
      expect(r.status).toBe(200);
      expect(r.body.paused).toEqual(n < 3 ? null : { until: expect.any(String), reason: expect.any(String) });
    }
    const claim = await w.claim();
    expect(claim.status).toBe(409);
    expect(claim.body).toMatchObject({ reason: "paused", retryable: false, pausedUntil: expect.any(String) });
    expect(claim.body.error ?? claim.body.message).toEqual(expect.stringContaining("3 runs released"));
    const text = JSON.stringify(claim.body);
    expect(text).toContain("disk full (3)");
    expect(text).toContain(`orchestra workers resume ${w.id}`);
    expect((await listed(w.id)).paused).toMatchObject({ reason: expect.stringContaining("within 10 minutes") });
    // Nothing was claimed meanwhile: the tasks wait for another worker.
    expect((await rig.task(1)).task.state).toBe("queued");
    expect((await rig.task(2)).task.state).toBe("queued");

    const resumed = await rig.app.admin(`/api/v1/workers/${w.id}/resume`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(resumed.status).toBe(200);
    expect(await resumed.json()).toMatchObject({ id: w.id, name: "laptop", wasPaused: { until: expect.any(String) } });
    expect((await listed(w.id)).paused).toBeNull();
    // Releases before the resume no longer count: one more does not pause it again.
    const run = (await w.claim()).body.run;
    expect((await release(w, run, "disk full (4)")).body.paused).toBeNull();
    expect((await w.claim()).status).toBe(200);

    const unknown = await rig.app.admin(`/api/v1/workers/nope/resume`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unknown.status).toBe(404);
  });

  test("a pause runs out by itself; releases spread wider than the window never pause", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    const w = await rig.worker();
    for (const n of [1, 2, 3]) {
      rig.clock.advance(6 * 60_000); // the first is out of the window by the third
      const run = (await w.claim()).body.run;
      expect((await release(w, run, `clone failed (${n})`)).body.paused).toBeNull();
    }
    const run = (await w.claim()).body.run;
    expect((await release(w, run, "clone failed (4)")).body.paused).not.toBeNull();
    expect((await w.claim()).status).toBe(409);
    rig.clock.advance(30 * 60_000 + 1_000);
    expect((await w.claim()).status).toBe(200);
  });

  test("a worker whose leases keep expiring without an exit is paused too", async () => {
    rig = await startRig({ provider });
    for (const issue of [1, 2, 3]) await rig.queue(issue);
    const w = await rig.worker("flaky");
    for (let i = 0; i < 3; i++) expect((await w.claim()).status).toBe(200);
    rig.clock.advance(301_000);
    expect(await rig.sweep()).toMatchObject({ expired: 3 });
    const claim = await w.claim();
    expect(claim.status).toBe(409);
    expect(claim.body.reason).toBe("paused");
    expect(JSON.stringify(claim.body)).toContain("3 leases lost without an exit");
  });

  describe("the CLI", () => {
    const run = promisify(execFile);
    const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");
    const cli = (...args: string[]) =>
      run(process.execPath, [bin, ...args], {
        cwd: tmpdir(),
        env: childEnv({ ORCHESTRA_URL: rig.app.url, ORCHESTRA_ADMIN_TOKEN: rig.app.adminToken }),
      });

    anyDb("orchestra workers shows the pause and why; orchestra workers resume <id> lifts it", async () => {
      rig = await startRig({ provider });
      await rig.queue(1);
      const w = await rig.worker("laptop");
      for (let i = 0; i < 3; i++) await release(w, (await w.claim()).body.run, "agent binary missing");
      const table = (await cli("workers")).stdout;
      expect(table).toContain(`paused ${w.id} (laptop): 3 runs released before the agent started within 10 minutes`);
      expect(table).toContain(`orchestra workers resume ${w.id}`);
      const out = (await cli("workers", "resume", w.id)).stdout;
      expect(out).toContain(`worker ${w.id} (laptop) resumed: it may claim again`);
      expect((await cli("workers")).stdout).not.toContain("paused ");
      expect((await w.claim()).status).toBe(200);
    });
  });
});
