/**
 * The dashboard over plain HTTP against the running App, on each database:
 * sign-in and its cookie, what a page refuses (no session, a forged cookie,
 * a post without the session's CSRF token or from another site), that text
 * from GitHub is escaped, and that every view renders the seeded fleet.
 * The same views in a real browser are in browser.e2e.test.ts.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { fleetConfig, seedFleet, QUESTION } from "../support/dashboard.js";
import { startOrchestra } from "../support/orchestra.js";
import { messageSeal } from "../../src/dashboard/session.js";

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
  redirect: "manual" as const,
});

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function signIn(): Promise<string> {
    const res = await fetch(
      `${rig.app.url}/dashboard/sign-in`,
      form({ token: rig.app.adminToken, next: "/dashboard" }),
    );
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard");
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^orchestra_session=[^;]+; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    return cookie.split(";")[0]!;
  }
  const get = (path: string, cookie?: string) =>
    fetch(rig.app.url + path, { redirect: "manual", headers: cookie ? { cookie } : {} });
  /** The seal Orchestra puts on a message it carries through a redirect. */
  const seal = (kind: "notice" | "error", text: string) => messageSeal(rig.app.adminToken, kind, text);
  const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)![1]!;

  test("sign-in: the admin token gives an HttpOnly, SameSite=Strict session cookie; without one every page sends you to sign in", async () => {
    rig = await startRig({ provider });
    const away = await get("/dashboard/tasks/abc");
    expect(away.status).toBe(303);
    expect(away.headers.get("location")).toBe("/dashboard/sign-in?next=%2Fdashboard%2Ftasks%2Fabc");
    const signInPage = await get("/dashboard/sign-in?next=https://evil.example/");
    expect(await signInPage.text()).toContain('<input type="hidden" name="next" value="/dashboard">');

    // A crafted link cannot put its own words on the sign-in page: only Orchestra's messages, by their code.
    const crafted = "Orchestra moved: sign in at https://evil.example with your admin token";
    const craftedPage = await (
      await get(`/dashboard/sign-in?error=${encodeURIComponent(crafted)}&notice=${encodeURIComponent(crafted)}`)
    ).text();
    expect(craftedPage).not.toContain("evil.example");
    expect(craftedPage).not.toContain('role="alert"');
    expect(craftedPage).not.toContain('role="status"');
    expect(await (await get("/dashboard/sign-in?notice=signed-out")).text()).toContain(
      '<p class="notice" role="status">Signed out.</p>',
    );

    const wrong = await fetch(`${rig.app.url}/dashboard/sign-in`, form({ token: "guess", next: "/dashboard" }));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expect(await wrong.text()).toContain("That is not the admin token.");

    const cookie = await signIn();
    const page = await get("/dashboard", cookie);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(await page.text()).toContain('<h2 id="queue-h">Queue');
    const css = await get("/dashboard/assets/style.css");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");

    // A forged or tampered cookie is no session.
    const [name, value] = cookie.split("=") as [string, string];
    for (const bad of [
      `${name}=${value.slice(0, -2)}xx`,
      `${name}=1.abc.${"A".repeat(43)}`,
      `${name}=${String(Date.now() + 1e9)}${value.slice(value.indexOf("."))}`,
    ]) {
      expect((await get("/dashboard", bad)).status).toBe(303);
    }

    // Signing out clears the cookie.
    const out = await fetch(`${rig.app.url}/dashboard/sign-out`, {
      ...form({ csrf: csrfOf(await (await get("/dashboard", cookie)).text()) }),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(
      /^orchestra_session=; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=0$/,
    );
    expect(out.headers.get("location")).toBe("/dashboard/sign-in?notice=signed-out");
  });

  test("signing out ends the session on every replica: a copy of its cookie is refused, the others still work", async () => {
    rig = await startRig({ provider });
    const other = await startOrchestra({
      db: rig.db,
      clock: rig.clock,
      env: { ORCHESTRA_ADMIN_TOKEN: rig.app.adminToken },
    });
    try {
      const cookie = await signIn();
      const kept = await signIn();
      const csrf = csrfOf(await (await get("/dashboard", cookie)).text());
      const onOther = (path: string, c: string) =>
        fetch(other.url + path, { redirect: "manual", headers: { cookie: c } });
      expect((await onOther("/dashboard", cookie)).status).toBe(200);

      const out = await fetch(`${rig.app.url}/dashboard/sign-out`, {
        ...form({ csrf }),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      });
      expect(out.status).toBe(303);

      // The copied cookie, as it was before signing out: refused here and on the other replica.
      for (const answer of [await get("/dashboard", cookie), await onOther("/dashboard", cookie)]) {
        expect(answer.status).toBe(303);
        expect(answer.headers.get("location")).toBe("/dashboard/sign-in?next=%2Fdashboard");
      }
      const action = await fetch(`${other.url}/dashboard/tasks/t-1/retry`, {
        ...form({ csrf }),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      });
      expect(action.status).toBe(401);
      // Another session of the operator is not signed out with it.
      expect((await onOther("/dashboard", kept)).status).toBe(200);
      expect((await get("/dashboard", kept)).status).toBe(200);

      // The record lasts as long as the cookie would have: it is deleted at the next sign-out after its expiry.
      const records = () => rig.app.database.db.signedOutSession.count();
      expect(await records()).toBe(1);
      rig.clock.advance(12 * 3_600_000);
      const fresh = await signIn();
      await fetch(`${rig.app.url}/dashboard/sign-out`, {
        ...form({ csrf: csrfOf(await (await get("/dashboard", fresh)).text()) }),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: fresh },
      });
      expect(await records()).toBe(1);
    } finally {
      await other.stop();
    }
  });

  test("every view shows the seeded fleet; text from GitHub is escaped; actions need the session's CSRF token", async () => {
    rig = await startRig({ provider });
    fleetConfig(rig);
    rig.fake.state.addIssue(REPO, {
      number: 9,
      title: `<script>alert("x")</script> & co`,
      body: "",
      labels: [],
      user: "alice",
    });
    const fleet = await seedFleet(rig);
    await rig.deliver("issues", "labeled", { issue: 9, label: "agent:queued", sender: "alice" });
    const cookie = await signIn();

    const overview = await (await get("/dashboard", cookie)).text();
    expect(overview).not.toContain("<script>");
    expect(overview).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co");
    expect(overview).toContain(QUESTION);
    expect(overview).toMatch(/<b>phantom<\/b>/);
    expect(overview).toContain(`<code>${fleet.leased.runId}</code>`);
    expect(overview).toContain(`<code>${fleet.parkedDelivery}</code>`);
    expect(overview).toContain(`<code>${fleet.parkedEffect}</code>`);
    expect(overview).toMatch(/aria-label="Runs by class, last 24 hours: [^"]*1 phantom/);
    expect(overview).toMatch(/aria-label="GitHub calls per hour, last 24 hours: [1-9]\d* reads, [1-9]\d* writes"/);
    const queueOrder = [
      ...overview.matchAll(
        new RegExp(`${REPO}/issues/(\\d+)">${REPO}#\\d+</a></td><td><a href="/dashboard/tasks/`, "g"),
      ),
    ].map((m) => Number(m[1]));
    expect(queueOrder.slice(0, 4)).toEqual([4, 5, 6, 9]);

    const taskPage = await (await get(`/dashboard/tasks/${fleet.failed.id}`, cookie)).text();
    expect(taskPage).toContain(`href="${rig.fake.url}/${REPO}/issues/1"`);
    expect(taskPage).toMatch(/<td><b>phantom<\/b><\/td><td>delete-branch-requeue<\/td>/);
    expect(taskPage).toContain('<h2 id="cost-h">Cost</h2>');
    const missing = await get("/dashboard/tasks/nope", cookie);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain("There is no task nope.");

    const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(rig.app.url + path, {
        ...form(fields),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
      });
    const csrf = csrfOf(overview);
    const noToken = await post(`/dashboard/tasks/${fleet.failed.id}/retry`, {});
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { error: string }).error).toMatch(/CSRF token/);
    for (const origin of ["https://evil.example", "not a url"])
      expect((await post(`/dashboard/tasks/${fleet.failed.id}/retry`, { csrf }, { origin })).status).toBe(403);
    const noSession = await fetch(`${rig.app.url}/dashboard/tasks/${fleet.failed.id}/retry`, form({ csrf }));
    expect(noSession.status).toBe(401);
    expect((await db().task.findUniqueOrThrow({ where: { id: fleet.failed.id } })).state).toBe("failed");

    for (const [path, error] of [
      ["/dashboard/tasks/no-such-task/retry", "no task no-such-task"],
      ["/dashboard/tasks/a%2Fb%22c/hold", 'no task a/b"c'],
      [
        `/dashboard/tasks/${fleet.failed.id}/frobnicate`,
        "no action frobnicate; the actions are retry, resume, hold, cancel",
      ],
      [
        "/dashboard/effects/no-such-effect/replay",
        "Effect no-such-effect is not parked (or does not exist); only parked effects can be replayed.",
      ],
      [
        `/dashboard/deliveries/${encodeURIComponent("タスク")}/replay`,
        "Delivery タスク is not parked (or does not exist); only parked deliveries can be replayed.",
      ],
    ]) {
      const r = await post(path!, { csrf }, { referer: `${rig.app.url}/dashboard` });
      expect({ path, status: r.status, location: r.headers.get("location") }).toEqual({
        path,
        status: 303,
        location: `/dashboard?error=${encodeURIComponent(error!)}&seal=${seal("error", error!)}#parked`,
      });
    }
    // The sealed message shows on the page it leads to; the same words with no seal, or a seal of other words, do not.
    const said = "no task no-such-task";
    const sealedPage = await (
      await get(`/dashboard?error=${encodeURIComponent(said)}&seal=${seal("error", said)}`, cookie)
    ).text();
    expect(sealedPage).toContain('role="alert"');
    const crafted = "Orchestra moved: sign in at https://evil.example";
    for (const query of [
      `error=${encodeURIComponent(crafted)}`,
      `error=${encodeURIComponent(crafted)}&seal=${seal("error", said)}`,
      `notice=${encodeURIComponent(crafted)}&seal=${seal("error", crafted)}`,
    ]) {
      const forged = await (await get(`/dashboard?${query}`, cookie)).text();
      expect({ query, shown: forged.includes("evil.example") }).toEqual({ query, shown: false });
    }

    const retried = await post(
      `/dashboard/tasks/${fleet.failed.id}/retry`,
      { csrf },
      { referer: `${rig.app.url}/dashboard/tasks/${fleet.failed.id}` },
    );
    expect(retried.status).toBe(303);
    expect(retried.headers.get("location")).toBe(
      `/dashboard/tasks/${fleet.failed.id}?notice=${encodeURIComponent("retry: done; the task is queued.")}` +
        `&seal=${seal("notice", "retry: done; the task is queued.")}`,
    );
    const held = await post(
      `/dashboard/tasks/${fleet.queued[0]!.id}/hold`,
      { csrf },
      { referer: `${rig.app.url}/dashboard/tasks/${fleet.queued[0]!.id}` },
    );
    expect(decodeURIComponent(held.headers.get("location")!)).toBe(
      `/dashboard/tasks/${fleet.queued[0]!.id}?notice=hold: done; the task is blocked.` +
        `&seal=${seal("notice", "hold: done; the task is blocked.")}`,
    );
    const blockedRows = /aria-label="Blocked tasks">(.*?)<\/table>/s.exec(
      await (await get("/dashboard", cookie)).text(),
    )![1]!;
    expect(blockedRows).toContain(QUESTION);
    expect(blockedRows).toMatch(
      new RegExp(`issues/${fleet.queued[0]!.issue}">.*?<td>[^<]*orchestra hold[^<]*</td>`, "s"),
    );
    const refused = await post(
      `/dashboard/tasks/${fleet.leased.id}/resume`,
      { csrf },
      { referer: `${rig.app.url}/dashboard/tasks/${fleet.leased.id}` },
    );
    expect(refused.status).toBe(303);
    expect(decodeURIComponent(refused.headers.get("location")!)).toMatch(
      new RegExp(`^/dashboard/tasks/${fleet.leased.id}\\?error=resume refused: `),
    );
  });

  const db = () => rig.app.database.db;
});
