/**
 * GET /api/v1/replicas: the operator's view of who is running. Two Apps on
 * one database each list both, say which one answered, and how long ago each
 * beat; the list is for the admin token only, and a replica stopped in order
 * is gone from it.
 */
import { startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { startOrchestra, type Running } from "../support/orchestra.js";
import { eventually } from "../support/orchestra.js";

interface Listed {
  self: string;
  replicas: Array<{ id: string; host: string; pid: number; startedAt: string; beatAt: string; beatAgoSeconds: number }>;
}

describe.each(providers)("%s", (provider) => {
  let rig: Rig;
  let second: Running | undefined;
  afterEach(async () => {
    await second?.stop();
    second = undefined;
    await rig.stop();
  });

  test("each replica lists every beating replica and says which one answered; stopped ones leave", async () => {
    rig = await startRig({ provider });
    second = await startOrchestra({ db: rig.db, github: rig.fake, clock: rig.clock, sweepMs: 3_600_000 });
    expect((await fetch(`${rig.app.url}/api/v1/replicas`)).status).toBe(401);

    const list = async (app: Running) => (await (await app.admin("/api/v1/replicas")).json()) as Listed;
    const ids = [rig.app.orchestra.replicas.id, second.orchestra.replicas.id].sort();
    const fromFirst = await eventually(async () => {
      const l = await list(rig.app);
      return l.replicas.length === 2 ? l : undefined;
    });
    expect(fromFirst.self).toBe(rig.app.orchestra.replicas.id);
    expect(fromFirst.replicas.map((r) => r.id).sort()).toEqual(ids);
    for (const r of fromFirst.replicas) {
      expect(r).toMatchObject({ pid: process.pid, host: rig.app.orchestra.replicas.host });
      expect(r.beatAgoSeconds).toBeGreaterThanOrEqual(0);
      expect(Date.parse(r.beatAt)).toBeGreaterThanOrEqual(Date.parse(r.startedAt));
    }
    expect((await list(second)).self).toBe(second.orchestra.replicas.id);

    await second.stop();
    second = undefined;
    expect((await list(rig.app)).replicas.map((r) => r.id)).toEqual([rig.app.orchestra.replicas.id]);
  });
});
