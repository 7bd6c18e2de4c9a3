import { atLeast, judge } from "../../src/trust/trust.js";
import { DEFAULT_CONFIG, branchFor, parseRepoConfig, priorityOf } from "../../src/config/repo.js";
import { afterFailedRun, dispatchBackoffMs, labelFor } from "../../src/machine/model.js";
import type { Permission } from "../../src/github/port.js";

describe("atLeast", () => {
  test.each([
    ["admin", "write", true],
    ["maintain", "write", true],
    ["write", "write", true],
    ["triage", "write", false],
    ["read", "triage", false],
    ["none", "read", false],
    ["read", "read", true],
  ] as const)("%s ≥ %s → %s", (have, need, ok) => {
    expect(atLeast(have, need)).toBe(ok);
  });
});

describe("judge", () => {
  const config = parseRepoConfig({ trust: { users: ["Carol"], bots: ["helper[bot]"] } });
  if (!config.ok) throw new Error("config");
  const perm = (p: Permission) => () => Promise.resolve(p);
  const never = () => Promise.reject(new Error("permission must not be looked up"));
  test.each([
    ["writer", { login: "dave", type: "User" }, perm("write"), true],
    ["reader", { login: "eve", type: "User" }, perm("read"), false],
    ["allowlisted user, case-insensitive", { login: "carol", type: "User" }, never, true],
    ["allowlisted bot", { login: "helper[bot]", type: "Bot" }, never, true],
    ["other bot, even with admin", { login: "renovate[bot]", type: "Bot" }, perm("admin"), false],
  ])("%s", async (_n, actor, lookup, trusted) => {
    expect((await judge(actor, config.config, lookup)).trusted).toBe(trusted);
  });
  test("a failed permission lookup is an error, not distrust", async () => {
    await expect(
      judge({ login: "x", type: "User" }, config.config, () => Promise.reject(new Error("502"))),
    ).rejects.toThrow("502");
  });
});

describe("parseRepoConfig", () => {
  test("no file anywhere → the documented defaults", () => {
    expect(parseRepoConfig(null)).toEqual({ ok: true, config: DEFAULT_CONFIG });
    expect(DEFAULT_CONFIG).toEqual({
      labels: {
        queued: "agent:queued",
        inProgress: "agent:in-progress",
        review: "agent:review",
        blocked: "agent:blocked",
        failed: "agent:failed",
      },
      trust: { minPermission: "write", users: [], bots: [] },
      limits: {
        maxAttempts: 3,
        maxConcurrentPerRepo: 5,
        maxConcurrentPerOrg: 20,
        leaseSeconds: 300,
        stallSeconds: 1800,
        graceSeconds: 120,
        rerunBudget: 2,
        infraRequeues: 3,
        maxCostUsd: null,
        maxRunSeconds: 21600,
      },
      breaker: { failures: 5, windowSeconds: 600, coolDownSeconds: 600 },
      branchPrefix: "agent/",
      priorityLabels: [],
      dispatch: null,
      dryRun: false,
      paused: false,
      updateBranch: "ready",
      infraPatterns: [],
      fleetIssue: false,
      credentials: "broker",
    });
  });
  test.each([
    [{ limits: { maxAttempts: 0 } }, "limits.maxAttempts"],
    [{ limits: { leaseSeconds: "long" } }, "limits.leaseSeconds"],
    [{ trust: { minPermission: "owner" } }, "trust.minPermission"],
    [{ labels: { queued: "" } }, "labels.queued"],
    [{ dispatch: { ref: "main" } }, "dispatch.workflow"],
    [{ branchPrefix: "agent branch/" }, "branchPrefix"],
    [{ unknownKey: 1 }, "(top level)"],
    [{ limits: { leaseSeconds: 7200 } }, "limits.leaseSeconds"],
    [{ breaker: { failures: 1 } }, "breaker.failures"],
    [{ infraPatterns: ["(unclosed"] }, "infraPatterns.0"],
    [{ updateBranch: "sometimes" }, "updateBranch"],
    [{ paused: "yes" }, "paused"],
    [{ credentials: "token" }, "credentials"],
    ["just a string", "(top level)"],
  ])("%j is refused naming %s", (doc, field) => {
    const r = parseRepoConfig(doc);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.some((p) => p.startsWith(field))).toBe(true);
  });
  test("partial config keeps defaults for the rest", () => {
    const r = parseRepoConfig({ limits: { maxAttempts: 5 }, dispatch: { workflow: "agent.yml" } });
    expect(r.ok && r.config.limits).toEqual({ ...DEFAULT_CONFIG.limits, maxAttempts: 5 });
    expect(r.ok && r.config.dispatch).toEqual({ workflow: "agent.yml", ref: "main", leaseSeconds: 21600 });
  });
  test("branch and priority", () => {
    const c = parseRepoConfig({ priorityLabels: ["p:high", "p:low"], branchPrefix: "bots/" });
    if (!c.ok) throw new Error("config");
    expect(branchFor(c.config, 12)).toBe("bots/issue-12");
    expect(priorityOf(c.config, ["x", "p:low"])).toBe(1);
    expect(priorityOf(c.config, ["p:low", "p:high"])).toBe(0);
    expect(priorityOf(c.config, [])).toBe(1000);
  });
});

describe("task states", () => {
  test.each([
    ["queued", "agent:queued"],
    ["claimed", "agent:in-progress"],
    ["review", "agent:review"],
    ["blocked", "agent:blocked"],
    ["failed", "agent:failed"],
    ["done", null],
    ["cancelled", null],
  ] as const)("%s shows %s", (state, label) => {
    expect(labelFor(state, DEFAULT_CONFIG.labels)).toBe(label);
  });
  test.each([
    [1, 3, "queued"],
    [2, 3, "queued"],
    [3, 3, "failed"],
    [4, 3, "failed"],
  ] as const)("after attempt %i of %i → %s", (attempt, max, next) => {
    expect(afterFailedRun(attempt, max)).toBe(next);
  });
  test.each([
    [1, 60_000],
    [2, 120_000],
    [3, 240_000],
    [7, 3_600_000],
    [30, 3_600_000],
  ])("refused dispatch %i → wait %i ms", (n, ms) => {
    expect(dispatchBackoffMs(n)).toBe(ms);
  });
});
