/**
 * A supported host without a feature Orchestra uses, end to end: the fake
 * GitHub plays GitHub Enterprise Server 3.17 from its own REST description
 * (no issue-dependencies routes: GitHub's 404; GET /meta saying 3.17.4;
 * issues and payloads without `issue_dependencies_summary`). Queued tasks are
 * claimed by a worker — no dependency gate, the documented fallback — and the
 * gap is said once: one log line, `/ready`'s detail, the dashboard. Evidence
 * is positive only: GitHub's 5xx is never read as "not on this host".
 */
import { gapOf } from "../../src/github/hosts.js";
import { startFakeGitHub, type FakeGitHub } from "../fake-github/index.js";
import { providers } from "../support/databases.js";
import { furnish, REPO, type Rig, startRig } from "../support/lifecycle-rig.js";

const FALLBACK = gapOf("issue-dependencies").fallback;
const LOGGED = `GitHub host lacks issue dependencies: ${FALLBACK}`;

async function ghes(installedVersion = "3.17.4"): Promise<FakeGitHub> {
  return furnish(await startFakeGitHub({ host: "ghes-3.17", installedVersion }));
}

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
    await rig.fake.close();
  });

  const readyDetail = async () =>
    ((await (await rig.app.admin("/ready")).json()) as { detail: { github: unknown } }).detail.github;
  const logged = () => rig.app.logs.filter((l) => l["msg"] === LOGGED);
  const dashboard = async () => {
    const signIn = await fetch(`${rig.app.url}/dashboard/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: rig.app.adminToken, next: "/dashboard" }).toString(),
      redirect: "manual",
    });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    return (await fetch(`${rig.app.url}/dashboard`, { headers: { cookie } })).text();
  };

  test("GHES 3.17: queued tasks are claimed without a dependency gate; the fallback is said once, in the log, /ready and the dashboard", async () => {
    rig = await startRig({ provider, fake: await ghes() });
    expect(await readyDetail()).toEqual({ host: "not read yet", fallbacks: [] });
    const before = rig.clock.now().getTime();
    for (const n of [1, 2, 3]) await rig.queue(n);
    const queued = rig.clock.now().getTime();
    // The payloads carried no dependency summary, as on GHES 3.17: the host was asked its release, once.
    expect(rig.fake.requestsFor("meta/get")).toHaveLength(1);
    expect(rig.fake.hostGaps).toEqual([]); // the dependencies route was never sent, knowing it is not there
    expect(logged()).toHaveLength(1);
    expect(logged()[0]).toMatchObject({
      level: 40,
      feature: "issue-dependencies",
      host: "GitHub Enterprise Server 3.17.4",
    });

    const w = await rig.worker();
    for (const n of [1, 2, 3]) expect((await rig.task(n)).task.waitingFor).toBeUndefined();
    const claimed = await Promise.all([w.claim(), w.claim(), w.claim()]);
    expect(claimed.map((c) => [c.status, c.body.task.issue]).sort()).toEqual([
      [200, 1],
      [200, 2],
      [200, 3],
    ]);
    // Nothing left for the sweep: no task waits on blockers it can never read.
    expect((await rig.sweep()).blockersRead).toBe(0);

    expect(await readyDetail()).toEqual({
      host: "GitHub Enterprise Server 3.17.4",
      fallbacks: [
        {
          feature: "issue-dependencies",
          fallback: FALLBACK,
          evidence: "GitHub Enterprise Server 3.17.4 (GET /meta): it came in GHES 3.19",
          since: expect.any(String),
        },
      ],
    });
    // Found with the first task's blockers.
    const since = Date.parse(((await readyDetail()) as { fallbacks: Array<{ since: string }> }).fallbacks[0]!.since);
    expect(since >= before && since <= queued).toBe(true);
    const page = await dashboard();
    expect(page).toContain("<p>GitHub Enterprise Server 3.17.4</p>");
    expect(page.split("no dependency gate").length - 1).toBe(1);
    expect(page).toContain("<td>issue dependencies</td>");
    expect(logged()).toHaveLength(1);
  });

  test("GHES release unknown: a 502 is no evidence (the task waits, the sweep asks again); GitHub's 404 for an issue that exists is, once", async () => {
    rig = await startRig({ provider, fake: await ghes() });
    rig.fake.inject({ path: "meta/get", status: 502, times: Infinity });
    rig.fake.inject({ path: "issues/list-dependencies-blocked-by", status: 502, times: 1 });
    await rig.queue(1);
    expect((await rig.task(1)).task.waitingFor).toMatchObject({ gate: "blockers-unread" });
    expect((await readyDetail()) as object).toMatchObject({ fallbacks: [] });
    expect(logged()).toEqual([]);
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(204);

    // The sweep reads them again: the route's 404 for an issue GitHub shows exists is the host's gap.
    expect((await rig.sweep()).blockersRead).toBe(1);
    expect(rig.fake.hostGaps.map((q) => q.path)).toEqual([
      `/repos/${REPO}/issues/1/dependencies/blocked_by`,
      `/repos/${REPO}/issues/1/dependencies/blocked_by`,
    ]);
    expect((await rig.task(1)).task.waitingFor).toBeUndefined();
    expect((await w.claim()).body.task.issue).toBe(1);
    expect(await readyDetail()).toMatchObject({
      host: "not read yet",
      fallbacks: [
        {
          feature: "issue-dependencies",
          evidence: expect.stringContaining(`answered 404 for ${REPO}#1, which exists`),
        },
      ],
    });
    // Known now: later tasks cost no dependency call, and the log said it once.
    await rig.queue(2);
    expect(rig.fake.hostGaps).toHaveLength(2);
    expect((await w.claim()).body.task.issue).toBe(2);
    expect(logged()).toHaveLength(1);
  });
});
