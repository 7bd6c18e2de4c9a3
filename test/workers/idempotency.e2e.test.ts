/**
 * Idempotency-Key and report bounds of the worker API, end to end: a key's
 * row is taken before the work runs, so of two concurrent requests with one
 * key only one acts; a key is bound to its body; transient answers free the
 * key; a request left running by a dead process is taken over; keys expire.
 */
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** A raw call with a key, answered with its headers (the rig's call drops them). */
  const keyed = async (w: WorkerClient, path: string, body: unknown, key: string) => {
    const r = await fetch(rig.app.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    return {
      status: r.status,
      body: text ? JSON.parse(text) : null,
      replay: r.headers.get("idempotent-replay"),
      retryAfter: r.headers.get("retry-after"),
    };
  };

  /** A replayed claim answer: the first, less its GitHub token (never stored in the clear). */
  const replayOf = (first: { status: number; body: any }) => ({
    ...first,
    body: { ...first.body, credentials: null, credentialsError: expect.stringContaining("renewCredentials: true") },
    replay: "true",
  });

  async function claimed(
    issue: number,
  ): Promise<{ w: WorkerClient; run: { id: string; leaseEpoch: string; branch: string } }> {
    await rig.queue(issue);
    const w = await rig.worker();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    return { w, run: claim.body.run };
  }

  test("two concurrent exits with one key: the second is turned away with 409 in-progress while the first works, only the first reads GitHub, and a retry afterwards replays the first answer", async () => {
    rig = await startRig({ provider });
    const { w, run } = await claimed(1);
    const head = rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: run.branch, title: "One", body: "Closes #1", user: "agent-bot" });
    const exit = { leaseEpoch: run.leaseEpoch, exitCode: 0, branch: run.branch, headSha: head };
    const path = `/api/v1/runs/${run.id}/exit`;

    const held = rig.fake.hold("pulls/list");
    const first = keyed(w, path, exit, "exit-1");
    await held.reached; // the first exit owns the key and is at work
    const second = await keyed(w, path, exit, "exit-1");
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ reason: "in-progress", retryable: true });
    expect(second.body.error).toContain("still running");
    expect(second.retryAfter).toBe("1");
    held.release();
    const answer = await first;
    expect(answer).toMatchObject({ status: 200, replay: null, body: { outcome: "review", prNumber: pr.number } });
    expect(rig.fake.requestsFor("pulls/list")).toHaveLength(1);

    const retry = await keyed(w, path, exit, "exit-1");
    expect(retry).toEqual({ ...answer, replay: "true" });
    expect(rig.fake.requestsFor("pulls/list")).toHaveLength(1);
    const rows = await rig.app.database.db.idempotentResponse.findMany();
    expect(rows.map((r) => [r.state, r.status, JSON.parse(r.body)])).toEqual([["done", 200, answer.body]]);
  });

  test("two concurrent claims with one key claim one task: the other answer is in-progress or the replay of the first", async () => {
    rig = await startRig({ provider });
    await rig.queue(2);
    await rig.queue(3);
    const w = await rig.worker();
    const [a, b] = await Promise.all([
      keyed(w, "/api/v1/claims", {}, "claim-1"),
      keyed(w, "/api/v1/claims", {}, "claim-1"),
    ]);
    const won = [a, b].filter((r) => r.status === 200 && r.replay === null);
    expect(won).toHaveLength(1);
    const other = won[0] === a ? b : a;
    if (other.status === 409) expect(other.body).toMatchObject({ reason: "in-progress", retryable: true });
    else expect(other).toEqual(replayOf(won[0]!));
    expect(await rig.app.database.db.run.count()).toBe(1);
    expect((await rig.task(won[0]!.body.task.issue === 2 ? 3 : 2)).task.state).toBe("queued");
    // Once done, the key answers the first claim again; a new key claims the next task.
    expect(await keyed(w, "/api/v1/claims", {}, "claim-1")).toEqual(replayOf(won[0]!));
    expect((await keyed(w, "/api/v1/claims", {}, "claim-2")).body.task.issue).not.toBe(won[0]!.body.task.issue);
  });

  test("the same key with another body is refused with 422 and changes nothing; an unkeyed request is unaffected", async () => {
    rig = await startRig({ provider });
    const { w, run } = await claimed(4);
    const path = `/api/v1/runs/${run.id}/heartbeat`;
    const first = await keyed(w, path, { leaseEpoch: run.leaseEpoch, progress: { step: "plan" } }, "beat-1");
    expect(first.status).toBe(200);
    const other = await keyed(w, path, { leaseEpoch: run.leaseEpoch, progress: { step: "edit" } }, "beat-1");
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ reason: "key-reused", retryable: false });
    expect(other.body.error).toContain("different request body");
    const t = await rig.task(4);
    expect(t.runs[0].progress).toMatchObject({ step: "plan" });
    expect((await w.call("POST", path, { leaseEpoch: run.leaseEpoch, progress: { step: "edit" } })).status).toBe(200);
    expect((await rig.task(4)).runs[0].progress).toMatchObject({ step: "edit" });
  });

  test("a transient answer frees the key: the retry with it runs for real", async () => {
    rig = await startRig({ provider });
    const { w, run } = await claimed(5);
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 0 });
    const exit = { leaseEpoch: run.leaseEpoch, exitCode: 1 };
    const path = `/api/v1/runs/${run.id}/exit`;
    rig.fake.inject({ method: "GET", path: "pulls/list", status: 502, times: 1 });
    const failed = await keyed(w, path, exit, "exit-5");
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await rig.app.database.db.idempotentResponse.count()).toBe(0);
    const reads = rig.fake.requestsFor("pulls/list").length;
    const retry = await keyed(w, path, exit, "exit-5");
    expect(retry).toMatchObject({ status: 200, replay: null, body: { outcome: "classified", class: "debris-empty" } });
    expect(rig.fake.requestsFor("pulls/list").length).toBeGreaterThan(reads);
  });

  test("a request left running (its process died) is taken over after 60 s; before that it is in-progress", async () => {
    rig = await startRig({ provider });
    const { w, run } = await claimed(6);
    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 0 });
    const exit = { leaseEpoch: run.leaseEpoch, exitCode: 1 };
    const path = `/api/v1/runs/${run.id}/exit`;
    const held = rig.fake.hold("pulls/list");
    const stuck = keyed(w, path, exit, "exit-6");
    await held.reached;
    rig.clock.advance(59_000);
    expect((await keyed(w, path, exit, "exit-6")).body.reason).toBe("in-progress");
    rig.clock.advance(2_000);
    const taking = keyed(w, path, exit, "exit-6");
    // The take-over runs the work itself: its GitHub read arrives too.
    await eventually(
      () => (rig.fake.requestsFor("pulls/list").length === 2 ? true : undefined),
      10_000,
      "the take-over's GitHub read",
    );
    held.release();
    const [old, took] = await Promise.all([stuck, taking]);
    // Both ran (the first was presumed dead); the run exited once, and the key keeps the take-over's answer.
    expect([old, took].map((r) => r.status).sort()).toEqual([200, 409]);
    expect([old, took].find((r) => r.status === 200)!.body).toMatchObject({
      outcome: "classified",
      class: "debris-empty",
    });
    expect([old, took].find((r) => r.status === 409)!.body).toMatchObject({ reason: "exited" });
    expect(await keyed(w, path, exit, "exit-6")).toEqual({ ...took, replay: "true" });
  });

  test("a key expires after the retention window (24 h by default): the same key then runs anew", async () => {
    rig = await startRig({ provider });
    await rig.queue(7);
    await rig.queue(8);
    const w = await rig.worker();
    const first = await keyed(w, "/api/v1/claims", {}, "claim-7");
    expect(first.status).toBe(200);
    rig.clock.advance(23 * 3_600_000);
    expect(await keyed(w, "/api/v1/claims", {}, "claim-7")).toEqual(replayOf(first));
    rig.clock.advance(3_600_000);
    const anew = await keyed(w, "/api/v1/claims", {}, "claim-7");
    expect(anew.replay).toBeNull();
    expect(anew.status).toBe(200);
    expect(anew.body.task.issue).not.toBe(first.body.task.issue);
  });

  test("reports are bounded: a 400 names the field and its limit; reports at the limits are accepted", async () => {
    rig = await startRig({ provider });
    const { w, run } = await claimed(9);
    const exitPath = `/api/v1/runs/${run.id}/exit`;
    const base = { leaseEpoch: run.leaseEpoch, exitCode: 1 };
    const refused = async (path: string, body: Record<string, unknown>, field: string, limit: string) => {
      const r = await w.call("POST", path, body);
      expect(r.status).toBe(400);
      expect(r.body.issues).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: field, message: expect.stringContaining(limit) })]),
      );
      expect(r.body.error).toContain(`${field}: `);
      expect(r.body.error).toContain(limit);
    };
    await refused(
      exitPath,
      { ...base, lastToolCalls: Array.from({ length: 51 }, (_, i) => `call ${i}`) },
      "lastToolCalls",
      "at most 50 items",
    );
    await refused(
      exitPath,
      { ...base, lastToolCalls: ["ok", "x".repeat(2001)] },
      "lastToolCalls.1",
      "at most 2,000 characters",
    );
    await refused(exitPath, { ...base, question: "?".repeat(10_001) }, "question", "at most 10,000 characters");
    await refused(exitPath, { ...base, branch: `agent/${"b".repeat(250)}` }, "branch", "at most 255 characters");
    await refused(exitPath, { ...base, sessionRef: "s".repeat(1001) }, "sessionRef", "at most 1,000 characters");
    await refused(exitPath, { ...base, leaseEpoch: "e".repeat(101) }, "leaseEpoch", "at most 100 characters");
    const askPath = `/api/v1/runs/${run.id}/decision-requests`;
    await refused(
      askPath,
      { leaseEpoch: run.leaseEpoch, question: "q".repeat(10_001) },
      "question",
      "at most 10,000 characters",
    );
    await refused(
      askPath,
      { leaseEpoch: run.leaseEpoch, question: "ok?", condition: `issue-closed:${"1".repeat(600)}` },
      "condition",
      "at most 500 characters",
    );
    await refused(
      `/api/v1/runs/${run.id}/heartbeat`,
      { leaseEpoch: run.leaseEpoch, progress: { step: "s".repeat(201) } },
      "progress.step",
      "at most 200 characters",
    );
    // Nothing refused touched the run.
    expect((await rig.task(9)).runs[0]).toMatchObject({ state: "live" });

    rig.fake.state.addBranch(REPO, run.branch, { aheadBy: 0 });
    const atLimits = await w.exit(run.id, {
      ...base,
      turnCapHit: true,
      lastToolCalls: Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(2000, ".")),
      question: undefined,
    });
    expect(atLimits.status).toBe(200);
    expect(atLimits.body).toMatchObject({ class: "turn-cap-spinning" });
  });
});
