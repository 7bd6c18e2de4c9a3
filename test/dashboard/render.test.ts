/** The dashboard's pure pieces: escaping, times for people, chart scales and their accessible names, hourly buckets. */
import { escape, html, relative, webOf } from "../../src/dashboard/html.js";
import { axisMax, stackedBars } from "../../src/dashboard/charts.js";
import { bucket, callSeries } from "../../src/views/activity.js";
import { rateLimitOf } from "../../src/metrics/registry.js";

test.each([
  [`<script>alert("x")</script>`, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"],
  ["Tom & Jerry's", "Tom &amp; Jerry&#39;s"],
  ["plain", "plain"],
])("escape(%j)", (text, out) => {
  expect(escape(text)).toBe(out);
});

test("html escapes values, keeps nested templates, drops null, undefined and false, joins arrays", () => {
  const inner = html`<b>${"<i>"}</b>`;
  expect(html`<p>${inner}${null}${undefined}${false}${["<", inner]}${0}</p>`.text).toBe(
    "<p><b>&lt;i&gt;</b>&lt;<b>&lt;i&gt;</b>0</p>",
  );
});

const NOW = new Date("2026-12-01T12:00:00Z");
test.each([
  [new Date(NOW.getTime() + 30_000), "in 30 s"],
  [new Date(NOW.getTime() - 90_000), "2 min ago"],
  [new Date(NOW.getTime() + 3 * 3_600_000), "in 3 h"],
  [new Date(NOW.getTime() - 5 * 86_400_000), "5 d ago"],
  [null, "—"],
])("relative(%s)", (at, text) => {
  expect(relative(at, NOW)).toBe(text);
});

test.each([
  [undefined, "https://github.com"],
  ["https://ghe.example.com/api/v3", "https://ghe.example.com"],
  ["http://127.0.0.1:4000/api/v3/", "http://127.0.0.1:4000"],
])("webOf(%j)", (api, web) => {
  expect(webOf(api)).toBe(web);
});

test.each([
  [[], 4],
  [[0, 3], 4],
  [[5], 5],
  [[7], 10],
  [[18, 12], 20],
  [[30], 50],
  [[240], 250],
  [[1001], 2000],
])("axisMax(%j) = %d", (totals, max) => {
  expect(axisMax(totals)).toBe(max);
});

const hours = Array.from({ length: 4 }, (_, i) => new Date(Date.parse("2026-12-01T08:00:00Z") + i * 3_600_000));

test("bucket: points counted in their hour, outside the window dropped, series by total then name", () => {
  const at = (h: number, m = 0) => new Date(Date.parse("2026-12-01T08:00:00Z") + h * 3_600_000 + m * 60_000);
  const points = [
    { at: at(0, 5), name: "phantom" },
    { at: at(0, 59), name: "merged" },
    { at: at(2), name: "merged" },
    { at: at(3, 30), name: "infra" },
    { at: at(-1), name: "merged" },
    { at: at(4), name: "merged" },
  ];
  expect(bucket(hours, points)).toEqual([
    { name: "merged", counts: [1, 0, 1, 0] },
    { name: "infra", counts: [0, 0, 0, 1] },
    { name: "phantom", counts: [1, 0, 0, 0] },
  ]);
});

test("a chart's accessible name states its totals; its table lists only hours with data", () => {
  const chart = stackedBars(
    "Runs by class",
    {
      hours,
      series: [
        { name: "merged", counts: [2, 0, 1, 0] },
        { name: "infra", counts: [0, 0, 1, 0] },
      ],
    },
    "runs",
  ).text;
  expect(chart).toContain('aria-label="Runs by class, last 4 hours: 3 merged, 1 infra"');
  expect(chart.match(/<rect /g)).toHaveLength(3 + 2); // three bars' segments and two legend swatches
  expect(chart.match(/<tr><td>/g)).toHaveLength(2);
  expect(chart).toContain("<title>10:00 UTC: 1 infra</title>");
  const empty = stackedBars(
    "GitHub calls per hour",
    callSeries(hours.map((hour) => ({ hour, reads: 0, writes: 0 }))),
    "calls",
  ).text;
  expect(empty).toContain('aria-label="GitHub calls per hour, last 4 hours: 0 reads, 0 writes"');
  expect(empty).not.toContain("<rect x=");
});

test.each([
  [
    { "x-ratelimit-remaining": "4999", "x-ratelimit-limit": "5000", "x-ratelimit-reset": "1796112000" },
    { remaining: 4999, limit: 5000, resetAt: new Date(1796112000 * 1000) },
  ],
  [{ "x-ratelimit-remaining": 0 }, { remaining: 0, limit: null, resetAt: null }],
  [{ "x-ratelimit-remaining": "" }, null],
  [{ "x-ratelimit-remaining": "many" }, null],
  [{}, null],
])("rateLimitOf(%j)", (headers, seen) => {
  const at = new Date("2026-12-01T00:00:00Z");
  expect(rateLimitOf(headers, at)).toEqual(seen && { ...seen, seenAt: at });
});

test("the overview: a list cut at LISTED has the total in its heading and a line naming the command for the rest", async () => {
  const { overviewPage } = await import("../../src/dashboard/overview.js");
  const { LISTED } = await import("../../src/views/fleet.js");
  const now = new Date("2026-12-01T12:00:00Z");
  const failed = Array.from({ length: LISTED }, (_, i) => ({
    id: `t${i}`,
    repo: "acme/app",
    issue: i + 1,
    title: `Issue ${i + 1}`,
    class: "phantom",
    recovery: "delete-branch-requeue",
    why: "no pull request",
    endedAt: now,
  }));
  const empty = { hours: [now], series: [] };
  const page = overviewPage(
    { now, csrf: "c", web: "https://github.com" },
    {
      fleet: {
        at: now,
        counts: { failed: LISTED + 50, blocked: 3 },
        queue: [{ repo: "acme/lib", tasks: [], more: 7 }],
        leases: [],
        review: [{ id: "t-r", repo: "acme/app", issue: 7, title: "Issue 7", prNumber: 12, attempt: 2, updatedAt: now }],
        done: [],
        blocked: [],
        failed,
        parked: { deliveries: [], effects: [] },
      },
      runs: empty,
      calls: empty,
      health: {
        deliveries: {},
        effects: {},
        github: { rateLimits: [], callsPerHour: [] },
        failing: {},
        host: { version: null, host: "not read yet", gaps: [] },
      },
    },
  ).text;
  expect(page).toContain(`Failed <span class="muted">(${LISTED + 50})</span>`);
  expect(page).toContain("and 50 more failed: <code>orchestra tasks --state failed</code> lists them");
  expect(page).not.toContain("more blocked");
  expect(page).toContain(`In review <span class="muted">(1)</span>`);
  expect(page).toContain('<a href="https://github.com/acme/app/pull/12">PR #12</a>');
  expect(page).toContain("Nothing is done yet.");
  expect(page).toContain(
    "7 queued, all later in claim order than the first 1000 of the fleet: <code>orchestra tasks --repo acme/lib --state queued</code> lists them",
  );
});
