/**
 * A replica that stops beating has what it held, a delivery being processed
 * and an effect being performed, given back to the others as soon as its beat
 * has stood still for the silent time, not when each lease runs out (the
 * leases here last an hour, so only the release can free them); the replica
 * it was released from can no longer renew or complete it. A replica that
 * keeps beating is never released, and one stopped in order leaves no row.
 */
import { Inbox } from "../../src/inbox/store.js";
import { inboxQueries } from "../../src/inbox/queries.js";
import { Outbox } from "../../src/effects/outbox.js";
import { effectsQueries } from "../../src/effects/queries.js";
import { Replicas } from "../../src/replicas/replicas.js";
import { replicaQueries } from "../../src/replicas/queries.js";
import { REPLICA_BEAT_MS, REPLICA_SILENT_MS } from "../../src/config/defaults.js";
import { eachMigratedDatabase, providers } from "../support/databases.js";
import { RigClock } from "../support/clock.js";

const HOUR = 3_600_000;

describe.each(providers)("replica takeover on %s", (provider) => {
  const each = eachMigratedDatabase(provider);

  function world() {
    const { database } = each;
    const clock = new RigClock();
    clock.hold();
    const inbox = new Inbox(inboxQueries(database.db), database);
    const outbox = new Outbox(effectsQueries(database.db), database);
    const logs: string[] = [];
    const replica = (id: string) =>
      new Replicas(
        {
          queries: replicaQueries(database.db),
          clock,
          log: { info: (_o, m) => logs.push(m), warn: (_o, m) => logs.push(m) },
          release: async (owner) => ({
            deliveries: await inbox.releaseHeldBy(owner),
            effects: await outbox.releaseHeldBy(owner),
          }),
        },
        { id },
      );
    /** `owner` claims a delivery and an effect, each under a lease of an hour. */
    const hold = async (owner: string, n: number) => {
      await inbox.record({
        deliveryId: `d${n}`,
        event: "issues",
        action: "labeled",
        installationId: "1",
        taskKey: `1/o/r#${n}`,
        payload: "{}",
      });
      const [d] = await inbox.claim(owner, 1, HOUR, new Set(), clock.now());
      const e = await database.db.effect.create({
        data: {
          id: `e${n}`,
          key: `comment:${n}`,
          installationId: 1,
          repo: "o/r",
          kind: "comment",
          payload: "{}",
          state: "running",
          lockedBy: owner,
          lockedUntil: new Date(clock.now().getTime() + HOUR),
          nextAttemptAt: clock.now(),
          createdAt: clock.now(),
        },
      });
      return { delivery: d!, effect: e };
    };
    const beats = async (replicas: Replicas[], seconds: number) => {
      const out = [];
      for (let t = 0; t < seconds * 1_000; t += REPLICA_BEAT_MS) {
        for (const r of replicas) out.push(...(await r.beat()));
        clock.advance(REPLICA_BEAT_MS);
      }
      return out;
    };
    return { database, clock, inbox, outbox, logs, replica, hold, beats };
  }

  test("a replica whose beat stands still has its delivery and effect released to the others, and loses them", async () => {
    const w = world();
    const a = w.replica("a");
    const b = w.replica("b");
    await a.beat();
    const held = await w.hold("a", 1);
    // a is killed: it beats no more. b watches it for less than the silent time: nothing moves.
    expect(await w.beats([b], REPLICA_SILENT_MS / 1_000)).toEqual([]);
    expect(await w.inbox.claim("b", 1, HOUR, new Set(), w.clock.now())).toEqual([]);
    const [takeover] = await w.beats([b], REPLICA_BEAT_MS / 1_000);
    expect(takeover).toMatchObject({ id: "a", deliveries: 1, effects: 1, pid: process.pid });

    // b now takes the delivery, an hour before a's lease would have run out; the effect is due, to be read first.
    const [again] = await w.inbox.claim("b", 1, HOUR, new Set(), w.clock.now());
    expect(again?.deliveryId).toBe("d1");
    expect(again?.attempts).toBe(held.delivery.attempts + 1);
    const effect = await w.database.db.effect.findUnique({ where: { id: "e1" } });
    expect(effect).toMatchObject({ state: "pending", lockedBy: null, lockedUntil: null, maybeSent: true });
    // a, should it wake up, holds nothing any more.
    expect(await w.inbox.renew(held.delivery.seq, "a", HOUR, w.clock.now())).toBe(false);
    expect(await w.inbox.complete(held.delivery.seq, "a", "done", w.clock.now())).toBe(false);
    expect(await w.outbox.renew(held.effect, "a", HOUR, w.clock.now())).toBe(false);
    expect((await w.database.db.replica.findMany()).map((r) => r.id)).toEqual(["b"]);
    expect(w.logs.filter((l) => l.includes("stopped beating"))).toHaveLength(1);
  });

  test("a replica that keeps beating keeps what it holds, however long it is watched", async () => {
    const w = world();
    const a = w.replica("a");
    const b = w.replica("b");
    const held = await w.hold("a", 1);
    expect(await w.beats([a, b], 60)).toEqual([]);
    expect(await w.inbox.renew(held.delivery.seq, "a", HOUR, w.clock.now())).toBe(true);
    expect((await w.database.db.effect.findUnique({ where: { id: "e1" } }))?.lockedBy).toBe("a");
    expect((await w.database.db.replica.findMany({ orderBy: { id: "asc" } })).map((r) => r.id)).toEqual(["a", "b"]);
  });

  test("after its own long silence an observer watches afresh before it judges anyone", async () => {
    const w = world();
    const a = w.replica("a");
    const b = w.replica("b");
    await w.hold("a", 1);
    await w.beats([a, b], 4);
    // Both stalled for a minute (the database did not answer): a beats again a moment after b.
    w.clock.advance(60_000);
    expect(await b.beat()).toEqual([]);
    await a.beat();
    expect(await w.beats([a, b], 20)).toEqual([]);
    expect((await w.database.db.effect.findUnique({ where: { id: "e1" } }))?.lockedBy).toBe("a");
  });

  test("a replica started after one was killed releases what the dead one held once it has watched for the silent time", async () => {
    const w = world();
    const dead = w.replica("dead");
    await dead.beat();
    await w.hold("dead", 1);
    await w.hold("dead", 2);
    w.clock.advance(500);
    const fresh = w.replica("fresh");
    const takeovers = await w.beats([fresh], REPLICA_SILENT_MS / 1_000 + REPLICA_BEAT_MS / 1_000);
    expect(takeovers.map((t) => [t.id, t.deliveries, t.effects])).toEqual([["dead", 2, 2]]);
    expect(await w.database.db.delivery.count({ where: { state: "processing" } })).toBe(0);
  });

  test("a replica stopped in order deletes its row, and a dead one that held nothing is forgotten quietly", async () => {
    const w = world();
    const a = w.replica("a");
    const b = w.replica("b");
    const c = w.replica("c");
    await w.beats([a, b, c], 2);
    await a.stop();
    expect((await w.database.db.replica.findMany({ orderBy: { id: "asc" } })).map((r) => r.id)).toEqual(["b", "c"]);
    // c is killed holding nothing.
    const takeovers = await w.beats([b], REPLICA_SILENT_MS / 1_000 + REPLICA_BEAT_MS / 1_000);
    expect(takeovers.map((t) => [t.id, t.deliveries, t.effects])).toEqual([["c", 0, 0]]);
    expect((await w.database.db.replica.findMany()).map((r) => r.id)).toEqual(["b"]);
    expect(w.logs.filter((l) => l.includes("held nothing"))).toHaveLength(1);
  });
});
