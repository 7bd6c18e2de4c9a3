/**
 * The pure decisions of `orchestra doctor`, as tables: permissions and events
 * against app.yml (levels read < write < admin), who must act on a gap (the
 * App's settings, or the installation's owner), what the delivery log says,
 * how a GitHub failure is told apart from absence, and how lines print.
 */
import {
  compareAccess,
  appAccessCheck,
  installationAccessCheck,
  type Access,
  type InstallationFacts,
} from "../../src/cli/doctor/compare.js";
import { deliveriesCheck, deliveryFixes } from "../../src/cli/doctor/deliveries.js";
import { parseManifest, readManifest } from "../../src/cli/doctor/manifest.js";
import { githubProblem } from "../../src/cli/doctor/github.js";
import { checkText, exitCodeOf, summaryText, type Check } from "../../src/cli/doctor/check.js";
import type { HookDelivery } from "../../src/github/app-hooks.js";
import { DEFAULT_EVENTS, DEFAULT_PERMISSIONS } from "../fake-github/state.js";

const wanted: Access = {
  permissions: { metadata: "read", issues: "write", pull_requests: "write" },
  events: ["issues", "pull_request", "pull_request_review"],
};
const facts = {
  slug: "orchestra",
  settingsUrl: "https://github.com/organizations/acme/settings/apps/orchestra/permissions",
};

describe("compareAccess", () => {
  test.each<[string, Access, Partial<ReturnType<typeof compareAccess>>]>([
    ["exactly what is asked", wanted, { missing: [], missingEvents: [], extra: [], extraEvents: [] }],
    [
      "a permission not granted",
      { ...wanted, permissions: { metadata: "read", issues: "write" } },
      { missing: [{ permission: "pull_requests", want: "write", have: null }] },
    ],
    [
      "a lower level (read < write)",
      { ...wanted, permissions: { ...wanted.permissions, pull_requests: "read" } },
      { missing: [{ permission: "pull_requests", want: "write", have: "read" }], extra: [] },
    ],
    [
      "a higher level (admin > write) is more than asked, not missing",
      { ...wanted, permissions: { ...wanted.permissions, issues: "admin" } },
      { missing: [], extra: [{ permission: "issues", want: "write", have: "admin" }] },
    ],
    [
      "write satisfies read",
      { ...wanted, permissions: { ...wanted.permissions, metadata: "write" } },
      { missing: [], extra: [{ permission: "metadata", want: "read", have: "write" }] },
    ],
    [
      "an unknown level satisfies nothing",
      { ...wanted, permissions: { ...wanted.permissions, issues: "owner" } },
      { missing: [{ permission: "issues", want: "write", have: "owner" }] },
    ],
    [
      "a permission not asked for",
      { ...wanted, permissions: { ...wanted.permissions, members: "read" } },
      { missing: [], extra: [{ permission: "members", want: null, have: "read" }] },
    ],
    [
      "events missing and extra, sorted",
      { ...wanted, events: ["push", "issues", "label"] },
      { missingEvents: ["pull_request", "pull_request_review"], extraEvents: ["label", "push"] },
    ],
    [
      "nothing at all",
      { permissions: {}, events: [] },
      {
        missing: [
          { permission: "issues", want: "write", have: null },
          { permission: "metadata", want: "read", have: null },
          { permission: "pull_requests", want: "write", have: null },
        ],
        missingEvents: ["issues", "pull_request", "pull_request_review"],
      },
    ],
  ])("%s", (_name, granted, expected) => {
    expect(compareAccess(wanted, granted)).toMatchObject(expected);
  });
});

describe("appAccessCheck", () => {
  test.each<[string, Access, Check["status"], RegExp, RegExp | undefined]>([
    ["all there", wanted, "ok", /^the App orchestra holds what app.yml asks: 3 permissions, 3 events$/, undefined],
    [
      "a lower level and a missing event",
      { permissions: { ...wanted.permissions, pull_requests: "read" }, events: ["issues", "pull_request"] },
      "fail",
      /missing permission pull_requests: write \(has read\); missing event pull_request_review$/,
      /settings\/apps\/orchestra\/permissions\) set pull_requests to Read and write, subscribe to pull_request_review; then the owner of each installation accepts/,
    ],
    [
      "more than asked",
      { permissions: { ...wanted.permissions, members: "read" }, events: wanted.events },
      "warn",
      /more than app.yml asks: members: read$/,
      /least privilege/,
    ],
  ])("%s → %s", (_name, app, status, detail, fix) => {
    const c = appAccessCheck(wanted, app, facts);
    expect(c).toMatchObject({ name: "app permissions", status });
    expect(c.detail).toMatch(detail);
    if (fix) expect(c.fix).toMatch(fix);
    else expect(c.fix).toBeUndefined();
  });
});

describe("installationAccessCheck", () => {
  const inst = (access: Access, over: Partial<InstallationFacts> = {}): InstallationFacts => ({
    id: 78,
    account: "globex",
    htmlUrl: "https://github.com/organizations/globex/settings/installations/78",
    suspended: false,
    access,
    ...over,
  });
  const lacking: Access = { permissions: { metadata: "read", issues: "write" }, events: ["issues", "pull_request"] };

  test.each<[string, Access, InstallationFacts, Check["status"], RegExp, RegExp | null]>([
    ["grants all", wanted, inst(wanted), "ok", /^installation 78 on globex holds what app.yml asks/, null],
    [
      "lacks what the App holds: only the owner must accept",
      wanted,
      inst(lacking),
      "fail",
      /^installation 78 on globex: missing permission pull_requests: write \(not granted\); missing event pull_request_review$/,
      /^an owner of globex accepts the App's requested permissions at https:\/\/github.com\/organizations\/globex\/settings\/installations\/78 \(Review request\)$/,
    ],
    [
      "lacks what the App lacks too: the App's settings first",
      lacking,
      inst(lacking),
      "fail",
      /missing permission pull_requests/,
      /^in the App's settings \(.*\) set pull_requests to Read and write, subscribe to pull_request_review; then an owner of globex accepts/,
    ],
    [
      "suspended",
      wanted,
      inst(wanted, { suspended: true }),
      "warn",
      /is suspended: GitHub sends no events from it/,
      /unsuspends it/,
    ],
    [
      "more than asked",
      wanted,
      inst({ ...wanted, events: [...wanted.events, "label"] }),
      "warn",
      /events app.yml does not list: label$/,
      /least privilege/,
    ],
  ])("%s → %s", (_name, app, i, status, detail, fix) => {
    const c = installationAccessCheck(wanted, app, i, facts);
    expect(c).toMatchObject({ name: "installation globex", status });
    expect(c.detail).toMatch(detail);
    if (fix) expect(c.fix).toMatch(fix);
    else expect(c.fix).toBeUndefined();
  });
});

describe("deliveriesCheck", () => {
  const now = new Date("2026-03-01T12:00:00Z");
  const day = 24 * 3_600_000;
  // As on GitHub, a newer attempt has a larger id.
  const d = (statusCode: number, minutesAgo: number, over: Partial<HookDelivery> = {}): HookDelivery => ({
    id: 100_000 - minutesAgo,
    guid: `g${100_000 - minutesAgo}`,
    deliveredAt: new Date(now.getTime() - minutesAgo * 60_000),
    redelivery: false,
    statusCode,
    event: "issues",
    action: "labeled",
    installationId: 1,
    ...over,
  });

  test("nothing in the window: ok", () => {
    expect(deliveriesCheck({ items: [d(502, 25 * 60)], complete: true }, now, day)).toEqual({
      name: "webhook deliveries",
      status: "ok",
      detail: "no deliveries in the last 24 h",
    });
  });

  test("all delivered: ok, with the count", () => {
    expect(deliveriesCheck({ items: [d(202, 1), d(200, 2)], complete: true }, now, day)).toMatchObject({
      status: "ok",
      detail: "2 delivery attempt(s) in the last 24 h, none failed",
    });
  });

  test("a failure a later attempt recovered: warn, marked as arrived later", () => {
    const failed = d(502, 30, { guid: "same" });
    const redelivered = d(202, 10, { guid: "same", redelivery: true });
    const c = deliveriesCheck({ items: [failed, redelivered], complete: true }, now, day);
    expect(c.status).toBe("warn");
    expect(c.detail.split("\n")).toEqual([
      "1 of 2 delivery attempt(s) in the last 24 h failed; 0 deliveries have not arrived since",
      "2026-03-01T11:30:00Z  issues.labeled  answered 502  same  (arrived later)",
    ]);
    expect(c.fix).toMatch(/could not take them/);
  });

  test("a delivery whose latest attempt failed: fail, newest first, at most `shown`, and the fixes for each code", () => {
    const items = [d(0, 5, { event: "push", action: null }), d(401, 6), d(502, 7), d(502, 8), d(404, 9), d(202, 10)];
    const c = deliveriesCheck({ items, complete: false }, now, day, 3);
    expect(c.status).toBe("fail");
    const lines = c.detail.split("\n");
    expect(lines[0]).toBe(
      "at least 5 of 6 delivery attempt(s) in the last 24 h failed; 5 deliveries have not arrived since",
    );
    expect(lines[1]).toMatch(/^2026-03-01T11:55:00Z {2}push {2}no connection {2}g\d+$/);
    expect(lines[2]).toMatch(/issues\.labeled {2}answered 401/);
    expect(lines[4]).toBe("… 2 more failed attempt(s)");
    // One fix per kind of failure seen, in the order the failures were met (newest first).
    expect(c.fix).toBe(deliveryFixes([0, 401, 502, 404]).join("; "));
    expect(c.fix).toMatch(
      /could not connect.*WEBHOOK_SECRET must equal.*could not take them.*must end in \/api\/github\/webhooks/,
    );
  });

  test.each([
    [0, /could not connect to the webhook URL/],
    [401, /WEBHOOK_SECRET must equal/],
    [404, /\/api\/github\/webhooks/],
    [503, /redeliver/],
    [413, /refused them \(413\)/],
  ])("status %s → %s", (code, fix) => {
    expect(deliveryFixes([code])).toEqual([expect.stringMatching(fix)]);
  });
});

describe("app.yml", () => {
  test("the fake GitHub's default App and installation grant exactly what app.yml asks", () => {
    const m = readManifest();
    expect(m.permissions).toEqual(DEFAULT_PERMISSIONS);
    expect([...m.events].sort()).toEqual([...DEFAULT_EVENTS].sort());
  });

  test.each([
    ["not YAML", "a: [", /^it is not YAML/],
    ["no events", "default_permissions: {issues: write}\n", /^default_events /],
    [
      "a level GitHub has not",
      "default_permissions: {issues: owner}\ndefault_events: []\n",
      /^default_permissions\.issues must be read, write, admin/,
    ],
  ])("%s → says what is wrong", (_name, text, message) => {
    expect(() => parseManifest(text)).toThrow(message);
  });
});

describe("githubProblem: a failure is what it was, never absence", () => {
  const t = { appId: 42, privateKey: "k", baseUrl: "http://127.0.0.1:9/api/v3" };
  const notFound = { detail: "no such thing", fix: "look elsewhere" };
  const answered = (status: number, message: string, headers: Record<string, string> = {}) => ({
    status,
    message,
    request: {},
    response: { status, headers, data: { message } },
  });

  test.each<[string, unknown, RegExp, RegExp]>([
    [
      "nothing sent (the JWT could not be made)",
      new Error("invalid key"),
      /^GET \/app was not sent: invalid key$/,
      /PEM private key/,
    ],
    [
      "no answer",
      { status: 500, message: "connect ECONNREFUSED 127.0.0.1:9", request: {}, cause: new TypeError("fetch failed") },
      /^GET \/app at http:\/\/127.0.0.1:9\/api\/v3: no answer: connect ECONNREFUSED/,
      /GHE_HOST and GHE_PROTOCOL/,
    ],
    [
      "a timeout",
      { status: 500, message: "aborted", request: {}, cause: Object.assign(new Error("t"), { name: "TimeoutError" }) },
      /no answer within 10 s$/,
      /GHE_HOST/,
    ],
    [
      "401",
      answered(401, "A JSON web token could not be decoded"),
      /^GitHub refused the App's credentials: GET \/app answered 401 \(A JSON web token could not be decoded\)$/,
      /APP_ID \(42\) must be the App's id/,
    ],
    ["404", answered(404, "Not Found"), /^GET \/app answered 404 \(Not Found\): no such thing$/, /^look elsewhere$/],
    [
      "500",
      answered(500, "Server Error"),
      /^GitHub failed: GET \/app answered 500 \(Server Error\); that is GitHub's trouble, not a sign that anything is missing$/,
      /githubstatus/,
    ],
    ["503", answered(503, "Unavailable"), /answered 503/, /try again/],
    [
      "403 rate limit",
      answered(403, "API rate limit exceeded", { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1772366400" }),
      /^rate limited: /,
      /wait until the limit resets \(2026-03-01T12:00:00.000Z\)/,
    ],
    [
      "403 otherwise",
      answered(403, "Although you appear to have the correct authorization credentials"),
      /^GitHub refused the request/,
      /IP allow list/,
    ],
  ])("%s", (_name, err, detail, fix) => {
    const p = githubProblem(err, "GET /app", t, notFound);
    expect(p.detail).toMatch(detail);
    expect(p.fix).toMatch(fix);
  });
});

describe("lines and exit codes", () => {
  const c = (status: Check["status"], fix?: string): Check => ({
    name: "database",
    status,
    detail: "first\nsecond",
    ...(fix ? { fix } : {}),
  });

  test("status tag, name, detail; further lines and the fix indented under it", () => {
    expect(checkText(c("fail", "do this"))).toBe("FAIL  database: first\n      second\n      fix: do this\n");
    expect(checkText({ name: "github", status: "ok", detail: "fine" })).toBe("ok    github: fine\n");
    expect(checkText({ name: "github", status: "skip", detail: "not checked" })).toBe("skip  github: not checked\n");
  });

  test.each<[Check["status"][], number, string]>([
    [["ok", "ok"], 0, "all 2 checks passed\n"],
    [["ok", "warn"], 0, "all 2 checks passed, 1 with a warning\n"],
    [["ok", "fail", "skip", "warn"], 1, "1 of 4 checks failed, 1 warned, 1 not run\n"],
  ])("%j → exit %s", (statuses, code, summary) => {
    const checks = statuses.map((s) => c(s));
    expect(exitCodeOf(checks)).toBe(code);
    expect(summaryText(checks)).toBe(summary);
  });
});
