/** What ingest stores a delivery as, and how it learns which installations are unmanaged. */
import { asksStanding, NEEDS_INSTALLATION, verdictOf, type VerdictInput } from "../../src/ingest/verdict.js";
import { InstallationStanding } from "../../src/ingest/standing.js";
import { RigClock } from "../support/clock.js";

const base: VerdictInput = { event: "issues", action: "labeled", installationId: "7", handled: true, unmanaged: null };

describe("verdictOf", () => {
  test.each<[string, Partial<VerdictInput>, ReturnType<typeof verdictOf>]>([
    ["a handled delivery of a managed installation waits", {}, { state: "pending" }],
    [
      "no capability handles it",
      { event: "issues", action: "edited", handled: false },
      { state: "ignored", why: "unhandled", note: "unhandled: no capability handles issues.edited" },
    ],
    [
      "unhandled is said first, whatever the installation",
      { event: "star", action: "created", handled: false, installationId: null, unmanaged: "gone" },
      { state: "ignored", why: "unhandled", note: "unhandled: no capability handles star.created" },
    ],
    [
      "a label change that names no installation",
      { installationId: null },
      { state: "ignored", why: "unmanaged", note: "unmanaged: issues.labeled names no installation" },
    ],
    [
      "a whole event that needs one (sub_issues)",
      { event: "sub_issues", action: "sub_issue_added", installationId: null },
      { state: "ignored", why: "unmanaged", note: "unmanaged: sub_issues.sub_issue_added names no installation" },
    ],
    [
      "a failing check that names none",
      { event: "check_run", action: "completed", installationId: null },
      { state: "ignored", why: "unmanaged", note: "unmanaged: check_run.completed names no installation" },
    ],
    [
      "a pull request found by its branch acts without one",
      { event: "pull_request", action: "opened", installationId: null },
      { state: "pending" },
    ],
    [
      "a push invalidates a cached config without one",
      { event: "push", action: null, installationId: null },
      { state: "pending" },
    ],
    [
      "an issue closing its task acts without one",
      { event: "issues", action: "closed", installationId: null },
      { state: "pending" },
    ],
    [
      "a dispatched workflow's run acts without one",
      { event: "workflow_run", action: "completed", installationId: null },
      { state: "pending" },
    ],
    [
      "an installation known to be unmanaged",
      { unmanaged: "the App was uninstalled" },
      { state: "ignored", why: "unmanaged", note: "unmanaged: installation 7: the App was uninstalled" },
    ],
    [
      "the installation's own events always pass",
      { event: "installation", action: "unsuspend", unmanaged: "the App's installation is suspended" },
      { state: "pending" },
    ],
    [
      "its repositories' events too",
      { event: "installation_repositories", action: "added", unmanaged: "x" },
      { state: "pending" },
    ],
    [
      "an installation event without one is not refused",
      { event: "installation", action: "created", installationId: null },
      { state: "pending" },
    ],
  ])("%s", (_name, over, expected) => {
    expect(verdictOf({ ...base, ...over })).toEqual(expected);
  });

  test("every event that needs an installation is one a capability registers", () => {
    // The names are the router's: an event ("sub_issues") or an event and action ("issues.labeled").
    for (const name of NEEDS_INSTALLATION) expect(name).toMatch(/^[a-z_]+(\.[a-z_]+)?$/);
    expect(NEEDS_INSTALLATION.has("installation")).toBe(false);
  });
});

describe("asksStanding", () => {
  test.each<[string, Partial<VerdictInput>, boolean]>([
    ["a handled delivery with an installation", {}, true],
    ["unhandled: stored ignored anyway", { handled: false }, false],
    ["no installation to ask about", { installationId: null }, false],
    ["the installation's own event", { event: "installation", action: "deleted" }, false],
  ])("%s", (_name, over, expected) => {
    expect(asksStanding({ ...base, ...over })).toBe(expected);
  });
});

describe("InstallationStanding", () => {
  function standing(listed: string[], confirmed: Record<string, string | null>) {
    const clock = new RigClock();
    clock.hold();
    const calls = { list: 0, confirm: [] as string[] };
    const warnings: string[] = [];
    let failList = false;
    const s = new InstallationStanding({
      listUnmanaged: async () => {
        calls.list++;
        if (failList) throw new Error("database unavailable");
        return listed;
      },
      confirm: async (id) => {
        calls.confirm.push(id);
        if (!(id in confirmed)) throw new Error("read failed");
        return confirmed[id]!;
      },
      clock,
      log: { warn: (_o, msg) => warnings.push(msg) },
      refreshMs: 5_000,
    });
    return { s, clock, calls, warnings, failing: (v: boolean) => (failList = v) };
  }

  test("a managed installation costs no read per delivery; the list is read once per interval", async () => {
    const { s, clock, calls } = standing(["9"], {});
    const answers = await Promise.all([s.unmanaged("7"), s.unmanaged("7"), s.unmanaged("8")]);
    expect(answers).toEqual([null, null, null]);
    expect(calls).toEqual({ list: 1, confirm: [] });
    clock.advance(4_999);
    await s.unmanaged("7");
    expect(calls.list).toBe(1);
    clock.advance(1);
    await s.unmanaged("7");
    expect(calls.list).toBe(2);
  });

  test("an installation on the list is confirmed from the database before it is called unmanaged", async () => {
    const { s, calls } = standing(["9", "10"], { "9": "the App was uninstalled", "10": null });
    expect(await s.unmanaged("9")).toBe("the App was uninstalled");
    // Listed a moment ago, managed again now (unsuspended, or its own event waiting): not ignored.
    expect(await s.unmanaged("10")).toBeNull();
    expect(calls.confirm).toEqual(["9", "10"]);
  });

  test("a read that fails is unknown, never unmanaged, and is read again next time", async () => {
    const { s, calls, warnings, failing } = standing(["9"], {});
    failing(true);
    expect(await s.unmanaged("9")).toBeNull();
    failing(false);
    // The confirmation fails too: still unknown.
    expect(await s.unmanaged("9")).toBeNull();
    expect(calls.list).toBe(2);
    expect(warnings).toHaveLength(2);
  });
});
