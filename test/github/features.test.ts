/**
 * What the host lacks, found from positive evidence only: its release (GET
 * /meta), or — where the release could not be read — GitHub's 404 on the
 * dependencies route for an issue GitHub shows exists. A 5xx, a missing
 * issue or a host whose release has the feature is never taken for a gap.
 * Each gap is found once and logged once.
 */
import pino from "pino";
import { Writable } from "node:stream";
import { HostFeatures, type BlockersRead } from "../../src/github/features.js";
import { GitHubError } from "../../src/github/port.js";
import { gitHubError, memoryGitHub, type MemoryGitHub } from "../support/memory-github.js";

const r = { owner: "acme", repo: "app" };
const NOW = new Date("2026-06-01T12:00:00Z");

function setup(ghes: string | null) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const features = new HostFeatures({ log: pino({ level: "debug" }, sink), clock: { now: () => NOW } });
  const gh = memoryGitHub({
    ghes,
    repos: {
      "acme/app": {
        issues: [{ number: 1, blockedBy: [{ repo: "acme/app", number: 2, state: "open" }] }, { number: 2 }],
      },
    },
  });
  const warned = () => lines.filter((l) => l["level"] === 40);
  return { features, gh, warned };
}

const outcome = async (p: Promise<BlockersRead>) =>
  p.then(
    (x) => ("unsupported" in x ? `fallback: ${x.unsupported.evidence}` : `blockers: ${x.blockers.length}`),
    (e: unknown) => `throws ${e instanceof GitHubError ? e.status : String(e)}`,
  );
const calls = (gh: MemoryGitHub) => gh.calls.map((c) => c.method);

describe("a host's release decides, once it is read", () => {
  test.each<[string, string | null, string, string[]]>([
    ["api.github.com or GHEC: blockers are read", null, "blockers: 1", ["hostVersion", "blockedBy"]],
    ["GHES 3.19: blockers are read", "3.19.0", "blockers: 1", ["hostVersion", "blockedBy"]],
    [
      "GHES 3.17: the fallback, without asking for the route",
      "3.17.4",
      "fallback: GitHub Enterprise Server 3.17.4 (GET /meta): it came in GHES 3.19",
      ["hostVersion"],
    ],
    [
      "GHES 3.18: the fallback",
      "3.18.1",
      "fallback: GitHub Enterprise Server 3.18.1 (GET /meta): it came in GHES 3.19",
      ["hostVersion"],
    ],
  ])("%s", async (_n, ghes, expected, asked) => {
    const { features, gh, warned } = setup(ghes);
    expect(await outcome(features.blockedBy(gh, r, 1))).toBe(expected);
    expect(calls(gh)).toEqual(asked);
    // Asked again: the release is not read twice, and a gap is not logged twice.
    await features.blockedBy(gh, r, 1);
    await features.blockedBy(gh, r, 2);
    expect(calls(gh).filter((m) => m === "hostVersion")).toHaveLength(1);
    expect(warned()).toHaveLength(expected.startsWith("fallback") ? 1 : 0);
    expect(features.report().gaps.map((g) => g.feature)).toEqual(
      expected.startsWith("fallback") ? ["issue-dependencies"] : [],
    );
  });

  test("a release that has the route answering 404 is an error, not a gap", async () => {
    const { features, gh, warned } = setup(null);
    gh.failNext("blockedBy", gitHubError("not-found", "blockedBy"));
    expect(await outcome(features.blockedBy(gh, r, 1))).toBe("throws 404");
    expect(calls(gh)).toEqual(["hostVersion", "blockedBy"]);
    expect(warned()).toEqual([]);
  });
});

describe("the release unknown (GET /meta failing): only a 404 for an issue that exists is evidence", () => {
  test.each<[string, (gh: MemoryGitHub) => void, number, string, string[]]>([
    [
      "GHES 3.17's 404 for an issue GitHub shows: the gap",
      () => {},
      1,
      "fallback: GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by answered 404 for acme/app#1, " +
        "which exists (the host's release is not known)",
      ["hostVersion", "blockedBy", "getIssue"],
    ],
    [
      "a 502 from the route: thrown, never a gap",
      (gh) => gh.failNext("blockedBy", gitHubError("server-error", "blockedBy")),
      1,
      "throws 502",
      ["hostVersion", "blockedBy"],
    ],
    [
      "an issue that is not there: GitHub's 404 says that, and nothing of the host",
      () => {},
      9,
      "throws 404",
      ["hostVersion", "blockedBy", "getIssue"],
    ],
    [
      "the issue unreadable right then (502): no evidence either way",
      (gh) => gh.failNext("getIssue", gitHubError("server-error", "getIssue")),
      1,
      "throws 502",
      ["hostVersion", "blockedBy", "getIssue"],
    ],
  ])("%s", async (_n, arrange, issue, expected, asked) => {
    const { features, gh, warned } = setup("3.17.4");
    gh.fail("hostVersion", gitHubError("server-error", "hostVersion"), { times: Infinity });
    arrange(gh);
    expect(await outcome(features.blockedBy(gh, r, issue))).toBe(expected);
    expect(calls(gh)).toEqual(asked);
    const found = expected.startsWith("fallback");
    expect(warned()).toHaveLength(found ? 1 : 0);
    expect(features.report()).toMatchObject({ version: null, host: "not read yet" });
    // Not found yet: the next read asks the release again; found: nothing more is asked.
    gh.calls.length = 0;
    await outcome(features.blockedBy(gh, r, 1));
    expect(calls(gh)[0]).toBe(found ? undefined : "hostVersion");
  });
});
