/**
 * Guessing tokens against the running App: after 10 wrong tokens from one
 * address within a minute (admin token on the API or at the dashboard's
 * sign-in, worker tokens, all counted together), further wrong tokens from it
 * get 429 with Retry-After until the minute is over; a right token is never
 * held back, and other addresses are not affected.
 */
import { request } from "node:http";
import { startRig, type Rig } from "../support/lifecycle-rig.js";
import { throttleKey, TokenThrottle } from "../../src/http/throttle.js";

/** A GET from a chosen loopback address (127.0.0.2 is another client to the App listening on 127.0.0.1). */
function getFrom(
  url: string,
  localAddress: string,
  token: string,
): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, retryAfter: res.headers["retry-after"], body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("failed token attempts", () => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("the 11th wrong token in a minute gets 429 with Retry-After; the right token still works", async () => {
    rig = await startRig();
    rig.clock.hold();
    const worker = await rig.worker("w");
    const tasks = `${rig.app.url}/api/v1/tasks`;
    const wrong = (i: number) => getFrom(tasks, "127.0.0.1", `guess-${i}`);

    for (let i = 1; i <= 10; i++) {
      const r = await wrong(i);
      expect({ i, status: r.status, error: (JSON.parse(r.body) as { error: string }).error }).toEqual({
        i,
        status: 401,
        error: "token is not the admin token",
      });
      rig.clock.advance(1_000);
    }
    // 10 s into the minute: the 11th wrong token, of any kind, waits out the 50 s left.
    const throttled = await wrong(11);
    expect(throttled.status).toBe(429);
    expect(throttled.retryAfter).toBe("50");
    expect(JSON.parse(throttled.body)).toEqual({
      error:
        "too many wrong tokens from this address: wait 50 s before trying again; " +
        "the admin token is ORCHESTRA_ADMIN_TOKEN in the service's environment",
      retryAfterSeconds: 50,
    });
    const badWorker = await getFrom(`${rig.app.url}/api/v1/workers/me/runs`, "127.0.0.1", "not-a-worker-token");
    expect([badWorker.status, badWorker.retryAfter]).toEqual([429, "50"]);
    const signIn = await fetch(`${rig.app.url}/dashboard/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: "guess", next: "/dashboard" }).toString(),
      redirect: "manual",
    });
    expect([signIn.status, signIn.headers.get("retry-after"), signIn.headers.get("set-cookie")]).toEqual([
      429,
      "50",
      null,
    ]);
    expect(await signIn.text()).toContain("too many wrong tokens from this address: wait 50 s before trying again;");

    // The right tokens go through from the throttled address, at once.
    expect((await getFrom(tasks, "127.0.0.1", rig.app.adminToken)).status).toBe(200);
    expect((await worker.call("GET", "/api/v1/workers/me/runs")).status).toBe(200);
    const signedIn = await fetch(`${rig.app.url}/dashboard/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: rig.app.adminToken, next: "/dashboard" }).toString(),
      redirect: "manual",
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("set-cookie")).toMatch(/^orchestra_session=/);

    // Another address has its own count.
    expect((await getFrom(tasks, "127.0.0.2", "guess")).status).toBe(401);

    // A minute after the first failure the address starts again.
    rig.clock.advance(49_999);
    expect((await wrong(12)).status).toBe(429);
    rig.clock.advance(1);
    expect((await wrong(13)).status).toBe(401);
  });
});

test.each([
  ["127.0.0.1", "127.0.0.1"],
  ["::ffff:10.1.2.3", "10.1.2.3"],
  ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
  ["2001:0db8:0001:0002::7", "2001:db8:1:2::/64"],
  ["2001:db8::1", "2001:db8:0:0::/64"],
  ["::1", "0:0:0:0::/64"],
  [undefined, "unknown"],
])("throttleKey(%j) → %j", (address, key) => {
  expect(throttleKey(address)).toBe(key);
});

test("the throttle counts at most maxAddresses addresses, dropping the oldest window first", () => {
  let now = 0;
  const throttle = new TokenThrottle({ now: () => new Date(now) }, { limit: 1, windowMs: 60_000, maxAddresses: 3 });
  const from = (remoteAddress: string) => ({ socket: { remoteAddress } }) as never;
  expect(throttle.failed(from("10.0.0.1"))).toBeNull();
  expect(throttle.failed(from("10.0.0.1"))).toBe(60);
  for (const a of ["10.0.0.2", "10.0.0.3", "10.0.0.4"]) {
    now += 1_000;
    expect(throttle.failed(from(a))).toBeNull();
  }
  expect(throttle.size).toBe(3);
  // 10.0.0.1 was the oldest and was dropped: it starts again (and pushes out 10.0.0.2); 10.0.0.3 is still counted.
  expect(throttle.failed(from("10.0.0.1"))).toBeNull();
  expect(throttle.failed(from("10.0.0.3"))).toBe(59);
  expect(throttle.size).toBe(3);
});
