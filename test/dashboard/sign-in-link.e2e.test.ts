/**
 * A sign-in link (made with the admin token, as `npm run demo` prints one) against the running App, on each
 * database: it answers a session cookie once; a second use, an expired, a forged or another service's link does
 * not, and forged ones count as wrong tokens.
 */
import { startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { signInLink } from "../../src/dashboard/session.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    await rig.stop();
  });

  const open = (code: string, cookie?: string) =>
    fetch(`${rig.app.url}/dashboard/sign-in/link?code=${encodeURIComponent(code)}`, {
      redirect: "manual",
      headers: cookie ? { cookie } : {},
    });
  const dashboard = (cookie: string) => fetch(`${rig.app.url}/dashboard`, { redirect: "manual", headers: { cookie } });

  test("a link signs in once: a session cookie and the fleet; used again, expired or forged it shows the sign-in page", async () => {
    rig = await startRig({ provider });
    const link = signInLink(rig.app.adminToken, rig.clock.now(), 600_000);
    const first = await open(link.code);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/dashboard");
    const cookie = first.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^orchestra_session=[^;]+; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const page = await dashboard(cookie.split(";")[0]!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h2 id="queue-h">Queue');

    const again = await open(link.code);
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    const text = await again.text();
    expect(text).toContain("That sign-in link does not work");
    expect(text).toContain('<form class="signin" method="post" action="/dashboard/sign-in">');

    const late = signInLink(rig.app.adminToken, rig.clock.now(), 60_000);
    rig.clock.advance(61_000);
    expect((await open(late.code)).status).toBe(401);
    const elsewhere = signInLink("another-service-admin-token-0123456789", rig.clock.now(), 600_000);
    expect((await open(elsewhere.code)).status).toBe(401);
    expect(await rig.app.database.db.signedOutSession.count()).toBe(1);
  });

  test("forged links count as wrong tokens: the eleventh within a minute is answered 429; a good link still works", async () => {
    rig = await startRig({ provider });
    const answers: number[] = [];
    for (let i = 0; i < 11; i++)
      answers.push((await open(`${Date.now() + 60_000}.forged${i}.${"A".repeat(43)}`)).status);
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(401));
    const last = await open(`${Date.now() + 60_000}.forged.${"A".repeat(43)}`);
    expect(last.status).toBe(429);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
    const good = await open(signInLink(rig.app.adminToken, rig.clock.now(), 600_000).code);
    expect(good.status).toBe(303);
  });
});
