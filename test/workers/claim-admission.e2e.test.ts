/**
 * A replica takes so many claims at once and lets so many wait
 * (CLAIM_ADMISSION); the next is answered at once with 503, Retry-After and
 * reason busy, stores nothing for its Idempotency-Key, and is counted in
 * /metrics. Claims are held at work by holding the mint of their GitHub
 * token (credentials: broker, the default).
 */
import { startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { CLAIM_ADMISSION } from "../../src/config/defaults.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const claim = async (token: string, key: string) => {
    const r = await fetch(rig.app.url + "/api/v1/claims", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
      body: "{}",
    });
    const text = await r.text();
    return { key, status: r.status, retryAfter: r.headers.get("retry-after"), body: text ? JSON.parse(text) : null };
  };

  test("claims past the running and the waiting are refused with 503 and Retry-After at once; the rest are served when the running finish, and a refused key is a first try", async () => {
    rig = await startRig({ provider });
    const { concurrency, queue } = CLAIM_ADMISSION;
    for (let issue = 1; issue <= concurrency; issue++) await rig.queue(issue);
    const workers = await Promise.all(Array.from({ length: concurrency }, (_, i) => rig.worker(`w${i}`)));
    const idle = await rig.worker("idle");

    const mint = "apps/create-installation-access-token";
    // The App's own installation token was minted already, for the queueing.
    const minted = rig.fake.requestsFor(mint).length;
    const held = rig.fake.hold(mint);
    const running = workers.map((w, i) => claim(w.token, `run-${i}`));
    await eventually(
      async () => rig.fake.requestsFor(mint).length === minted + concurrency || undefined,
      10_000,
      "every running claim at its mint",
    );

    const extra = 5;
    const answered: Array<Awaited<ReturnType<typeof claim>>> = [];
    const more = Array.from({ length: queue + extra }, (_, i) =>
      claim(idle.token, `more-${i}`).then((a) => (answered.push(a), a)),
    );
    // The refusals come while every slot is still held: nothing else can have answered.
    await eventually(async () => answered.length === extra || undefined, 10_000, "the refusals");
    expect(answered.map((a) => [a.status, a.retryAfter, a.body.reason, a.body.retryable])).toEqual(
      Array.from({ length: extra }, () => [503, String(CLAIM_ADMISSION.retryAfterSeconds), "busy", true]),
    );
    expect(answered[0]!.body.error).toMatch(
      new RegExp(`at its limit for claims \\(${concurrency} running, ${queue} waiting\\); try again in 1 s`),
    );
    const metrics = await (await fetch(rig.app.url + "/metrics")).text();
    expect(metrics).toMatch(new RegExp(`^orchestra_claims_shed_total ${extra}$`, "m"));

    held.release();
    const served = await Promise.all(running);
    expect(served.map((a) => a.status)).toEqual(Array(concurrency).fill(200));
    expect(new Set(served.map((a) => a.body.task.issue)).size).toBe(concurrency);
    const rest = (await Promise.all(more)).filter((a) => a.status !== 503);
    expect(rest.map((a) => a.status)).toEqual(Array(queue).fill(204));

    // Nothing was kept for a refused key: its retry is a first try, not a replay of the 503.
    // Each answered claim kept its key's answer; the refused kept none.
    const kept = () => rig.app.database.db.idempotentResponse.count();
    expect(await kept()).toBe(concurrency + queue);
    await rig.queue(concurrency + 1);
    const retry = await claim(idle.token, answered[0]!.key);
    expect(retry.status).toBe(200);
    expect(retry.body.task.issue).toBe(concurrency + 1);
    expect(await kept()).toBe(concurrency + queue + 1);
  });
});
