/** The `orchestra workers` argument parser and table, table-driven (the verbs themselves run end to end in credentials.e2e). */
import { table, workersArgs } from "../../src/cli/workers.js";
import type { WorkerListing } from "../../src/workers/tokens.js";

describe("workersArgs", () => {
  test.each([
    [[], { verb: "list", json: false }],
    [["--json"], { verb: "list", json: true }],
    [["list", "--json"], { verb: "list", json: true }],
    [["revoke", "w1"], { verb: "revoke", id: "w1", json: false }],
    [["rotate", "--json", "w1"], { verb: "rotate", id: "w1", json: true }],
    [["resume", "w1"], { verb: "resume", id: "w1", json: false }],
    [["add", "laptop"], { verb: "add", id: "laptop", json: false }],
    [
      ["add", "laptop", "--repo", "acme/app", "--repo=acme/lib", "--json"],
      { verb: "add", id: "laptop", repos: ["acme/app", "acme/lib"], json: true },
    ],
  ])("%j → %j", (args, expected) => {
    expect(workersArgs(args)).toEqual(expected);
  });

  test.each([
    [["revoke"], /^workers revoke needs a worker id; list them with: orchestra workers list$/],
    [["rotate", "a", "b"], /^workers rotate takes one worker id \(got a b\)$/],
    [["list", "extra"], /^workers list takes no arguments \(got extra\)$/],
    [
      ["delete", "w1"],
      /^workers: unknown verb "delete"; use list, add <name>, revoke <id>, rotate <id> or resume <id>/,
    ],
    [["resume"], /^workers resume needs a worker id; list them with: orchestra workers list$/],
    [["--all"], /^workers: unknown option --all/],
    [["add"], /^workers add needs a name for the worker, e\.g\. orchestra workers add laptop --repo acme\/app$/],
    [["add", "a", "b"], /^workers add takes one name \(got a b\); repositories go after --repo$/],
    [["add", "a", "--repo"], /^workers: --repo needs owner\/repo/],
    [["add", "a", "--repo", "--json"], /^workers: --repo needs owner\/repo/],
    [["add", "a", "--repo", "acme"], /^workers add: --repo acme is not owner\/repo$/],
    [["add", "a", "--repo", "acme/app/x"], /^workers add: --repo acme\/app\/x is not owner\/repo$/],
    [["list", "--repo", "acme/app"], /^workers list takes no --repo \(only workers add does\)$/],
    [["rotate", "w1", "--repo", "acme/app"], /^workers rotate takes no --repo/],
  ])("%j is refused with a reason", (args, message) => {
    const r = workersArgs(args);
    expect("error" in r ? r.error : "").toMatch(message);
  });
});

describe("table", () => {
  const w = (over: Partial<WorkerListing>): WorkerListing => ({
    id: "w-1",
    name: "laptop",
    repos: null,
    tokenHint: "ab12",
    createdAt: "2026-01-01T00:00:00.000Z",
    lastSeenAt: null,
    rotatedAt: null,
    revokedAt: null,
    liveLeases: 0,
    paused: null,
    ...over,
  });

  test("one aligned line per worker, no secrets, times to the second", () => {
    const text = table([
      w({}),
      w({
        id: "w-22",
        name: "ci",
        repos: ["acme/app", "acme/lib"],
        lastSeenAt: "2026-01-02T03:04:05.678Z",
        revokedAt: "2026-01-03T00:00:00.000Z",
        liveLeases: 2,
      }),
    ]);
    expect(text.split("\n")).toEqual([
      "ID    NAME    REPOS              TOKEN  LAST SEEN             LEASES  PAUSED UNTIL  REVOKED",
      "w-1   laptop  all                …ab12  -                     0       -             -",
      "w-22  ci      acme/app,acme/lib  …ab12  2026-01-02T03:04:05Z  2       -             2026-01-03T00:00:00Z",
      "",
    ]);
  });

  test("a paused worker shows until when, and under the table why and how to resume it", () => {
    const text = table([
      w({ paused: { until: "2026-01-01T00:30:00.000Z", reason: "3 runs released before the agent started" } }),
    ]);
    expect(text.split("\n")).toEqual([
      "ID   NAME    REPOS  TOKEN  LAST SEEN  LEASES  PAUSED UNTIL          REVOKED",
      "w-1  laptop  all    …ab12  -          0       2026-01-01T00:30:00Z  -",
      "paused w-1 (laptop): 3 runs released before the agent started; resume it with: orchestra workers resume w-1",
      "",
    ]);
  });

  test("no workers: says how to register one", () => {
    expect(table([])).toBe(
      "no workers registered; register one with: orchestra workers add <name> [--repo owner/repo ...]\n",
    );
  });
});
