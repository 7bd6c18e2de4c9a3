/**
 * A claim on an effect lasts PROCESSING_LEASE_MS and is renewed while its
 * performer holds it: a write that waits longer than the lease (GitHub slow
 * to answer, a wait for its pace) keeps its claim, so no other replica takes
 * it over and sends it again; when the write is done the claim is gone.
 */
import { startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { PROCESSING_LEASE_MS } from "../../src/config/defaults.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("an interlock label write held past its lease is renewed by its performer and sent once", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    const w = await rig.worker();
    const held = rig.fake.hold("issues/add-labels");
    const claim = await fetch(rig.app.url + "/api/v1/claims", {
      method: "POST",
      headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(claim.status).toBe(200);
    await held.reached;
    const db = rig.app.database.db;
    const running = async () => (await db.effect.findMany({ where: { state: "running" } }))[0];
    const first = (await running())!;
    expect(first.kind).toBe("label");
    const claimedUntil = first.lockedUntil!.getTime();

    // Past the lease by the clock: only the renewal, every third of it, keeps the claim.
    rig.clock.advance(PROCESSING_LEASE_MS + 1_000);
    const renewed = await eventually(
      async () => {
        const e = await running();
        return e && e.lockedUntil!.getTime() > claimedUntil + PROCESSING_LEASE_MS ? e : undefined;
      },
      PROCESSING_LEASE_MS,
      "the claim renewed",
    );
    expect(renewed.lockedBy).toBe(first.lockedBy);
    expect(renewed.attempts).toBe(first.attempts);

    held.release();
    await eventually(
      async () => (await db.effect.findUnique({ where: { id: first.id } }))?.state === "done" || undefined,
    );
    const done = (await db.effect.findUnique({ where: { id: first.id } }))!;
    expect([done.lockedBy, done.lockedUntil, done.maybeSent]).toEqual([null, null, false]);
    expect(rig.fake.requestsFor("issues/add-labels")).toHaveLength(1);
  });
});
