/**
 * Scheduling end to end: fair claims across repositories and installations,
 * every gate stated as `waitingFor`, issue dependencies, pause, and the
 * breaker — signed webhooks into the real App, workers over the real HTTP
 * API, the fake GitHub behind it.
 */
import { INSTALLATION, REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { fakeIssueDependenciesPayload } from "../support/issue-dependencies.js";
import { providers } from "../support/databases.js";

const OTHER = "acme/lib";
const GLOBEX = "globex/web";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** Queues an issue in any repository of the fake (the rig's own helper knows one). */
  async function queueIn(repo: string, number: number): Promise<void> {
    rig.fake.state.addIssue(repo, {
      number,
      title: `Issue ${number}`,
      body: "Do it",
      labels: ["agent:queued"],
      user: "alice",
    });
    await rig.deliverPayload(
      "issues",
      fakeWebhookPayload(rig.fake, "issues", "labeled", {
        repo,
        issue: number,
        label: "agent:queued",
        sender: "alice",
      }),
    );
  }

  async function tasks(
    repo = REPO,
  ): Promise<Array<{ issue: number; state: string; waitingFor?: { gate: string; detail: string; until?: string } }>> {
    const res = await rig.app.admin(`/api/v1/tasks?repo=${encodeURIComponent(repo)}`);
    return ((await res.json()) as { tasks: never[] }).tasks;
  }
  const gateOf = async (issue: number, repo = REPO) => (await tasks(repo)).find((t) => t.issue === issue)?.waitingFor;

  test("a repository at its limit does not hide another repository's task", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addRepo(OTHER, { installationId: INSTALLATION });
    rig.fake.state.setPermission(OTHER, "alice", "write");
    rig.config("limits:\n  maxConcurrentPerRepo: 1\n");
    for (let i = 1; i <= 30; i++) await queueIn(REPO, i);
    await queueIn(OTHER, 1); // queued last: the oldest 30 are all in the full repository
    const w = await rig.worker();
    const first = await w.claim();
    expect(first.body.task).toMatchObject({ repo: REPO, issue: 1 });
    const second = await w.claim();
    expect(second.status).toBe(200);
    expect(second.body.task).toMatchObject({ repo: OTHER, issue: 1 });
    expect((await w.claim()).status).toBe(204);
    expect(await gateOf(2)).toMatchObject({
      gate: "repo-limit",
      detail: expect.stringContaining("1 of 1 live leases"),
    });
  });

  test("one installation's backlog does not starve another's", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addInstallation(88, "globex");
    rig.fake.state.addRepo(GLOBEX, { installationId: 88 });
    rig.fake.state.setPermission(GLOBEX, "alice", "write");
    for (let i = 1; i <= 10; i++) await queueIn(REPO, i);
    await queueIn(GLOBEX, 1);
    const w = await rig.worker();
    const repos = [(await w.claim()).body.task.repo, (await w.claim()).body.task.repo];
    // Whichever went first, the installation with no live lease gets the next claim.
    expect(repos.sort()).toEqual([REPO, GLOBEX].sort());
    expect((await w.claim()).body.task.repo).toBe(REPO);
  });

  test("every gate is stated on the task as waitingFor, and a claim finds nothing", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    // No worker yet.
    expect(await gateOf(1)).toMatchObject({ gate: "no-worker" });
    const w = await rig.worker("only-lib", [OTHER]);
    expect(await gateOf(1)).toMatchObject({ gate: "no-worker" });
    expect((await w.claim()).status).toBe(204);
    const any = await rig.worker("any");

    // Operator pause, service-wide and per repository.
    const pause = (body: object) =>
      rig.app.admin("/api/v1/pause", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await pause({ reason: "provider incident", by: "sam" })).status).toBe(200);
    expect(await gateOf(1)).toMatchObject({ gate: "paused", detail: "Orchestra is paused by sam: provider incident" });
    expect((await any.claim()).status).toBe(204);
    await pause({ paused: false });
    await pause({ repo: REPO, reason: "release freeze" });
    expect(await gateOf(1)).toMatchObject({ gate: "paused", detail: expect.stringContaining("release freeze") });
    expect((await any.claim()).status).toBe(204);
    expect(((await (await rig.app.admin("/api/v1/pause")).json()) as { paused: unknown[] }).paused).toEqual([
      expect.objectContaining({ scope: REPO, reason: "release freeze" }),
    ]);
    await pause({ repo: REPO, paused: false });

    // Blocked by an open issue.
    rig.fake.state.addIssue(REPO, { number: 2, title: "Prerequisite", body: "", labels: [], user: "alice" });
    rig.fake.state.block(REPO, 1, REPO, 2);
    await rig.deliverPayload(
      "issue_dependencies",
      fakeIssueDependenciesPayload(rig.fake, "blocked_by_added", { repo: REPO, issue: 1, blocker: 2, sender: "alice" }),
    );
    expect(await gateOf(1)).toMatchObject({ gate: "blocked-by", detail: `blocked by open issue ${REPO}#2` });
    expect((await any.claim()).status).toBe(204);
    rig.fake.state.unblock(REPO, 1, REPO, 2);
    await rig.deliverPayload(
      "issue_dependencies",
      fakeIssueDependenciesPayload(rig.fake, "blocked_by_removed", {
        repo: REPO,
        issue: 1,
        blocker: 2,
        sender: "alice",
      }),
    );
    expect(await gateOf(1)).toBeUndefined();

    // An organization at its limit (the repository's own limit is higher).
    rig.fake.state.addRepo(OTHER, { installationId: INSTALLATION });
    rig.fake.state.setPermission(OTHER, "alice", "write");
    rig.fake.state.setFile(OTHER, ".github/orchestra.yml", "limits:\n  maxConcurrentPerOrg: 1\n");
    rig.fake.state.setFile(REPO, ".github/orchestra.yml", "limits:\n  maxConcurrentPerOrg: 1\n");
    await queueIn(OTHER, 5);
    const held = await any.claim();
    expect(held.status).toBe(200);
    const waiting = held.body.task.repo === REPO ? { issue: 5, repo: OTHER } : { issue: 1, repo: REPO };
    expect(await gateOf(waiting.issue, waiting.repo)).toMatchObject({
      gate: "org-limit",
      detail: expect.stringContaining("acme has 1 of 1 live leases"),
    });
    expect((await any.claim()).status).toBe(204);
  });

  test("an invalid or paused configuration is stated, and a paused repository still takes labels off closed issues", async () => {
    rig = await startRig({ provider });
    rig.config("paused: true\n");
    await rig.queue(3);
    const w = await rig.worker();
    expect(await gateOf(3)).toMatchObject({ gate: "paused", detail: expect.stringContaining("paused: true") });
    expect((await w.claim()).status).toBe(204);
    // Reconciliation of labels goes on while paused.
    rig.fake.state.closeIssue(REPO, 3);
    await rig.deliver("issues", "closed", { issue: 3, sender: "alice" });
    expect(rig.labels(3)).toEqual([]);
    expect((await rig.task(3)).task.state).toBe("done");

    // A configuration that turns invalid is recorded when it is read again (a push to it, then the sweep).
    rig.config("paused: false\n");
    await rig.pushConfig();
    await rig.queue(7);
    expect(await gateOf(7)).toBeUndefined();
    rig.config("limits:\n  maxAttempts: many\n");
    await rig.pushConfig();
    await rig.sweep();
    expect(await gateOf(7)).toMatchObject({
      gate: "config-invalid",
      detail: expect.stringContaining("limits.maxAttempts"),
    });
    expect((await w.claim()).status).toBe(204);
  });

  test("a task blocked by an open issue is claimed after that issue closes (event and sweep)", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addRepo(OTHER, { installationId: INSTALLATION });
    rig.fake.state.addIssue(REPO, { number: 20, title: "First this", body: "", labels: [], user: "alice" });
    rig.fake.state.addIssue(OTHER, { number: 21, title: "And this, elsewhere", body: "", labels: [], user: "alice" });
    rig.fake.state.addIssue(REPO, {
      number: 22,
      title: "Then this",
      body: "",
      labels: ["agent:queued"],
      user: "alice",
    });
    rig.fake.state.block(REPO, 22, REPO, 20);
    rig.fake.state.block(REPO, 22, OTHER, 21);
    await rig.deliver("issues", "labeled", { issue: 22, label: "agent:queued", sender: "alice" });
    expect(await gateOf(22)).toMatchObject({
      gate: "blocked-by",
      detail: `blocked by open issues ${REPO}#20, ${OTHER}#21`,
    });
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(204);
    // The event: the blocker in this repository closes.
    rig.fake.state.closeIssue(REPO, 20);
    await rig.deliver("issues", "closed", { issue: 20, sender: "alice" });
    expect(await gateOf(22)).toMatchObject({ gate: "blocked-by", detail: `blocked by open issue ${OTHER}#21` });
    // The sweep: the other closes without an event reaching Orchestra.
    rig.fake.state.closeIssue(OTHER, 21);
    expect((await rig.sweep()).blockersRead).toBe(0); // read moments ago
    rig.clock.advance(5 * 60_000 + 1000);
    expect((await rig.sweep()).blockersRead).toBe(1);
    expect(await gateOf(22)).toBeUndefined();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    expect(claim.body.task.issue).toBe(22);
  });
});
