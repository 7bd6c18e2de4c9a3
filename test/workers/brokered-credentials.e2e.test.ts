/**
 * Credential brokering end to end: signed webhooks into the real App, a
 * worker over the real HTTP API, the fake GitHub minting and revoking. A
 * claim hands the worker a token for the task's one repository with only
 * what a run needs; heartbeats renew it before it expires; every way a lease
 * ends revokes it on GitHub (the `revoke-credentials` effect), so a
 * superseded worker's push is refused by GitHub itself. The token never
 * shows in logs, the operator API or the database in the clear.
 */
import { randomUUID } from "node:crypto";
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

const PERMISSIONS = { contents: "write", pull_requests: "write", issues: "read" };

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** Run tokens minted for the App's runs: narrowed to repositories (the App's own token exchanges are not). */
  const runMints = () =>
    rig.fake.requestsFor("apps/create-installation-access-token").filter((r) => {
      const body = r.body as { repositories?: string[] } | null;
      return Boolean(body?.repositories);
    });
  const asToken = (token: string, path: string, init: RequestInit = {}) =>
    fetch(rig.fake.apiUrl + path, {
      ...init,
      headers: {
        authorization: `token ${token}`,
        accept: "application/vnd.github+json",
        "user-agent": "worker",
        "content-type": "application/json",
      },
    });
  const beat = (w: WorkerClient, run: { id: string; leaseEpoch: string }, body: Record<string, unknown> = {}) =>
    w.call("POST", `/api/v1/runs/${run.id}/heartbeat`, { leaseEpoch: run.leaseEpoch, ...body });
  const revokes = async (issue: number) =>
    ((await rig.task(issue)).effects as Array<{ kind: string; state: string; run?: string; result?: unknown }>).filter(
      (e) => e.kind === "revoke-credentials",
    );

  /** Every place a token must never show: logs, the operator API, and every row of the database. */
  async function assertNowhere(token: string, issue: number): Promise<void> {
    expect(JSON.stringify(rig.app.logs)).not.toContain(token);
    expect(JSON.stringify(await rig.task(issue))).not.toContain(token);
    const listing = await (await rig.app.admin("/api/v1/effects")).text();
    expect(listing).not.toContain(token);
    const db = rig.app.database.db;
    const rows = await Promise.all([
      db.runCredential.findMany(),
      db.effect.findMany(),
      db.idempotentResponse.findMany(),
      db.run.findMany(),
    ]);
    expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(token);
  }

  async function claimed(issue: number, config?: string) {
    rig = await startRig({ provider });
    rig.fake.state.addRepo("acme/other", { installationId: 77 });
    if (config) rig.config(config);
    await rig.queue(issue);
    const w = await rig.worker();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    return { w, claim: claim.body, run: claim.body.run as { id: string; leaseEpoch: string; branch: string } };
  }

  test("a claim carries a token for the task's repository with only a run's permissions; the exit revokes it", async () => {
    const { w, claim, run } = await claimed(1);
    const { token, expiresAt } = claim.credentials as { token: string; expiresAt: string };
    expect(claim.credentialsError).toBeUndefined();
    const held = rig.fake.state.tokens.get(token)!;
    expect(held).toMatchObject({ repositories: [REPO], permissions: PERMISSIONS, revokedAt: null });
    expect(new Date(expiresAt).getTime()).toBe(Math.floor(held.expiresAt.getTime() / 1000) * 1000);
    expect(runMints()).toHaveLength(1);
    expect(runMints()[0]!.body).toEqual({ repositories: ["app"], permissions: PERMISSIONS });
    // What GitHub lets it do: its repository, not another; read the issue, not write to it.
    expect((await asToken(token, `/repos/${REPO}`)).status).toBe(200);
    expect((await asToken(token, "/repos/acme/other")).status).toBe(404);
    const comment = await asToken(token, `/repos/${REPO}/issues/1/comments`, {
      method: "POST",
      body: JSON.stringify({ body: "from the agent" }),
    });
    expect(comment.status).toBe(403);
    expect(await comment.json()).toMatchObject({ message: "Resource not accessible by integration" });

    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1 });
    expect(exit.status).toBe(200);
    await rig.settle();
    expect(await revokes(1)).toEqual([expect.objectContaining({ state: "done", run: run.id })]);
    expect(held.revokedAt).toBeInstanceOf(Date);
    expect((await asToken(token, `/repos/${REPO}`)).status).toBe(401);
    await assertNowhere(token, 1);
  });

  test("a heartbeat hands a fresh token when the current one expires within 15 minutes, or when asked", async () => {
    const { w, claim, run } = await claimed(2, "limits:\n  leaseSeconds: 3600\n  stallSeconds: 7200\n");
    const first = claim.credentials.token as string;
    rig.clock.advance(30 * 60_000);
    const early = await beat(w, run, { progress: { step: "edit" } });
    expect(early.status).toBe(200);
    expect(early.body).not.toHaveProperty("credentials");
    rig.clock.advance(16 * 60_000); // 14 minutes left
    const late = await beat(w, run, { progress: { step: "test" } });
    expect(late.status).toBe(200);
    const second = late.body.credentials.token as string;
    expect(second).not.toBe(first);
    expect(new Date(late.body.credentials.expiresAt).getTime()).toBeGreaterThan(
      rig.clock.now().getTime() + 59 * 60_000,
    );
    expect(rig.fake.state.tokens.get(second)).toMatchObject({ repositories: [REPO], permissions: PERMISSIONS });
    // The next one does not renew again; asked, it does.
    expect((await beat(w, run)).body).not.toHaveProperty("credentials");
    const asked = await beat(w, run, { renewCredentials: true });
    const third = asked.body.credentials.token as string;
    expect(new Set([first, second, third]).size).toBe(3);
    // Every token was minted as the App with one JWT, signed once: not a signature per request.
    const appJwts = rig.fake.requestsFor("apps/create-installation-access-token").map((r) => r.headers.authorization);
    expect(appJwts.length).toBeGreaterThanOrEqual(3);
    expect(appJwts[0]).toMatch(/^bearer [\w-]+\.[\w-]+\.[\w-]+$/i);
    expect(new Set(appJwts).size).toBe(1);
    // The replaced ones are left to expire; the lease's end revokes every token the run was handed.
    expect(rig.fake.state.tokenLive(first)).toBe(true);
    const cancel = await rig.app.admin(`/api/v1/tasks/${claim.task.id}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(cancel.status).toBe(200);
    await rig.settle();
    expect(await revokes(2)).toEqual([expect.objectContaining({ state: "done" })]);
    for (const t of [first, second, third]) expect(rig.fake.state.tokenLive(t)).toBe(false);
    expect((await beat(w, run)).status).toBe(409);
    for (const t of [first, second, third]) await assertNowhere(t, 2);
  });

  test("an expired lease revokes its token, and the successor's token is another", async () => {
    const { w, claim, run } = await claimed(3);
    const token = claim.credentials.token as string;
    rig.clock.advance(301_000);
    expect(await rig.sweep()).toMatchObject({ expired: 1 });
    expect(rig.fake.state.tokenLive(token)).toBe(false);
    expect(await revokes(3)).toEqual([expect.objectContaining({ state: "done", run: run.id })]);
    // A zombie's push would be refused by GitHub: the token no longer authenticates.
    const main = rig.fake.state.repo(REPO).branches.get("main")!;
    const push = await asToken(token, `/repos/${REPO}/git/refs`, {
      method: "POST",
      body: JSON.stringify({ ref: `refs/heads/${run.branch}`, sha: main }),
    });
    expect(push.status).toBe(401);
    expect(rig.fake.state.repo(REPO).branches.has(run.branch)).toBe(false);
    rig.clock.advance(121_000);
    await rig.sweep();
    const next = await w.claim();
    expect(next.body.task.issue).toBe(3);
    expect(next.body.credentials.token).not.toBe(token);
    expect(rig.fake.state.tokenLive(next.body.credentials.token)).toBe(true);
  });

  test("a PR opened from the run's branch moves the task on and revokes the run's token", async () => {
    const { w, claim, run } = await claimed(4);
    const token = claim.credentials.token as string;
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: run.branch, title: "Four", body: "Closes #4", user: "alice" });
    await rig.deliver("pull_request", "opened", { pull: pr.number, sender: "alice" });
    expect(rig.labels(4)).toEqual(["agent:review"]);
    expect(rig.fake.state.tokenLive(token)).toBe(false);
    expect((await beat(w, run)).status).toBe(409);
  });

  test("revoking the worker revokes its run's token", async () => {
    const { w, claim } = await claimed(5);
    const token = claim.credentials.token as string;
    expect((await rig.app.admin(`/api/v1/workers/${w.id}`, { method: "DELETE" })).status).toBe(204);
    await rig.settle();
    expect(rig.fake.state.tokenLive(token)).toBe(false);
    expect(await revokes(5)).toEqual([expect.objectContaining({ state: "done" })]);
  });

  test("a token GitHub already dropped is revoked as done, not parked", async () => {
    const { w, claim, run } = await claimed(6);
    const token = claim.credentials.token as string;
    rig.fake.state.tokens.get(token)!.revokedAt = rig.clock.now();
    await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1 });
    await rig.settle();
    expect(await revokes(6)).toEqual([
      expect.objectContaining({ state: "done", result: expect.objectContaining({ unknown: 1, revoked: 0 }) }),
    ]);
  });

  test("credentials: none hands no token and revokes nothing", async () => {
    const { w, claim, run } = await claimed(7, "credentials: none\n");
    expect(claim.credentials).toBeNull();
    expect(claim).not.toHaveProperty("credentialsError");
    expect(runMints()).toHaveLength(0);
    expect((await beat(w, run)).body).not.toHaveProperty("credentials");
    await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1 });
    await rig.settle();
    expect(await revokes(7)).toEqual([]);
  });

  test("in a dry run the revocation is recorded as would-have-done", async () => {
    const { w, claim, run } = await claimed(8, "dryRun: true\n");
    const token = claim.credentials.token as string;
    await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1 });
    await rig.settle();
    expect(await revokes(8)).toEqual([expect.objectContaining({ state: "dry-run" })]);
    expect(rig.fake.state.tokenLive(token)).toBe(true);
    expect(rig.fake.requestsFor("apps/revoke-installation-access-token")).toHaveLength(0);
  });

  test("a mint GitHub refuses answers the claim without a token and says why; the next heartbeat brings one", async () => {
    rig = await startRig({ provider });
    await rig.queue(9);
    const w = await rig.worker();
    rig.fake.inject({ path: "apps/create-installation-access-token", status: 503, times: 1 });
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    expect(claim.body.credentials).toBeNull();
    expect(claim.body.credentialsError).toMatch(/GitHub would not mint a token for acme\/app: .*503/);
    const hb = await beat(w, claim.body.run);
    expect(rig.fake.state.tokens.get(hb.body.credentials.token)).toMatchObject({ repositories: [REPO] });
  });

  test("a replayed claim answer never carries the token; the database holds it only sealed", async () => {
    rig = await startRig({ provider });
    await rig.queue(10);
    const w = await rig.worker();
    const key = { "idempotency-key": randomUUID() };
    const first = await w.call("POST", "/api/v1/claims", {}, key);
    const token = first.body.credentials.token as string;
    const again = await w.call("POST", "/api/v1/claims", {}, key);
    expect(again.body.run.id).toBe(first.body.run.id);
    expect(again.body.credentials).toBeNull();
    expect(again.body.credentialsError).toContain("renewCredentials");
    const fresh = await beat(w, first.body.run, { renewCredentials: true });
    expect(fresh.body.credentials.token).not.toBe(token);
    const sealed = await rig.app.database.db.runCredential.findMany({ where: { runId: first.body.run.id } });
    expect(sealed).toHaveLength(2);
    expect(sealed.every((c) => c.state === "held" && c.sealed?.startsWith("v1."))).toBe(true);
    await assertNowhere(token, 10);
  });
});
