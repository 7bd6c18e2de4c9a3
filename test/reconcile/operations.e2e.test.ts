/**
 * Reconcile as the operator sees it: a dry run that changes nothing on
 * GitHub and reports its plan, and a repository that cannot be read run after
 * run, escalated once and reported recovered, all visible in the sweeps API.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function reconcile() {
    rig.clock.advance(5 * 60_000 + 1000);
    return rig.sweep();
  }
  async function sweeps(query = "") {
    const res = await rig.app.admin(`/api/v1/sweeps${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as {
      failing: Record<string, { since: string; runs: number; error: string; escalatedAt: string | null }>;
      reports: Array<{ kind: string; at: string; counts: Record<string, number>; detail: unknown }>;
    };
  }
  const writes = (from: number) =>
    rig.fake.requests
      .slice(from)
      .filter(
        (r) =>
          r.method !== "GET" &&
          !r.path.endsWith("graphql") &&
          !r.path.includes("/access_tokens") &&
          !r.path.startsWith("/app/"),
      );

  test("dry run changes nothing on GitHub, run after run, and reports the plan", async () => {
    rig = await startRig({ provider, env: { ORCHESTRA_DRY_RUN: "true" } });
    await rig.queue(1);
    // A queue label whose webhook never came, a close that was missed, and a stray label.
    rig.fake.state.addIssue(REPO, { number: 2, title: "Missed", body: "Do it", labels: [], user: "alice" });
    rig.fake.state.labelIssue(REPO, 2, "agent:queued", "alice");
    rig.fake.state.closeIssue(REPO, 1);
    rig.fake.state.addIssue(REPO, { number: 3, title: "Stray", body: "", labels: [], user: "alice" });
    rig.fake.state.labelIssue(REPO, 3, "agent:failed", "alice");
    const from = rig.fake.requests.length;
    await reconcile();
    expect(writes(from).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(rig.labels(1)).toEqual(["agent:queued"]);
    expect(rig.labels(3)).toEqual(["agent:failed"]);
    expect(rig.fake.state.commentsOn(REPO, 2)).toEqual([]);

    const first = (await sweeps("?kind=reconcile")).reports[0]!;
    expect(first.counts).toMatchObject({ queued: 1, closed: 1, cleared: 1, errors: 0 });
    // The plan, effect by effect: what Orchestra would have written.
    const res = await rig.app.admin("/api/v1/effects?state=dry-run");
    const planned = ((await res.json()) as { effects: Array<{ kind: string; note: string | null }> }).effects;
    expect(planned.length).toBeGreaterThan(0);
    expect(planned.every((e) => e.note?.startsWith("would have:"))).toBe(true);
    expect(planned.map((e) => e.kind)).toContain("label");

    // Later runs write nothing either, and do not pile up the same plan again.
    const planSize = async () =>
      ((await (await rig.app.admin("/api/v1/effects?state=dry-run")).json()) as { effects: unknown[] }).effects.length;
    await reconcile();
    await reconcile();
    expect(await planSize()).toBe(planned.length);
    expect(writes(from)).toEqual([]);
  });

  test("a repository that cannot be read is escalated once, however long it fails, and reported recovered", async () => {
    rig = await startRig({ provider });
    await rig.queue(4);
    rig.fake.inject({ method: "POST", path: "graphql", status: 502, body: { message: "Bad gateway" }, times: 4 });
    for (let i = 0; i < 4; i++) await reconcile();
    const failing = await sweeps();
    expect(failing.failing[REPO]).toMatchObject({ runs: 4, escalatedAt: expect.any(String) });
    expect(failing.failing[REPO]!.error).toMatch(/502|Bad gateway/i);
    const escalations = failing.reports.filter((r) => r.kind === "reconcile-escalated");
    expect(escalations).toHaveLength(1);
    expect(escalations[0]!.detail).toMatchObject({ scope: REPO, runs: 3 });
    // Nothing on GitHub: what fails is reading GitHub.
    expect(rig.fake.state.commentsOn(REPO, 4)).toEqual([]);

    await reconcile();
    const after = await sweeps();
    expect(after.failing).toEqual({});
    expect(after.reports.filter((r) => r.kind === "reconcile-escalated")).toHaveLength(1);
    expect(after.reports.filter((r) => r.kind === "reconcile-recovered").map((r) => r.detail)).toEqual([
      { scope: REPO, since: failing.failing[REPO]!.since },
    ]);
    expect((await sweeps("?kind=reconcile&limit=2")).reports).toHaveLength(2);
    expect((await rig.app.admin("/api/v1/sweeps?kind=nope")).status).toBe(400);
  });
});
