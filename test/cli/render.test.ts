/**
 * The CLI's human renderings of what the end-to-end tests cannot easily
 * produce on a healthy rig: parked deliveries and effects, failing reconcile
 * scopes, blocked and failed tasks, more waiting tasks than the status shows.
 */
import { statusText, type StatusAnswer } from "../../src/cli/status.js";
import { sweepsText } from "../../src/cli/fleet.js";
import { table } from "../../src/cli/io.js";

const task = (issue: number, over: Record<string, unknown> = {}) => ({ id: `t${issue}`, repo: "acme/app", issue, state: "queued", attempt: 0, prNumber: null, diagnostic: null, ...over });

const base: StatusAnswer = {
  queued: [],
  claimed: [],
  blocked: [],
  failed: [],
  deliveries: { summary: { pending: 0, retrying: 0, parked: 0 }, deliveries: [] },
  effects: { counts: {}, effects: [] },
  sweeps: { failing: {} },
  pause: { paused: [] },
  github: { rateLimits: [], callsPerHour: [] },
};

describe("statusText", () => {
  test("parked work says how to replay it; failing scopes say since when and why", () => {
    const text = statusText({
      ...base,
      blocked: [task(7, { state: "blocked", diagnostic: "needs a human: merge conflict" })],
      failed: [task(8, { state: "failed", diagnostic: "3 attempts used" })],
      deliveries: { summary: { pending: 1, retrying: 2, parked: 1 }, deliveries: [{ deliveryId: "d-1", event: "issues", action: "labeled", state: "parked", errors: [{ message: "boom" }] }] },
      effects: { counts: { parked: 1, pending: 3 }, effects: [{ id: "e-1", task: "t7", kind: "comment", errors: [{ message: "403 Forbidden" }] }] },
      sweeps: { failing: { "acme/app": { since: "2026-01-01T00:00:00.000Z", runs: 4, error: "404 Not Found", escalatedAt: "2026-01-01T01:00:00.000Z" } } },
    });
    expect(text.split("\n")).toEqual([
      "queue: 0 queued task(s)",
      "live leases: 0",
      "blocked: 1",
      "  t7  acme/app#7  needs a human: merge conflict",
      "failed: 1",
      "  t8  acme/app#8  3 attempts used",
      "deliveries: 1 parked, 2 retrying, 1 pending",
      "  parked d-1  issues.labeled  boom  (orchestra replay d-1)",
      "effects: 1 parked, 3 pending",
      "  parked e-1  comment  task=t7  403 Forbidden  (orchestra effects replay e-1)",
      "failing reconcile scopes: 1",
      "  acme/app  4 run(s) since 2026-01-01T00:00:00Z  escalated  404 Not Found",
      "GitHub calls this hour: none counted",
      "rate limit: not seen yet (no GitHub answer since the service started)",
      "",
    ]);
  });

  test("GitHub: this hour's calls, and each installation's rate limit with its reset", () => {
    const text = statusText({
      ...base,
      github: {
        callsPerHour: [{ hour: "2026-01-01T00:00:00.000Z", reads: 3, writes: 1 }, { hour: "2026-01-01T01:00:00.000Z", reads: 18, writes: 12 }],
        rateLimits: [
          { installation: 7, remaining: 4980, limit: 5000, resetAt: "2026-01-01T01:40:00.000Z", seenAt: "2026-01-01T01:10:00.000Z" },
          { installation: 9, remaining: 12, limit: null, resetAt: null, seenAt: "2026-01-01T01:11:00.000Z" },
        ],
      },
    });
    expect(text.split("\n").slice(-5)).toEqual([
      "GitHub calls this hour: 18 read(s), 12 write(s)",
      "rate limit: 2 installation(s)",
      "  installation 7  4980/5000 left, resets 2026-01-01T01:40:00Z  (seen 2026-01-01T01:10:00Z)",
      "  installation 9  12 left  (seen 2026-01-01T01:11:00Z)",
      "",
    ]);
  });

  test("a queue per repository, the first three waiting reasons, then where to see the rest", () => {
    const waiting = (issue: number, repo = "acme/app") => task(issue, { repo, waitingFor: { gate: "backoff", detail: `retry ${issue}` } });
    const text = statusText({ ...base, queued: [waiting(1), waiting(2), task(3), waiting(4), waiting(5), waiting(6, "acme/lib")], pause: { paused: [{ scope: "acme/lib", reason: "freeze", by: "ann", at: "2026-01-01T00:00:00.000Z" }] } });
    expect(text.split("\n").slice(0, 9)).toEqual([
      "queue: 6 queued task(s) in 2 repositories",
      "  acme/app  5 queued, 4 waiting",
      "    #1 waits for backoff: retry 1",
      "    #2 waits for backoff: retry 2",
      "    #4 waits for backoff: retry 4",
      "    … 1 more (orchestra tasks --repo acme/app --state queued)",
      "  acme/lib  1 queued, 1 waiting",
      "    #6 waits for backoff: retry 6",
      "paused: acme/lib (by ann: freeze)",
    ]);
  });
});

test("sweepsText: no reports yet says so; zero counts are left out", () => {
  expect(sweepsText({ failing: {}, reports: [] })).toBe("failing: none\nno sweep reports yet\n");
  expect(sweepsText({ failing: {}, reports: [{ kind: "reconcile", at: "2026-01-01T00:00:00.123Z", installationId: 77, counts: { labels: 2, tasks: 0 } }] })).toBe(
    "failing: none\nAT                    KIND       INSTALLATION  COUNTS\n2026-01-01T00:00:00Z  reconcile  77            labels=2\n",
  );
});

test("table: columns as wide as their widest cell, the last one unpadded", () => {
  expect(table(["A", "BB"], [["xxx", "y"], ["z", ""]])).toBe("A    BB\nxxx  y\nz\n");
});
