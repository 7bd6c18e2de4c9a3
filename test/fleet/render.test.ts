/**
 * The fleet issue's body from a snapshot of tasks, as tables: what each
 * section shows, the order it keeps, the footer, GitHub's limit, and the
 * comparison that leaves an issue unedited when it already shows a snapshot.
 */
import {
  FLEET_SECTION_ROWS,
  cell,
  isFleetBody,
  renderFleet,
  renderedAt,
  showsSnapshot,
  timeLeft,
  type FleetSnapshot,
} from "../../src/fleet/render.js";
import { GITHUB_COMMENT_LIMIT } from "../../src/texts/limits.js";

const AT = new Date("2026-06-01T12:00:00.000Z");
const inMin = (m: number) => new Date(AT.getTime() + m * 60_000);
const empty = { total: 0, tasks: [] };

function snapshot(over: Partial<FleetSnapshot> = {}): FleetSnapshot {
  return {
    repo: "acme/app",
    held: null,
    queued: empty,
    claimed: empty,
    review: empty,
    blocked: empty,
    failed: empty,
    ...over,
  };
}

const FULL = snapshot({
  queued: {
    total: 2,
    tasks: [
      { issue: 14, title: "Urgent fix", attempt: 0, waitingFor: null },
      {
        issue: 12,
        title: "Add docs",
        attempt: 1,
        waitingFor: { gate: "blocked-by", detail: "blocked by open issue acme/app#3" },
      },
    ],
  },
  claimed: {
    total: 2,
    tasks: [
      { issue: 3, title: "Login", attempt: 2, worker: "laptop", mode: "worker", leaseExpiresAt: inMin(4.2) },
      { issue: 5, title: "Build", attempt: 1, worker: null, mode: "dispatch", leaseExpiresAt: null },
    ],
  },
  review: { total: 1, tasks: [{ issue: 7, title: "Rename", prNumber: 21 }] },
  blocked: { total: 1, tasks: [{ issue: 9, title: "API", why: "question: “Keep the old API?”" }] },
  failed: {
    total: 1,
    tasks: [{ issue: 11, title: "Flaky", attempt: 3, klass: "debris-empty", recovery: "delete-branch-requeue" }],
  },
});

describe("sections", () => {
  const body = renderFleet(FULL, AT);
  test.each([
    ["the queue, counted", "### Queue (2)"],
    [
      "queued tasks in the snapshot's (claim) order, numbered, linked as #N",
      "| 1 | #14 Urgent fix | 0 | nothing: claimable now |\n| 2 | #12 Add docs | 1 | `blocked-by`: blocked by open issue acme/app#3 |",
    ],
    ["a live lease: worker and time left", "| #3 Login | laptop | 2 | 4 min left |"],
    [
      "a dispatched run whose lease ended",
      "| #5 Build | workflow run | 1 | ended without an exit: the run is owed a class |",
    ],
    ["review with the pull request", "| #7 Rename | #21 |"],
    ["blocked with its question", "| #9 API | question: “Keep the old API?” |"],
    ["failed with the last failure class", "| #11 Flaky | 3 | `debris-empty` (delete-branch-requeue) |"],
    [
      "the footer: when, and that hand edits are overwritten",
      "Last updated 2026-06-01 12:00:00 UTC. Maintained by Orchestra (`fleetIssue: true` in `.github/orchestra.yml`): rewritten as tasks change, so edits by hand are overwritten.",
    ],
  ])("%s", (_what, text) => {
    expect(body).toContain(text);
  });

  test("the hidden marker opens the body and says when it was rendered", () => {
    expect(body.split("\n")[0]).toBe("<!-- orchestra:fleet updated=2026-06-01T12:00:00.000Z -->");
    expect(isFleetBody(body)).toBe(true);
    expect(renderedAt(body)).toEqual(AT);
    expect(isFleetBody("Please fix <!-- orchestra:fleet updated=x -->")).toBe(false);
  });

  test("sections keep their order", () => {
    const at = ["### Queue", "### In progress", "### In review", "### Blocked", "### Failed", "Last updated"].map((h) =>
      body.indexOf(h),
    );
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(at.every((i) => i >= 0)).toBe(true);
  });

  test("empty sections say so", () => {
    const quiet = renderFleet(snapshot(), AT);
    for (const line of [
      "### Queue (0)\n\nNothing is queued.",
      "No task holds a lease.",
      "No pull request waits for review.",
      "Nothing is blocked.",
      "Nothing has failed.",
    ])
      expect(quiet).toContain(line);
    expect(quiet).not.toContain("|");
  });

  test("what holds every claim is said above the sections", () => {
    const held = renderFleet(snapshot({ held: "acme/app is paused by alice: deploy freeze" }), AT);
    expect(held).toContain("> **Nothing is claimed here now:** acme/app is paused by alice: deploy freeze");
  });
});

describe("cells", () => {
  test.each([
    ["a pipe", "a | b", "a \\| b"],
    ["newlines", "one\ntwo\r\n three", "one two three"],
    ["a mention (no notification from every edit)", "ask @alice", "ask @\u200balice"],
    ["an @ inside an address too (harmless)", "a@b.c", "a@\u200bb.c"],
    ["html", "<!-- hide -->", "&lt;!-- hide -->"],
  ])("%s", (_what, raw, shown) => {
    expect(cell(raw)).toBe(shown);
  });

  test("long text is cut with an ellipsis", () => {
    expect(cell("x".repeat(200), 10)).toBe(`${"x".repeat(9)}…`);
  });

  test.each([
    [inMin(4.4), "4 min left"],
    [inMin(2.97), "3 min left"],
    [inMin(59.7), "1 h 0 min left"],
    [inMin(0.5), "under a minute left"],
    [inMin(125), "2 h 5 min left"],
    [inMin(-1), "expired: waiting for a late exit, then the run is classified"],
  ])("lease until %s: %s", (until, text) => {
    expect(timeLeft(until, AT)).toBe(text);
  });
});

describe("GitHub's body limit", () => {
  const many = (n: number, title: string) =>
    Array.from({ length: n }, (_, i) => ({
      issue: i + 1,
      title,
      attempt: 0,
      waitingFor: { gate: "no-worker" as const, detail: "d".repeat(500) },
    }));

  test("a long section shows its first rows and counts the rest", () => {
    const s = snapshot({ queued: { total: 250, tasks: many(FLEET_SECTION_ROWS, "t") } });
    const body = renderFleet(s, AT);
    expect(body).toContain("### Queue (250)");
    expect(body).toContain("…and 150 more");
  });

  test("a body that would pass the limit is cut inside, keeping the marker and the footer", () => {
    const huge = snapshot({
      queued: { total: 100, tasks: many(100, "x".repeat(80)) },
      blocked: {
        total: 100,
        tasks: Array.from({ length: 100 }, (_, i) => ({ issue: 500 + i, title: "y".repeat(80), why: "z".repeat(300) })),
      },
    });
    const body = renderFleet(
      {
        ...huge,
        failed: {
          total: 100,
          tasks: Array.from({ length: 100 }, (_, i) => ({
            issue: 900 + i,
            title: "w".repeat(80),
            attempt: 3,
            klass: "unknown",
            recovery: "escalate",
          })),
        },
      },
      AT,
    );
    expect(body.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(isFleetBody(body)).toBe(true);
    expect(body).toContain("Last updated 2026-06-01 12:00:00 UTC");
    expect(body).toContain("**Truncated:**");
  });
});

describe("an issue that already shows the snapshot is not edited", () => {
  const shown = renderFleet(FULL, AT);
  const later = new Date(AT.getTime() + 90_000);
  test.each<[string, string, FleetSnapshot, boolean]>([
    ["the same snapshot, rendered earlier", shown, FULL, true],
    ["a task changed state", shown, { ...FULL, review: empty }, false],
    [
      "a lease was renewed (another time left)",
      shown,
      { ...FULL, claimed: { total: 1, tasks: [{ ...FULL.claimed.tasks[0]!, leaseExpiresAt: inMin(9) }] } },
      false,
    ],
    ["edited by hand", shown.replace("Urgent fix", "Not urgent"), FULL, false],
    ["the marker removed by hand", shown.split("\n").slice(1).join("\n"), FULL, false],
    ["someone else's text", "Hello", FULL, false],
  ])("%s", (_what, body, s, same) => {
    expect(showsSnapshot(body, s)).toBe(same);
  });

  test("rendering the same snapshot later differs only in when", () => {
    const again = renderFleet(FULL, later);
    expect(again).not.toBe(shown);
    expect(showsSnapshot(again, FULL)).toBe(true);
  });
});
