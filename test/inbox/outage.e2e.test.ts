/**
 * A GitHub outage, end to end on simulated time: the real App and its inbox
 * processor against the fake GitHub, the clock moved forward to each retry
 * instead of waiting for it. A delivery whose handler fails on 502 keeps
 * retrying through six hours of outage, at most ten minutes apart, and is
 * handled once GitHub is back; a rate limit's retry-after is honoured; one
 * refused with a 404 or 422 is parked after a few attempts, saying why and
 * how to replay it.
 */
import { childEnv } from "../support/cli.js";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { eventually } from "../support/orchestra.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { providers } from "../support/databases.js";

const MIN = 60_000;
const HOUR = 60 * MIN;

describe.each(providers.map((p) => [p]))("a GitHub outage on %s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.outage(null);
    await rig.stop();
  });

  const run = promisify(execFile);
  const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");
  /** The `orchestra` command against the running App (from an empty directory: no .env is read). */
  const cli = (...args: string[]) =>
    run(process.execPath, [bin, ...args], {
      cwd: tmpdir(),
      env: childEnv({ ORCHESTRA_URL: rig.app.url, ORCHESTRA_ADMIN_TOKEN: rig.app.adminToken }),
    });

  /** Sends the labeled event of a queued issue; answers the delivery id (the webhook is stored, not yet handled). */
  async function sendQueued(issue: number): Promise<string> {
    rig.fake.state.addIssue(REPO, {
      number: issue,
      title: `Issue ${issue}`,
      body: "Do it",
      labels: ["agent:queued"],
      user: "alice",
    });
    const payload = fakeWebhookPayload(rig.fake, "issues", "labeled", {
      repo: REPO,
      issue,
      label: "agent:queued",
      sender: "alice",
    });
    const { status, deliveryId } = await rig.post("issues", payload);
    expect(status).toBe(202);
    return deliveryId;
  }

  const row = (deliveryId: string) => rig.app.database.db.delivery.findUniqueOrThrow({ where: { deliveryId } });

  /** Waits until attempt `n` has been made and its outcome recorded (not in flight). */
  const attemptRecorded = (deliveryId: string, n: number) =>
    eventually(
      async () => {
        const r = await row(deliveryId);
        return r.attempts >= n && r.state !== "processing" ? r : undefined;
      },
      10_000,
      `attempt ${n} of ${deliveryId} recorded`,
    );

  /** Moves the simulated clock to the delivery's next attempt and has the processor look now. */
  async function toNextAttempt(deliveryId: string): Promise<void> {
    const r = await row(deliveryId);
    rig.clock.advanceTo(r.nextAttemptAt);
    rig.app.orchestra.processor.poke();
  }

  const summary = async () =>
    ((await (await rig.app.admin("/api/v1/deliveries")).json()) as { summary: Record<string, number> }).summary;

  test("a delivery failing on 502 retries for 6 h of simulated time, at most 10 min apart, and is handled once GitHub is back", async () => {
    rig = await startRig({ provider });
    rig.fake.outage({ status: 502 });
    const start = rig.clock.now().getTime();
    const id = await sendQueued(5);

    // Attempt n fails at simulated time failedAt[n]; the next is due at nextAttemptAt.
    const failedAt: number[] = [];
    const scheduled: number[] = [];
    for (let n = 1; ; n++) {
      const r = await attemptRecorded(id, n);
      expect(r.state).toBe("pending");
      const ring = JSON.parse(r.errors) as Array<{ at: string; class: string }>;
      expect(ring.at(-1)!.class).toBe("github-502");
      failedAt.push(Date.parse(ring.at(-1)!.at));
      scheduled.push(r.nextAttemptAt.getTime() - failedAt.at(-1)!);
      if (r.nextAttemptAt.getTime() > start + 6 * HOUR - MIN) break;
      await toNextAttempt(id);
    }
    // 5 h 59 min into the outage: still retrying, not parked.
    rig.clock.advanceTo(start + 6 * HOUR - MIN);
    rig.app.orchestra.processor.poke();
    const r = await row(id);
    expect(r).toMatchObject({ state: "pending", attempts: failedAt.length });
    expect(r.firstFailedAt!.getTime()).toBe(failedAt[0]);
    expect(failedAt.at(-1)! - start).toBeGreaterThanOrEqual(6 * HOUR - 11 * MIN);
    // Every retry was scheduled at most 10 min after the failure before it; each
    // attempt ran when due (the clock is moved exactly there; the slack is the
    // real milliseconds an attempt takes).
    expect(Math.max(...scheduled)).toBeLessThanOrEqual(10 * MIN);
    const gaps = failedAt.slice(1).map((t, i) => t - failedAt[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(10 * MIN + 5_000);
    expect(failedAt.length).toBeGreaterThanOrEqual(36);
    // Not a hot loop: the first retries back off from seconds.
    expect(scheduled[0]).toBeGreaterThanOrEqual(1_500);
    expect(scheduled[4]).toBeGreaterThan(scheduled[0]!);
    expect(await summary()).toMatchObject({ retrying: 1, parked: 0, pending: 0 });
    const listed = await cli("deliveries", "--state", "retrying");
    expect(listed.stdout).toContain("retrying=1");
    expect(listed.stdout).toMatch(
      new RegExp(
        `${id}  issues\\.labeled  retrying  attempts=${failedAt.length}  failing since ${new Date(failedAt[0]!).toISOString()}`,
      ),
    );

    // GitHub is back: the next attempt handles it, and the task is queued.
    rig.fake.outage(null);
    await toNextAttempt(id);
    await eventually(async () => ((await row(id)).state === "done" ? true : undefined), 10_000, "the delivery handled");
    expect((await row(id)).attempts).toBe(failedAt.length + 1);
    expect((await rig.task(5)).task).toMatchObject({ state: "queued" });
    expect(await summary()).toMatchObject({ retrying: 0, parked: 0, done: expect.any(Number) });
  });

  test("a delivery failing on 502 past the window is parked, saying what failed, for how long, and how to replay it", async () => {
    rig = await startRig({ provider, env: { ORCHESTRA_RETRY_WINDOW_HOURS: "1" } });
    rig.fake.outage({ status: 503 });
    const start = rig.clock.now().getTime();
    const id = await sendQueued(6);
    let n = 1;
    for (; (await attemptRecorded(id, n)).state === "pending"; n++) await toNextAttempt(id);
    const r = await row(id);
    expect(r.state).toBe("parked");
    const ring = JSON.parse(r.errors) as Array<{ at: string; class: string; message: string }>;
    const parkedAt = Date.parse(ring.at(-1)!.at);
    expect(parkedAt - start).toBeGreaterThanOrEqual(HOUR);
    expect(parkedAt - start).toBeLessThan(HOUR + 10 * MIN + 5_000);
    expect(ring.at(-1)!.class).toBe("parked");
    expect(ring.at(-1)!.message).toMatch(
      new RegExp(
        `^parked after GitHub server errors \\(5xx\\) for 1 h( \\d+ min)?: ${n} attempts, and the retry window is 1 h\\. Fix the cause, then run: orchestra replay ${id}$`,
      ),
    );
    expect(await summary()).toMatchObject({ retrying: 0, parked: 1 });
    const listed = await cli("deliveries", "--state", "parked");
    expect(listed.stdout).toContain(`orchestra replay ${id}`);
  });

  test("a delivery hitting a secondary rate limit (403 + retry-after) waits as long as GitHub says, then is handled", async () => {
    rig = await startRig({ provider });
    const message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
    rig.fake.inject({
      method: "GET",
      path: "repos/get-collaborator-permission-level",
      status: 403,
      body: { message },
      headers: { "retry-after": "120" },
      times: 1,
    });
    const id = await sendQueued(8);
    const r = await attemptRecorded(id, 1);
    expect(r.state).toBe("pending");
    const ring = JSON.parse(r.errors) as Array<{ at: string; class: string }>;
    expect(ring[0]!.class).toBe("rate-limit");
    // Honoured: not the 2 s backoff of a first failure, but the 120 s GitHub asked for.
    expect(r.nextAttemptAt.getTime() - Date.parse(ring[0]!.at)).toBeGreaterThanOrEqual(119_000);
    await toNextAttempt(id);
    await eventually(async () => ((await row(id)).state === "done" ? true : undefined), 10_000, "the delivery handled");
    expect((await rig.task(8)).task).toMatchObject({ state: "queued" });
  });

  test.each([404, 422])(
    "a delivery failing on a deterministic %i is parked after 5 attempts within a minute",
    async (status) => {
      rig = await startRig({ provider });
      rig.fake.inject({ method: "GET", path: "repos/get-collaborator-permission-level", status, times: Infinity });
      const start = rig.clock.now().getTime();
      const id = await sendQueued(7);
      let n = 1;
      for (; (await attemptRecorded(id, n)).state === "pending"; n++) await toNextAttempt(id);
      expect(n).toBe(5);
      const r = await row(id);
      expect(r.state).toBe("parked");
      const ring = JSON.parse(r.errors) as Array<{ at: string; class: string; message: string; count?: number }>;
      expect(ring[0]).toMatchObject({ class: `github-${status}`, count: 5 });
      expect(Date.parse(ring.at(-1)!.at) - start).toBeLessThan(MIN);
      expect(ring.at(-1)!.message).toMatch(
        new RegExp(
          `^parked after a failure that retrying does not fix .*: 5 attempts over \\d+ s\\. Fix the cause, then run: orchestra replay ${id}$`,
        ),
      );
      expect(rig.fake.requestsFor("repos/get-collaborator-permission-level")).toHaveLength(5);
      expect(
        rig.app.logs.some(
          (l) =>
            String(l["msg"]).startsWith("inbox: delivery parked after 5 attempts") &&
            String(l["msg"]).includes(`orchestra replay ${id}`),
        ),
      ).toBe(true);

      // Replay, an hour later, gives a fresh budget and a fresh window.
      rig.clock.advance(HOUR);
      expect((await cli("replay", id)).stdout.trim()).toBe(`${id} queued again`);
      const again = await eventually(
        async () => {
          const x = await row(id);
          return x.state === "pending" && x.attempts === 1 ? x : undefined;
        },
        10_000,
        "the replayed attempt",
      );
      expect(again.firstFailedAt!.getTime()).toBeGreaterThanOrEqual(r.firstFailedAt!.getTime() + HOUR);
    },
  );
});
