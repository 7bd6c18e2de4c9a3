/**
 * The effects outbox end to end: the real App, its executor and the fake
 * GitHub. A write whose answer was lost is looked for before it is sent
 * again; dry run writes nothing; a rate limit or a dead token holds back one
 * installation only; an effect that keeps failing is parked and replayable;
 * an effect a later state made pointless is dropped; usage adds up and a
 * spent budget escalates once.
 */
import { childEnv } from "../support/cli.js";
import { randomUUID } from "node:crypto";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO, settleEffects, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { eventually } from "../support/orchestra.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { providers } from "../support/databases.js";

// The lifecycle on every provider this run has (PostgreSQL in CI): the apply writes SQL of its own.
describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function claimed(
    issue: number,
    config?: string,
  ): Promise<{ w: WorkerClient; run: { id: string; attempt: number; leaseEpoch: string; branch: string } }> {
    if (config) rig.config(config);
    await rig.queue(issue);
    const w = await rig.worker();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    return { w, run: claim.body.run };
  }

  const run = promisify(execFile);
  const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");
  /** The `orchestra` command against the running App (from an empty directory: no .env is read). */
  const cli = (...args: string[]) =>
    run(process.execPath, [bin, ...args], {
      cwd: tmpdir(),
      env: childEnv({ ORCHESTRA_URL: rig.app.url, ORCHESTRA_ADMIN_TOKEN: rig.app.adminToken }),
    });

  const posts = (op: string) => rig.fake.requestsFor(op).filter((q) => q.method !== "GET");

  test("a comment whose POST took effect but answered 502 is found by its marker, not posted twice", async () => {
    rig = await startRig({ provider });
    const { w, run } = await claimed(1);
    rig.fake.inject({ method: "POST", path: "issues/create-comment", status: 502, perform: true, times: 1 });
    const exit = await w.exit(run.id, {
      leaseEpoch: run.leaseEpoch,
      exitCode: 1,
      turnCapHit: true,
      lastToolCalls: ["edit"],
    });
    expect(exit.body).toMatchObject({ class: "turn-cap-spinning", recovery: "escalate" });
    const comments = rig.fake.state.commentsOn(REPO, 1);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("turn-cap-spinning");
    expect(comments[0]!.body).toContain("<!-- orchestra:effect escalation:");
    expect(posts("issues/create-comment")).toHaveLength(1);
    const effect = (await rig.task(1)).effects.find((e: { kind: string }) => e.kind === "comment");
    expect(effect).toMatchObject({ state: "done", attempts: 2, result: { commentId: comments[0]!.id } });
    expect(effect.note).toContain("answer was lost");
    expect(effect.errors[0]).toMatchObject({ class: "github-502" });
  });

  test("dry run in the repository's config: Orchestra's state moves, GitHub is read and never written, and the task lists what would have been done", async () => {
    rig = await startRig({ provider });
    rig.config("dryRun: true\n");
    rig.fake.state.addIssue(REPO, { number: 2, title: "Issue 2", labels: ["agent:queued"], user: "alice" });
    const from = rig.fake.requests.length;
    await rig.deliver("issues", "labeled", { issue: 2, label: "agent:queued", sender: "alice" });
    const w = await rig.worker();
    const run = (await w.claim()).body.run;
    rig.fake.state.addBranch(REPO, run.branch);
    const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 });
    expect(exit.body).toMatchObject({ class: "phantom", recovery: "delete-branch-requeue" });
    expect(rig.writesSince(from)).toEqual([]);
    expect(rig.fake.state.repo(REPO).branches.has(run.branch)).toBe(true);
    expect(rig.labels(2)).toEqual(["agent:queued"]);
    const t = await rig.task(2);
    expect(t.task).toMatchObject({ state: "queued", attempt: 1 });
    expect(t.effects.map((e: { kind: string; state: string }) => `${e.kind}:${e.state}`)).toEqual([
      "label:dry-run",
      "label:dry-run",
      "revoke-credentials:dry-run",
      "label:dry-run",
      "delete-branch:dry-run",
    ]);
    expect(t.effects.map((e: { note: string }) => e.note)).toEqual([
      "would have: label #2 agent:queued (and remove agent:in-progress, agent:review, agent:blocked, agent:failed)",
      "would have: label #2 agent:in-progress (and remove agent:queued, agent:review, agent:blocked, agent:failed)",
      `would have: revoke the GitHub tokens handed to run ${run.id} (its lease ended: exited 0 without a pull request)`,
      "would have: label #2 agent:queued (and remove agent:in-progress, agent:review, agent:blocked, agent:failed)",
      `would have: delete branch ${run.branch} (only if it holds no commits ahead and no PR)`,
    ]);
    const listed = (await (await rig.app.admin("/api/v1/effects?state=dry-run")).json()) as any;
    expect(listed.effects).toHaveLength(5);
    expect(listed.counts["dry-run"]).toBe(5);
  });

  test("dry run for the whole service (ORCHESTRA_DRY_RUN) writes nothing either", async () => {
    rig = await startRig({ provider, env: { ORCHESTRA_DRY_RUN: "true" } });
    const from = rig.fake.requests.length;
    const { w, run } = await claimed(3);
    await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 1, turnCapHit: true });
    expect(rig.writesSince(from)).toEqual([]);
    expect(rig.fake.state.commentsOn(REPO, 3)).toHaveLength(0);
    const t = await rig.task(3);
    expect(t.task.state).toBe("blocked");
    expect(t.effects.every((e: { state: string }) => e.state === "dry-run")).toBe(true);
    expect(
      t.effects.some(
        (e: { kind: string; note: string }) =>
          e.kind === "comment" && e.note.startsWith("would have: comment on #3: Orchestra needs a human"),
      ),
    ).toBe(true);
  });

  test("reported usage adds up per run and per task; a spent budget escalates once instead of re-queueing", async () => {
    rig = await startRig({ provider });
    const { w, run } = await claimed(4, "limits:\n  maxCostUsd: 1\n");
    await w.heartbeat(run.id, run.leaseEpoch);
    expect(
      (
        await w.call("POST", `/api/v1/runs/${run.id}/heartbeat`, {
          leaseEpoch: run.leaseEpoch,
          usage: { inputTokens: 1000, outputTokens: 100, costUsd: 0.4 },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await w.call("POST", `/api/v1/runs/${run.id}/heartbeat`, {
          leaseEpoch: run.leaseEpoch,
          usage: { inputTokens: 2000, outputTokens: 200, costUsd: 0.7 },
        })
      ).status,
    ).toBe(200);
    const e1 = await w.exit(run.id, {
      leaseEpoch: run.leaseEpoch,
      exitCode: 1,
      usage: { inputTokens: 3000, outputTokens: 300, costUsd: 0.9 },
    });
    expect(e1.body).toMatchObject({ class: "debris-empty", recovery: "delete-branch-requeue" });
    let t = await rig.task(4);
    expect(t.task.state).toBe("queued"); // $0.90 of $1: another attempt
    const run2 = (await w.claim()).body.run;
    await w.call("POST", `/api/v1/runs/${run2.id}/heartbeat`, {
      leaseEpoch: run2.leaseEpoch,
      usage: { inputTokens: 500, outputTokens: 50, costUsd: 0.5 },
    });
    await w.exit(run2.id, { leaseEpoch: run2.leaseEpoch, exitCode: 1 });
    for (let i = 0; i < 3; i++) {
      rig.clock.advance(3600_000);
      await rig.sweep();
    }
    t = await rig.task(4);
    expect(t.task.state).toBe("blocked");
    expect(t.runs.map((r: { usage: unknown }) => r.usage)).toEqual([
      { inputTokens: 3000, outputTokens: 300, costUsd: 0.9 },
      { inputTokens: 500, outputTokens: 50, costUsd: 0.5 },
    ]);
    expect(t.cost).toMatchObject({ inputTokens: 3500, outputTokens: 350, costUsd: 1.4, runs: 2, attempts: 2 });
    expect(t.cost.githubCalls).toBe(t.cost.githubReads + t.cost.githubWrites);
    expect(t.cost.githubWrites).toBeGreaterThan(0);
    expect(t.cost.githubReads).toBeGreaterThan(0);
    const comments = rig.fake.state.commentsOn(REPO, 4);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("reaching its budget of $1.00");
    expect(rig.labels(4)).toEqual(["agent:blocked"]);
  });

  test("a rate limit holds back its own installation only, and is waited out without using an attempt", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addInstallation(78, "other");
    rig.fake.state.addRepo("other/app", { installationId: 78 });
    rig.fake.state.setPermission("other/app", "alice", "write");
    await rig.queue(5);
    rig.fake.state.addIssue("other/app", { number: 5, title: "Other 5", labels: ["agent:queued"], user: "alice" });
    await rig.deliverPayload("issues", {
      ...fakeWebhookPayload(rig.fake, "issues", "labeled", {
        repo: "other/app",
        issue: 5,
        label: "agent:queued",
        sender: "alice",
      }),
      installation: { id: 78 },
    });
    rig.fake.inject({
      method: "POST",
      path: `/repos/${REPO}/issues/5/labels`,
      status: 403,
      headers: { "retry-after": "2" },
      body: { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." },
      times: 1,
    });
    const w = await rig.worker();
    // Both claims at once: the other installation's label must not wait for this one's rate limit.
    const [a, b] = await Promise.all([w.claim(), w.claim()]);
    expect([a.body.task.repo, b.body.task.repo].sort()).toEqual([REPO, "other/app"]);
    const adds = (repo: string) =>
      rig.fake.requests.filter((q) => q.method === "POST" && q.path === `/repos/${repo}/issues/5/labels`);
    const [limited, retried] = adds(REPO);
    const [other] = adds("other/app");
    expect(limited!.status).toBe(403);
    expect(retried!.status).toBe(200);
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(1900);
    expect(other!.at).toBeLessThan(retried!.at);
    expect(rig.labels(5)).toEqual(["agent:in-progress"]);
    const effect = (await rig.task(5)).effects.find(
      (e: { kind: string; payload: { label: string } }) =>
        e.kind === "label" && e.payload.label === "agent:in-progress",
    );
    expect(effect).toMatchObject({ state: "done", attempts: 1 });
    expect(effect.errors[0]).toMatchObject({ class: "rate-limit" });
  });

  test("an installation whose token GitHub will not mint is paused, not asked every few seconds", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addInstallation(79, "gone");
    rig.fake.state.addRepo("gone/app", { installationId: 79 });
    rig.fake.state.installations.get(79)!.suspendedAt = new Date();
    const db = rig.app.database.db;
    const now = rig.clock.now();
    // Work left behind for an installation that was suspended since: an effect and an expired lease.
    await db.effect.create({
      data: {
        id: randomUUID(),
        key: "k-gone",
        installationId: 79,
        repo: "gone/app",
        kind: "remove-label",
        payload: JSON.stringify({ issue: 1, label: "agent:queued" }),
        nextAttemptAt: now,
        createdAt: now,
      },
    });
    await db.task.create({
      data: {
        id: "t-gone",
        installationId: 79,
        repo: "gone/app",
        issue: 1,
        title: "t",
        body: "",
        state: "claimed",
        attempt: 1,
        queuedAt: now,
        branch: "agent/issue-1",
        runId: "r-gone",
        leaseEpoch: "e",
        leaseExpiresAt: new Date(now.getTime() - 1000),
        label: "agent:in-progress",
        createdAt: now,
        updatedAt: now,
      },
    });
    await db.run.create({
      data: {
        id: "r-gone",
        taskId: "t-gone",
        attempt: 1,
        mode: "worker",
        state: "live",
        leaseEpoch: "e",
        leaseExpiresAt: now,
        branch: "agent/issue-1",
        startedAt: now,
      },
    });
    const mints = () => rig.fake.requests.filter((q) => q.path === "/app/installations/79/access_tokens").length;
    const installation = () => db.installation.findUnique({ where: { id: 79 } });
    // Each look of the executor for due effects asks the outbox which installations have some.
    const outbox = rig.app.orchestra.outbox;
    let looks = 0;
    const dueInstallations = outbox.dueInstallations.bind(outbox);
    outbox.dueInstallations = (...args) => {
      looks++;
      return dueInstallations(...args);
    };
    // Paused, and the effect back in the queue until the pause ends.
    await eventually(
      async () =>
        (await installation())?.pausedUntil &&
        (await db.effect.findUnique({ where: { key: "k-gone" } }))?.state === "pending"
          ? true
          : undefined,
      5_000,
      "installation paused",
    );
    await settleEffects(rig.app, rig.clock, { horizonMs: 0, timeoutMs: 15_000 });
    const after = mints();
    const failures = (await installation())!.failures;
    for (let i = 0; i < 5; i++) await rig.app.orchestra.sweeper.sweep();
    // The executor looks for due effects again and again meanwhile, and leaves the paused installation alone.
    const looked = looks;
    await eventually(() => (looks >= looked + 5 ? true : undefined), 5_000, "five more looks");
    expect(mints()).toBe(after);
    const inst = (await installation())!;
    expect(inst.pauseReason).toContain("suspended");
    expect(inst.pausedUntil!.getTime() - rig.clock.now().getTime()).toBeGreaterThan(50_000);
    // Other installations go on meanwhile.
    const { run } = await claimed(6);
    expect(run.attempt).toBe(1);
    expect(rig.labels(6)).toEqual(["agent:in-progress"]);
    // After the pause, it is asked again (and paused longer while it still fails).
    rig.clock.advance(3_600_001);
    await rig.app.orchestra.sweeper.sweep();
    await eventually(
      async () => (((await installation())?.failures ?? 0) > failures ? true : undefined),
      5_000,
      "a longer pause",
    );
    expect(mints()).toBeGreaterThan(after);
  });

  test("an effect that keeps failing is parked with its errors, listed, and replayable once the cause is fixed", async () => {
    rig = await startRig({ provider });
    await rig.queue(7);
    rig.fake.inject({
      method: "POST",
      path: "issues/add-labels",
      status: 403,
      body: { message: "Resource not accessible by integration" },
      times: 3,
    });
    const w = await rig.worker();
    expect((await w.claim()).status).toBe(200);
    const parked = (await (await rig.app.admin("/api/v1/effects?state=parked")).json()) as any;
    expect(parked.effects).toHaveLength(1);
    const e = parked.effects[0];
    expect(e).toMatchObject({ kind: "label", state: "parked", attempts: 3, payload: { label: "agent:in-progress" } });
    expect(e.errors).toEqual([expect.objectContaining({ class: "github-403", count: 3 })]);
    expect(e.note).toContain("parked after 3 attempt(s)");
    expect(rig.labels(7)).toEqual(["agent:queued"]);
    // The operator's view from the command line, and the replay from there.
    const listed = await cli("effects", "--state", "parked");
    expect(listed.stdout).toContain(`${e.id}  label  parked  attempts=3`);
    expect(listed.stdout).toContain("last error: add labels: 403 Resource not accessible by integration");
    const replay = await cli("effects", "replay", e.id);
    expect(replay.stdout.trim()).toBe(`${e.id} queued again`);
    await rig.settle();
    expect(rig.labels(7)).toEqual(["agent:in-progress"]);
    expect((await rig.app.admin(`/api/v1/effects/${e.id}/replay`, { method: "POST" })).status).toBe(409);
  });

  test("a label for a state the task has left is dropped, not written", async () => {
    rig = await startRig({ provider, effects: { start: false } });
    await rig.queue(8);
    const w = await rig.worker();
    const run = (await w.call("POST", "/api/v1/claims", {})).body.run;
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: run.branch, body: "Closes #8" });
    expect((await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 })).body).toMatchObject({
      outcome: "review",
      prNumber: pr.number,
    });
    rig.startEffects();
    await rig.settle();
    expect(rig.labels(8)).toEqual(["agent:review"]);
    const t = await rig.task(8);
    const labels = t.effects.filter((e: { kind: string }) => e.kind === "label");
    expect(labels.map((e: { payload: { label: string }; state: string }) => `${e.payload.label}:${e.state}`)).toEqual([
      "agent:queued:dropped",
      "agent:in-progress:dropped",
      "agent:review:done",
    ]);
    expect(
      rig.fake.requests.some(
        (q) =>
          q.method === "POST" && q.path.endsWith("/issues/8/labels") && JSON.stringify(q.body).includes("in-progress"),
      ),
    ).toBe(false);
  });

  test("claims answer at commit: with the executor stopped, a claim still answers and nothing is written until it runs", async () => {
    rig = await startRig({ provider, effects: { start: false } });
    await rig.queue(9);
    const w = await rig.worker();
    const from = rig.fake.requests.length;
    // The executor is stopped, so a claim that waited for any GitHub write would never answer.
    const claim = await w.call("POST", "/api/v1/claims", {});
    expect(claim.status).toBe(200);
    expect(rig.writesSince(from)).toEqual([]);
    // The claim's label supersedes the queue's, which never went out either.
    const effects = (await rig.task(9)).effects as Array<{ state: string; kind: string; payload: { label?: string } }>;
    expect(effects.map((e) => [e.kind, e.payload.label, e.state])).toEqual([
      ["label", "agent:queued", "dropped"],
      ["label", "agent:in-progress", "pending"],
    ]);
    rig.startEffects();
    await rig.settle();
    expect(rig.labels(9)).toEqual(["agent:in-progress"]);
  });
});
