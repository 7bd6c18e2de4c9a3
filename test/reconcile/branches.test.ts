import { branchVerdict } from "../../src/reconcile/branches.js";

const NOW = new Date("2026-12-01T00:00:00Z");
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000);
const b = (pullRequests: number, committedAt: Date | null) => ({
  name: "agent/x",
  sha: "a".repeat(40),
  committedAt,
  pullRequests,
});

describe("branchVerdict: stale only with no task, no pull request and no recent commit", () => {
  test.each([
    ["a task ran on it", b(0, daysAgo(100)), "t1", false, /task t1 ran on it/],
    ["a pull request uses it", b(1, daysAgo(100)), null, false, /a pull request uses it/],
    ["pull requests use it", b(3, daysAgo(100)), null, false, /pull requests use it/],
    ["date unknown: not stale", b(0, null), null, false, /unknown/],
    ["recent commit", b(0, daysAgo(13)), null, false, /13 day/],
    ["old, nobody's", b(0, daysAgo(14)), null, true, /no task, no pull request, last commit 14 days ago/],
  ] as const)("%s", (_name, branch, task, stale, why) => {
    const v = branchVerdict(branch, task, NOW, 14);
    expect(v.stale).toBe(stale);
    expect(v.why).toMatch(why);
  });
});
