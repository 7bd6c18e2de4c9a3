/**
 * The CLI's human renderings of what the end-to-end tests cannot easily
 * produce on a healthy rig: parked deliveries and effects, failing reconcile
 * scopes, blocked and failed tasks, more waiting tasks than the status shows.
 */
import { statusText, type StatusAnswer } from "../../src/cli/status.js";
import { sweepsText } from "../../src/cli/fleet.js";
import { table } from "../../src/cli/io.js";
import { duration, outcome, runsText, shortEvidence, type RunRow } from "../../src/cli/runs.js";

const task = (issue: number, over: Record<string, unknown> = {}) => ({
  id: `t${issue}`,
  repo: "acme/app",
  issue,
  state: "queued",
  attempt: 0,
  prNumber: null,
  diagnostic: null,
  ...over,
});

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
  replicas: { self: "web-1-4a2b", replicas: [] },
};

describe("statusText", () => {
  test("parked work says how to replay it; failing scopes say since when and why", () => {
    const text = statusText({
      ...base,
      blocked: [task(7, { state: "blocked", diagnostic: "needs a human: merge conflict" })],
      failed: [task(8, { state: "failed", diagnostic: "3 attempts used" })],
      deliveries: {
        summary: { pending: 1, retrying: 2, parked: 1 },
        deliveries: [
          { deliveryId: "d-1", event: "issues", action: "labeled", state: "parked", errors: [{ message: "boom" }] },
        ],
      },
      effects: {
        counts: { parked: 1, pending: 3 },
        effects: [{ id: "e-1", task: "t7", kind: "comment", errors: [{ message: "403 Forbidden" }] }],
      },
      sweeps: {
        failing: {
          "acme/app": {
            since: "2026-01-01T00:00:00.000Z",
            runs: 4,
            error: "404 Not Found",
            escalatedAt: "2026-01-01T01:00:00.000Z",
          },
        },
      },
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
      "replicas: 0 beating",
      "",
    ]);
  });

  test("GitHub: this hour's calls, and each installation's rate limit with its reset", () => {
    const text = statusText({
      ...base,
      github: {
        callsPerHour: [
          { hour: "2026-01-01T00:00:00.000Z", reads: 3, writes: 1 },
          { hour: "2026-01-01T01:00:00.000Z", reads: 18, writes: 12 },
        ],
        rateLimits: [
          {
            installation: 7,
            remaining: 4980,
            limit: 5000,
            resetAt: "2026-01-01T01:40:00.000Z",
            seenAt: "2026-01-01T01:10:00.000Z",
          },
          { installation: 9, remaining: 12, limit: null, resetAt: null, seenAt: "2026-01-01T01:11:00.000Z" },
        ],
      },
    });
    expect(text.split("\n").slice(-6, -2)).toEqual([
      "GitHub calls this hour: 18 read(s), 12 write(s)",
      "rate limit: 2 installation(s)",
      "  installation 7  4980/5000 left, resets 2026-01-01T01:40:00Z  (seen 2026-01-01T01:10:00Z)",
      "  installation 9  12 left  (seen 2026-01-01T01:11:00Z)",
    ]);
  });

  test("replicas: each one's last beat and start, and which one answered", () => {
    const text = statusText({
      ...base,
      replicas: {
        self: "web-2-9c1d",
        replicas: [
          { id: "web-1-4a2b", beatAgoSeconds: 1.4, startedAt: "2026-01-01T00:00:00.000Z" },
          { id: "web-2-9c1d", beatAgoSeconds: 0.2, startedAt: "2026-01-01T02:00:00.000Z" },
        ],
      },
    });
    expect(text.split("\n").slice(-4)).toEqual([
      "replicas: 2 beating",
      "  web-1-4a2b  last beat 1.4 s ago, up since 2026-01-01T00:00:00Z",
      "  web-2-9c1d  last beat 0.2 s ago, up since 2026-01-01T02:00:00Z  (answered this)",
      "",
    ]);
  });

  test("a queue per repository, the first three waiting reasons, then where to see the rest", () => {
    const waiting = (issue: number, repo = "acme/app") =>
      task(issue, { repo, waitingFor: { gate: "backoff", detail: `retry ${issue}` } });
    const text = statusText({
      ...base,
      queued: [waiting(1), waiting(2), task(3), waiting(4), waiting(5), waiting(6, "acme/lib")],
      pause: { paused: [{ scope: "acme/lib", reason: "freeze", by: "ann", at: "2026-01-01T00:00:00.000Z" }] },
    });
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
  expect(
    sweepsText({
      failing: {},
      reports: [
        { kind: "reconcile", at: "2026-01-01T00:00:00.123Z", installationId: 77, counts: { labels: 2, tasks: 0 } },
      ],
    }),
  ).toBe(
    "failing: none\nAT                    KIND       INSTALLATION  COUNTS\n2026-01-01T00:00:00Z  reconcile  77            labels=2\n",
  );
});

test("table: columns as wide as their widest cell, the last one unpadded", () => {
  expect(
    table(
      ["A", "BB"],
      [
        ["xxx", "y"],
        ["z", ""],
      ],
    ),
  ).toBe("A    BB\nxxx  y\nz\n");
});

describe("runsText", () => {
  const now = new Date("2026-01-02T00:00:00Z");
  const run = (over: Partial<RunRow> = {}): RunRow => ({
    id: "r1",
    task: { id: "t1", repo: "acme/app", issue: 7 },
    attempt: 1,
    state: "live",
    mode: "worker",
    workerId: "w1",
    workerName: "night",
    startedAt: "2026-01-01T23:58:00.000Z",
    endedAt: null,
    endReason: null,
    prNumber: null,
    class: null,
    recovery: null,
    evidence: null,
    errors: [],
    ...over,
  });

  test.each([
    [0, "0s"],
    [59_400, "59s"],
    [60_000, "1m00s"],
    [3_599_000, "59m59s"],
    [3_600_000, "1h00m"],
    [86_399_000, "23h59m"],
    [90_000_000, "1d01h"],
  ])("duration of %s ms is %s", (ms, text) => {
    expect(
      duration("2026-01-01T00:00:00.000Z", new Date(Date.parse("2026-01-01T00:00:00.000Z") + ms).toISOString(), now),
    ).toBe(text);
  });

  test.each<[Partial<RunRow>, string]>([
    [{ state: "live", endReason: null }, "live"],
    [{ state: "exited", endReason: "exited 1 without a pull request" }, "exited 1 without a pull request"],
    [{ state: "expired", endReason: "lease expired" }, "expired: lease expired"],
  ])("outcome %j → %s", (over, text) => {
    expect(outcome(run(over))).toBe(text);
  });

  test("evidence: its why, else the last error, on one line and cut", () => {
    expect(shortEvidence(run({ evidence: { why: "no pull\nrequest", trigger: "exit" } }))).toBe("no pull request");
    expect(
      shortEvidence(
        run({ evidence: { trigger: "exit" }, errors: [{ message: "first" }, { message: "GitHub answered 502" }] }),
      ),
    ).toBe("GitHub answered 502");
    expect(shortEvidence(run({ evidence: { why: "x".repeat(100) } }), 20)).toBe(`${"x".repeat(19)}…`);
    expect(shortEvidence(run())).toBe("");
  });

  test("a dispatched run has no worker; a full page says how to see more; none says so", () => {
    const text = runsText(
      {
        runs: [
          run(),
          run({
            id: "r0",
            mode: "dispatch",
            workerId: null,
            workerName: null,
            state: "review",
            endReason: "pull request #9",
            startedAt: "2026-01-01T20:00:00.000Z",
            endedAt: "2026-01-01T20:12:05.000Z",
          }),
        ],
        limit: 2,
      },
      now,
    );
    expect(text.split("\n")).toEqual([
      "RUN  TASK        WORKER      STATE                    CLASS  RECOVERY  STARTED               TOOK          EVIDENCE",
      "r1   acme/app#7  night       live                     -      -         2026-01-01T23:58:00Z  2m00s so far",
      "r0   acme/app#7  (dispatch)  review: pull request #9  -      -         2026-01-01T20:00:00Z  12m05s",
      "(the newest 2; --limit shows more)",
      "",
    ]);
    expect(runsText({ runs: [], limit: 50 })).toBe("no runs\n");
  });
});
