/**
 * After submission, the pure parts as tables: which behind PR a base push
 * updates, what a check failure reruns, and what the Orchestra check run
 * says.
 */
import { baseActions, readyToUpdate } from "../../src/checks/base.js";
import { rerunTargets } from "../../src/checks/failures.js";
import { renderCheckRun } from "../../src/texts/check-run.js";
import type { CheckRunInfo, PullMergeability } from "../../src/github/port.js";

const pr = (number: number, over: Partial<PullMergeability> = {}): PullMergeability => ({
  number,
  headRef: `agent/issue-${number}`,
  headSha: `${number}`.padStart(40, "a"),
  headRepo: "acme/app",
  baseRef: "main",
  baseSha: "b".repeat(40),
  isDraft: false,
  mergeable: "MERGEABLE",
  mergeState: "BEHIND",
  reviewDecision: null,
  checks: "SUCCESS",
  ...over,
});

describe("readyToUpdate: behind, not a draft, checks green, not waiting on a review", () => {
  test.each<[string, Partial<PullMergeability>, boolean]>([
    ["behind, green, no review needed", {}, true],
    ["behind, green, approved", { reviewDecision: "APPROVED" }, true],
    ["a draft", { isDraft: true }, false],
    ["checks pending", { checks: "PENDING" }, false],
    ["checks failing", { checks: "FAILURE" }, false],
    ["no checks at all", { checks: null }, false],
    ["changes requested", { reviewDecision: "CHANGES_REQUESTED" }, false],
    ["a review required", { reviewDecision: "REVIEW_REQUIRED" }, false],
    ["not behind (clean)", { mergeState: "CLEAN" }, false],
  ])("%s → %s", (_name, over, want) => {
    expect(readyToUpdate(pr(1, over))).toBe(want);
  });
});

describe("baseActions", () => {
  const pulls = [
    pr(30, { mergeable: "CONFLICTING", mergeState: "DIRTY" }),
    pr(20, { checks: "PENDING" }),
    pr(12),
    pr(10),
    pr(40, { mergeState: "CLEAN" }),
    pr(50, { mergeable: "UNKNOWN", mergeState: "UNKNOWN" }),
  ];
  const show = (a: ReturnType<typeof baseActions>) => a.map((x) => `${x.pr.number}:${x.mergeable}`);
  test.each<["ready" | "always" | "never", string[]]>([
    ["ready", ["30:conflicting", "10:behind"]],
    ["always", ["30:conflicting", "10:behind", "12:behind", "20:behind"]],
    ["never", ["30:conflicting"]],
  ])("updateBranch %s", (mode, want) => {
    expect(show(baseActions(pulls, mode))).toEqual(want);
  });
  test("nothing behind or conflicting: nothing to do", () => {
    expect(
      baseActions([pr(1, { mergeState: "CLEAN" }), pr(2, { mergeable: "UNKNOWN", mergeState: "UNKNOWN" })], "always"),
    ).toEqual([]);
  });
});

describe("rerunTargets: each Actions run once, else each other app's suite once", () => {
  const check = (id: number, workflowRunId: number | null, checkSuiteId: number | null): CheckRunInfo => ({
    id,
    name: `c${id}`,
    headSha: "a",
    status: "completed",
    conclusion: "failure",
    output: {},
    checkSuiteId,
    workflowRunId,
    pullRequests: [1],
  });
  test.each<[string, CheckRunInfo[], unknown[]]>([
    ["two jobs of one workflow run", [check(1, 7, 70), check(2, 7, 70)], [{ workflowRunId: 7 }]],
    ["jobs of two workflow runs", [check(1, 7, 70), check(2, 8, 80)], [{ workflowRunId: 7 }, { workflowRunId: 8 }]],
    ["another app's check", [check(1, null, 90), check(2, null, 90)], [{ checkSuiteId: 90 }]],
    ["both kinds", [check(1, 7, 70), check(2, null, 90)], [{ workflowRunId: 7 }, { checkSuiteId: 90 }]],
    ["nothing to rerun", [check(1, null, null)], []],
  ])("%s", (_name, failing, want) => {
    expect(rerunTargets(failing)).toEqual(want);
  });
});

describe("the Orchestra check run", () => {
  const task = { id: "t1", issue: 12, state: "review", attempt: 2, continuation: null };
  const runs = [
    {
      id: "aaaaaaaa-1",
      attempt: 1,
      state: "expired",
      endReason: "lease expired without an exit",
      class: "debris-empty",
      recovery: "delete-branch-requeue",
      evidence: JSON.stringify({ why: "no pull request and no branch" }),
      startedAt: new Date(0),
    },
    {
      id: "bbbbbbbb-2",
      attempt: 2,
      state: "review",
      endReason: "pull request #13 opened",
      class: null,
      recovery: null,
      evidence: null,
      startedAt: new Date(1),
    },
  ];
  test("open work is neutral and lists every run with its class and why", () => {
    const v = renderCheckRun(task, runs, 1, null);
    expect(v.conclusion).toBe("neutral");
    expect(v.title).toBe("Task review, attempt 2");
    expect(v.summary).toContain(
      "| 1 | `aaaaaaaa` | lease expired without an exit | debris-empty | delete-branch-requeue | no pull request and no branch |",
    );
    expect(v.summary).toContain("| 2 | `bbbbbbbb` | pull request #13 opened |");
    expect(v.summary).toContain("Reruns of failed checks on this head: 1.");
  });
  test("a continuation says what it waits on", () => {
    const v = renderCheckRun(
      { ...task, state: "queued", continuation: { kind: "fix-checks", reason: "checks failed: unit" } },
      runs,
      0,
      null,
    );
    expect(v.summary).toContain("Waiting on continuation **fix-checks**: checks failed: unit.");
  });
  test("done is success, with the completion receipt", () => {
    const v = renderCheckRun({ ...task, state: "done" }, runs, 0, { mergeSha: "m".repeat(40), runId: "bbbbbbbb-2" });
    expect(v.conclusion).toBe("success");
    expect(v.summary).toContain(`merged as \`${"m".repeat(40)}\`, submitted by run \`bbbbbbbb-2\``);
  });
});
