/**
 * The dashboard in headless Chromium against the running App and a seeded
 * fleet: sign-in, every view's content, accessible names on every control,
 * and the operator's actions: a retry from the task page that shows up as
 * the queue label on the fake GitHub, and replays of a parked effect and a
 * parked delivery. A screenshot of each view goes to artifacts/screenshots/.
 */
import type { Browser, Page } from "playwright-core";
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { eventually } from "../support/orchestra.js";
import { fleetConfig, seedFleet, QUESTION, type SeededFleet } from "../support/dashboard.js";
import { browserRequired, chromiumPath, launchBrowser, screenshotPath } from "../support/browser.js";

const available = chromiumPath() !== null || browserRequired();
if (!available)
  console.warn(
    "dashboard browser tests skipped: no Chromium found (apt-get install chromium, or set ORCHESTRA_TEST_CHROMIUM)",
  );
const maybe = available ? describe : describe.skip;

maybe("the dashboard in Chromium", () => {
  let browser: Browser;
  let rig: Rig;
  let fleet: SeededFleet;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    rig = await startRig({ provider: "sqlite" });
    fleetConfig(rig);
    fleet = await seedFleet(rig);
    page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
    page.setDefaultTimeout(10_000);
  });
  afterAll(async () => {
    await browser?.close();
    rig?.fake.assertNoViolations();
    await rig?.stop();
  });

  /** Every button and link on the page has a name a screen reader can say. */
  async function expectNamedControls(): Promise<void> {
    const unnamed = await page
      .locator("button, a, input:not([type=hidden])")
      .evaluateAll((els) =>
        els
          .filter(
            (e) =>
              !(
                e.getAttribute("aria-label") ||
                e.textContent?.trim() ||
                (e.id && e.ownerDocument.querySelector(`label[for="${e.id}"]`))
              ),
          )
          .map((e) => e.outerHTML),
      );
    expect(unnamed).toEqual([]);
  }

  test("sign-in: a wrong token is refused, the admin token opens the fleet with an HttpOnly SameSite=Strict cookie", async () => {
    await page.goto(`${rig.app.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    await expectNamedControls();
    await page.screenshot({ path: screenshotPath("sign-in"), fullPage: true });

    await page.getByLabel("Admin token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("That is not the admin token.");

    await page.getByLabel("Admin token").fill(rig.app.adminToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${rig.app.url}/dashboard`);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: "orchestra_session", httpOnly: true, sameSite: "Strict", path: "/dashboard" });
  });

  test("the fleet overview: counts, health, charts, queue in claim order, lease, blocked question, failed class, parked rows", async () => {
    await page.goto(`${rig.app.url}/dashboard`);
    const tiles = await page.locator("section[aria-labelledby=counts-h] ul.tiles li").allInnerTexts();
    expect(tiles.map((t) => t.replace(/\s+/g, " ").trim())).toEqual([
      "queued 3",
      "claimed 1",
      "review 0",
      "done 0",
      "blocked 1",
      "failed 1",
      "cancelled 0",
      "parked 2",
    ]);

    const limits = page.getByRole("table", { name: "GitHub rate limit" });
    expect(await limits.locator("tbody tr td").first().textContent()).toBe("77");
    expect(await limits.locator("tbody tr td:nth-child(2)").textContent()).toBe("4999 of 5000");
    expect(await page.locator("section[aria-labelledby=health-h]").innerText()).toMatch(/deliveries parked\s+1\b/);

    const runs = page.getByRole("img", { name: /^Runs by class, last 24 hours:/ });
    expect(await runs.getAttribute("aria-label")).toMatch(/1 phantom, 1 question$/);
    expect(await page.getByRole("img", { name: /^GitHub calls per hour/ }).getAttribute("aria-label")).toMatch(
      /: [1-9]\d* reads, [1-9]\d* writes$/,
    );

    const queue = page.getByRole("table", { name: `Queue of ${REPO}` });
    expect(await queue.locator("tbody tr td:nth-child(2)").allTextContents()).toEqual(
      fleet.queued.map((q) => `${REPO}#${q.issue}`),
    );
    expect(await queue.locator("tbody tr").first().textContent()).toContain("next to be claimed");

    const leases = page.getByRole("table", { name: "Live leases" });
    expect(await leases.textContent()).toContain(fleet.leased.runId);
    expect(await leases.locator("tbody tr td:nth-child(6)").textContent()).toMatch(/^\d+ min \d+ s$/);
    expect(await page.getByRole("table", { name: "Blocked tasks" }).textContent()).toContain(QUESTION);
    const failed = page.getByRole("table", { name: "Failed tasks" });
    expect(await failed.locator("tbody tr td:nth-child(3)").textContent()).toBe("phantom");
    expect(await page.getByRole("table", { name: "Parked deliveries" }).textContent()).toContain(fleet.parkedDelivery);
    expect(await page.getByRole("table", { name: "Parked effects" }).textContent()).toContain(fleet.parkedEffect);
    await expectNamedControls();
    await page.screenshot({ path: screenshotPath("fleet"), fullPage: true });
  });

  test("the task page: runs with class, recovery and evidence, effects, cost, and links to GitHub", async () => {
    await page.goto(`${rig.app.url}/dashboard`);
    await page.getByRole("table", { name: "Failed tasks" }).getByRole("link", { name: "Issue 1" }).click();
    await page.waitForURL(`${rig.app.url}/dashboard/tasks/${fleet.failed.id}`);
    expect(await page.getByRole("link", { name: `${REPO}#1` }).getAttribute("href")).toBe(
      `${rig.fake.url}/${REPO}/issues/1`,
    );
    const run = page.getByRole("table", { name: "Runs" }).locator("tbody tr").first();
    expect(await run.locator("td:nth-child(9)").textContent()).toBe("phantom");
    expect(await run.locator("td:nth-child(10)").textContent()).toBe("delete-branch-requeue");
    await run.locator("td:nth-child(11) summary").click();
    expect(await run.locator("td:nth-child(11) pre").textContent()).toContain('"why"');
    expect(await page.getByRole("table", { name: "Effects" }).textContent()).toContain("parked");
    expect(await page.locator("section[aria-labelledby=cost-h]").textContent()).toMatch(
      /GitHub calls\d+ \(\d+ reads, \d+ writes\)/,
    );
    await expectNamedControls();
    await page.screenshot({ path: screenshotPath("task"), fullPage: true });
  });

  test("retry from the task page: the machine requeues the task and the queue label appears on the fake GitHub", async () => {
    await page.goto(`${rig.app.url}/dashboard/tasks/${fleet.failed.id}`);
    expect(rig.labels(1)).toEqual(["agent:failed"]);
    await page.getByRole("button", { name: /^Retry this task/ }).click();
    await page.waitForURL(/\?notice=/);
    expect(await page.getByRole("status").textContent()).toBe("retry: done; the task is queued.");
    await eventually(
      () => (rig.labels(1).join() === "agent:queued" ? true : undefined),
      10_000,
      "agent:queued on issue 1",
    );
    await page.screenshot({ path: screenshotPath("task-after-retry"), fullPage: true });

    await page.getByRole("button", { name: /^Resume this task/ }).click();
    await page.waitForURL(/\?error=/);
    expect(await page.getByRole("alert").textContent()).toMatch(/^resume refused: /);
  });

  test("replay a parked effect and a parked delivery from the overview", async () => {
    await page.goto(`${rig.app.url}/dashboard#parked`);
    await page.getByRole("button", { name: `Replay effect ${fleet.parkedEffect}` }).click();
    await page.waitForURL(/\?notice=/);
    expect(await page.getByRole("status").textContent()).toBe(`Effect ${fleet.parkedEffect} is queued again.`);
    await page.getByRole("button", { name: `Replay delivery ${fleet.parkedDelivery}` }).click();
    await page.waitForURL(new RegExp(`notice=Delivery`));
    expect(await page.getByRole("status").textContent()).toBe(`Delivery ${fleet.parkedDelivery} is queued again.`);
    const db = rig.app.database.db;
    await eventually(
      async () =>
        (await db.effect.findUniqueOrThrow({ where: { id: fleet.parkedEffect } })).state === "done" ? true : undefined,
      10_000,
      "the replayed effect done",
    );
    await eventually(
      async () =>
        (await db.delivery.findUniqueOrThrow({ where: { deliveryId: fleet.parkedDelivery } })).state === "done"
          ? true
          : undefined,
      10_000,
      "the replayed delivery done",
    );
    await page.reload();
    expect(await page.locator("section[aria-labelledby=parked]").textContent()).toContain("No effect is parked.");
    await page.screenshot({ path: screenshotPath("fleet-after-replay"), fullPage: true });
  });
});
