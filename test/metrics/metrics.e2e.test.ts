/**
 * `/metrics` through the real server: the text is valid exposition format
 * line by line, the figures move as a task goes through its life, the token
 * guards the endpoint when it is set, and `/ready` names a stale sweep.
 */
import { INSTALLATION, REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { parseExposition, sumOf, valueOf } from "./exposition.js";

const TOKEN = "metrics-token-".padEnd(40, "x");

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** A scrape past the collector's 5 s cache (the App's clock moves), parsed. */
  async function scrape(token?: string) {
    rig.clock.advance(5_001);
    const res = await fetch(rig.app.url + "/metrics", token ? { headers: { authorization: `Bearer ${token}` } } : {});
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text()).samples;
  }

  test("a task's life moves the counters and gauges", async () => {
    rig = await startRig({ provider });
    const m0 = await scrape();
    expect(valueOf(m0, "orchestra_deliveries_received_total")).toBe(0);
    expect(valueOf(m0, "orchestra_claim_duration_seconds_count")).toBe(0);
    expect(sumOf(m0, "orchestra_tasks")).toBe(0);
    // prom-client's process metrics are there, under the prefix.
    expect(m0.some((s) => s.name === "orchestra_process_cpu_user_seconds_total")).toBe(true);
    expect(m0.some((s) => s.name === "orchestra_nodejs_heap_size_used_bytes")).toBe(true);

    await rig.queue(1);
    const m1 = await scrape();
    expect(valueOf(m1, "orchestra_deliveries_received_total")).toBe(1);
    expect(valueOf(m1, "orchestra_tasks", { state: "queued", repo: REPO })).toBe(1);
    expect(valueOf(m1, "orchestra_deliveries", { state: "done" })).toBe(1);
    expect(valueOf(m1, "orchestra_deliveries", { state: "retrying" })).toBe(0);
    expect(valueOf(m1, "orchestra_inbox_lag_seconds")).toBe(0);
    expect(valueOf(m1, "orchestra_delivery_processing_seconds_count")).toBe(1);
    expect(valueOf(m1, "orchestra_effects", { state: "done", kind: "label" })).toBeGreaterThanOrEqual(1);

    const w = await rig.worker("laptop");
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    expect((await w.claim()).status).toBe(204);
    const m2 = await scrape();
    expect(valueOf(m2, "orchestra_claim_duration_seconds_count")).toBe(2);
    expect(valueOf(m2, "orchestra_tasks", { state: "claimed", repo: REPO })).toBe(1);
    expect(valueOf(m2, "orchestra_tasks", { state: "queued", repo: REPO })).toBe(0);
    const installation = String(INSTALLATION);
    expect(valueOf(m2, "orchestra_github_calls_total", { installation, kind: "write" })).toBeGreaterThan(
      valueOf(m1, "orchestra_github_calls_total", { installation, kind: "write" }),
    );
    expect(valueOf(m2, "orchestra_github_rate_limit_remaining", { installation })).toBe(4999);

    const { id: runId, leaseEpoch } = claim.body.run;
    const head = rig.fake.state.addBranch(REPO, "agent/issue-1", { aheadBy: 2 });
    const pr = rig.fake.state.addPull(REPO, {
      head: "agent/issue-1",
      title: "Thing 1",
      body: "Closes #1",
      user: "agent-bot",
    });
    expect(
      (await w.exit(runId, { leaseEpoch, exitCode: 0, branch: "agent/issue-1", headSha: head, testsPassed: true }))
        .status,
    ).toBe(200);
    const opened = await rig.deliver("pull_request", "opened", { pull: pr.number, sender: "agent-bot" });
    // GitHub sends the same delivery again: stored once, counted as a duplicate.
    await rig.deliver("pull_request", "opened", { pull: pr.number, sender: "agent-bot" }, {}, opened);
    rig.fake.state.mergePull(REPO, pr.number, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: pr.number, sender: "alice" });
    await rig.deliver("issues", "closed", { issue: 1, sender: "alice" });

    const m3 = await scrape();
    expect(valueOf(m3, "orchestra_deliveries_received_total")).toBe(4);
    expect(valueOf(m3, "orchestra_deliveries_deduplicated_total")).toBe(1);
    expect(valueOf(m3, "orchestra_tasks", { state: "done", repo: REPO })).toBe(1);
    expect(sumOf(m3, "orchestra_tasks")).toBe(1);
    expect(valueOf(m3, "orchestra_delivery_processing_seconds_count")).toBe(4);
    expect(sumOf(m3, "orchestra_effects", { state: "done" })).toBeGreaterThan(
      sumOf(m1, "orchestra_effects", { state: "done" }),
    );
    expect(sumOf(m3, "orchestra_effects", { state: "pending" })).toBe(0);
  });

  test("a lease that runs out is counted when the sweep expires it, and the sweep's last success is exported", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    // A label from someone without write access is an ignored input.
    await rig.queue(2, "eve");
    const w = await rig.worker("laptop");
    expect((await w.claim()).status).toBe(200);
    const before = await scrape();
    expect(valueOf(before, "orchestra_lease_expiries_total")).toBe(0);
    expect(valueOf(before, "orchestra_ignored_inputs", { reason: "untrusted-label" })).toBe(1);
    rig.clock.advance(24 * 3_600_000);
    const advancedTo = rig.clock.now().getTime();
    const report = await rig.sweep();
    expect(report.expired).toBe(1);
    const after = await scrape();
    expect(valueOf(after, "orchestra_lease_expiries_total")).toBe(1);
    const last = valueOf(after, "orchestra_sweep_last_success_timestamp_seconds", { sweep: "sweep" });
    expect(last * 1000).toBeGreaterThan(advancedTo - 1000);
  });

  test("with ORCHESTRA_METRICS_TOKEN set, a scrape without it or with another gets 401", async () => {
    rig = await startRig({ provider, env: { ORCHESTRA_METRICS_TOKEN: TOKEN } });
    const none = await fetch(rig.app.url + "/metrics");
    expect(none.status).toBe(401);
    expect(await none.text()).toContain("ORCHESTRA_METRICS_TOKEN");
    const admin = await fetch(rig.app.url + "/metrics", { headers: { authorization: `Bearer ${rig.app.adminToken}` } });
    expect(admin.status).toBe(401);
    const samples = await scrape(TOKEN);
    expect(samples.some((s) => s.name === "orchestra_deliveries_received_total")).toBe(true);
  });

  test("/ready says degraded, still 200, when the sweep loop has not succeeded for ten intervals", async () => {
    rig = await startRig({ provider });
    const ready = async (token?: string) => {
      const res = await fetch(rig.app.url + "/ready", token ? { headers: { authorization: `Bearer ${token}` } } : {});
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    expect((await ready()).body.status).toBe("ready");
    // The rig's sweep interval is an hour: ten of them pass without a sweep.
    rig.clock.advance(10 * 3_600_000 + 60_000);
    const pub = await ready();
    expect(pub).toEqual({
      status: 200,
      body: { status: "degraded", database: provider, mode: "app", stale: ["sweep"] },
    });
    const admin = await ready(rig.app.adminToken);
    expect(admin.body.detail.staleSweeps).toEqual([
      { sweep: "sweep", lastSuccessAt: expect.any(String), thresholdMs: 36_000_000 },
    ]);
    await rig.sweep();
    expect(await ready()).toEqual({ status: 200, body: { status: "ready", database: provider, mode: "app" } });
  });
});
