/**
 * The classifier against DESIGN's closed set, one row per situation. The
 * edges are the incidents: a "success" that left only commits, a dead lease
 * read as a phantom (which deletes a branch), checks that were never run
 * read as green (which publishes untested work).
 */
import { classify, type FailureClass, type Recovery } from "../../src/outcomes/classify.js";
import type { CheckFact, Facts } from "../../src/outcomes/facts.js";
import { factsProblems } from "../support/facts.js";

const HEAD = "c0ffee1";
const OLD = "0ld5ha0";

interface Shape {
  trigger?: Facts["trigger"];
  run?: Partial<Facts["run"]>;
  pr?: Facts["pr"];
  branch?: Facts["branch"];
  checks?: CheckFact[];
  rerunsUsed?: number;
  rerunBudget?: number;
  timedOut?: Facts["timedOut"];
}

/** A facts document with quiet defaults: exit 0, no PR, no branch, no checks. */
function facts(s: Shape = {}): Facts {
  return {
    trigger: s.trigger ?? "exit",
    run: { exitCode: 0, ...s.run },
    pr: s.pr ?? null,
    branch: s.branch ?? null,
    checks: s.checks ?? [],
    ...(s.rerunsUsed !== undefined ? { rerunsUsed: s.rerunsUsed } : {}),
    ...(s.rerunBudget !== undefined ? { rerunBudget: s.rerunBudget } : {}),
    ...(s.timedOut !== undefined ? { timedOut: s.timedOut } : {}),
  };
}

const ahead = (n: number, headSha = HEAD): Facts["branch"] => ({ name: "agent/42-fix-login", aheadBy: n, headSha });
const pr = (state: "open" | "closed" | "merged", mergeable?: "MERGEABLE" | "CONFLICTING" | "UNKNOWN"): Facts["pr"] => ({
  number: 7,
  state,
  headSha: HEAD,
  ...(mergeable ? { mergeable } : {}),
});
const check = (name: string, conclusion: string | null, more: Partial<CheckFact> = {}): CheckFact => ({
  name,
  headSha: HEAD,
  status: conclusion === null ? "in_progress" : "completed",
  conclusion,
  ...more,
});
const green = [check("build", "success"), check("lint", "neutral"), check("docs", "skipped")];
const failingWith = (text: string): CheckFact => check("test", "failure", { output: { title: "test", text } });

interface Row {
  name: string;
  facts: Facts;
  cls: FailureClass;
  recovery: Recovery;
  evidence?: Record<string, unknown>;
}

const why = (re: RegExp) => ({ why: expect.stringMatching(re) });

const rows: Row[] = [
  // merged
  {
    name: "exit 0 and the PR is merged",
    facts: facts({ pr: pr("merged"), branch: ahead(2) }),
    cls: "merged",
    recovery: "settle",
    evidence: why(/#7 is merged/),
  },
  {
    name: "exit 1 but the PR is merged anyway",
    facts: facts({ run: { exitCode: 1 }, pr: pr("merged") }),
    cls: "merged",
    recovery: "settle",
  },
  {
    name: "lease expired after the PR merged",
    facts: facts({ trigger: "lease-expired", run: { exitCode: null }, pr: pr("merged") }),
    cls: "merged",
    recovery: "settle",
  },

  // no proof of a pass, and a PR a person closed
  {
    name: "commits ahead, a check completed without a conclusion",
    facts: facts({ branch: ahead(2), checks: [check("ci", null, { status: "completed" })] }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/no conclusion: ci/),
  },
  {
    name: "commits ahead and green, but the branch's PR was closed unmerged",
    facts: facts({ pr: pr("closed"), branch: ahead(2), checks: green }),
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/closed without merging/),
  },
  {
    name: "exit 0, nothing ahead, the branch's PR was closed unmerged",
    facts: facts({ pr: pr("closed") }),
    cls: "unknown",
    recovery: "escalate",
  },
  {
    name: "infra by npm's own E503 line",
    facts: facts({
      trigger: "check-failed",
      run: { exitCode: null },
      pr: pr("open"),
      checks: [check("install", "failure", { output: { text: "npm error code E503" } })],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },

  // phantom: only for a reported success with nothing on GitHub
  {
    name: "exit 0, branch missing entirely",
    facts: facts({}),
    cls: "phantom",
    recovery: "delete-branch-requeue",
    evidence: { claimHeld: false, ...why(/exit 0.*no branch on GitHub/) },
  },
  {
    name: "exit 0, branch with nothing ahead",
    facts: facts({ branch: ahead(0) }),
    cls: "phantom",
    recovery: "delete-branch-requeue",
    evidence: why(/no commits ahead/),
  },

  // debris-empty (A)
  {
    name: "exit 1, branch missing entirely",
    facts: facts({ run: { exitCode: 1 } }),
    cls: "debris-empty",
    recovery: "delete-branch-requeue",
    evidence: why(/no branch on GitHub/),
  },
  {
    name: "exit 1, nothing ahead",
    facts: facts({ run: { exitCode: 1 }, branch: ahead(0) }),
    cls: "debris-empty",
    recovery: "delete-branch-requeue",
  },
  {
    name: "lease expired, nothing ahead: never phantom",
    facts: facts({ trigger: "lease-expired", run: { exitCode: null }, branch: ahead(0) }),
    cls: "debris-empty",
    recovery: "delete-branch-requeue",
    evidence: { note: expect.stringMatching(/lease expired/) },
  },
  {
    name: "lease expired with a stale exit 0 on record, no branch: still never phantom",
    facts: facts({ trigger: "lease-expired", run: { exitCode: 0 } }),
    cls: "debris-empty",
    recovery: "delete-branch-requeue",
  },
  {
    name: "lease expired, no branch, but the last heartbeat reported a dirty worktree: never debris-empty",
    facts: facts({ trigger: "lease-expired", run: { exitCode: null, lastProgress: { step: "edit", dirty: true } } }),
    cls: "unknown",
    recovery: "escalate",
    evidence: { lastProgress: { step: "edit", dirty: true }, ...why(/dirty worktree.*on the worker's machine/) },
  },
  {
    name: "lease expired, nothing ahead on GitHub, the last heartbeat reported local commits: never debris-empty",
    facts: facts({
      trigger: "lease-expired",
      run: { exitCode: null, lastProgress: { ahead: 2, dirty: false } },
      branch: ahead(0),
    }),
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/2 commit\(s\) ahead of the base, GitHub shows 0/),
  },
  {
    name: "lease expired, no branch, the last heartbeat's head is not the base's: never debris-empty",
    facts: {
      ...facts({ trigger: "lease-expired", run: { exitCode: null, lastProgress: { headSha: HEAD } } }),
      baseSha: OLD,
    },
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/head c0ffee1, not the base's 0ld5ha0/),
  },
  {
    name: "lease expired, no branch, the last heartbeat's head is the base's: debris-empty, with the progress",
    facts: {
      ...facts({ trigger: "lease-expired", run: { exitCode: null, lastProgress: { headSha: OLD, dirty: false } } }),
      baseSha: OLD,
    },
    cls: "debris-empty",
    recovery: "delete-branch-requeue",
    evidence: { lastProgress: { headSha: OLD, dirty: false } },
  },

  // debris-publishable (B)
  {
    name: "exit 0, commits ahead, green, no PR: the claim did not hold",
    facts: facts({ branch: ahead(3), checks: green }),
    cls: "debris-publishable",
    recovery: "publish",
    evidence: { claimHeld: false, ...why(/3 commit\(s\) ahead.*3 check\(s\) green/) },
  },
  {
    name: "exit 1, commits ahead, tests passed, green",
    facts: facts({ run: { exitCode: 1, testsPassed: true, dirty: false }, branch: ahead(1), checks: green }),
    cls: "debris-publishable",
    recovery: "publish",
  },
  {
    name: "lease expired with commits and green checks",
    facts: facts({
      trigger: "lease-expired",
      run: { exitCode: null },
      branch: ahead(2),
      checks: [check("ci", "success")],
    }),
    cls: "debris-publishable",
    recovery: "publish",
    evidence: { note: expect.stringMatching(/lease expired/) },
  },
  {
    name: "green on head, an older sha failed: the older sha does not count",
    facts: facts({ branch: ahead(2), checks: [check("ci", "failure", { headSha: OLD }), check("ci", "success")] }),
    cls: "debris-publishable",
    recovery: "publish",
  },

  // debris-half-done (C): never deleted
  {
    name: "lease expired, commits ahead and green, but the last heartbeat reported a dirty worktree",
    facts: facts({
      trigger: "lease-expired",
      run: { exitCode: null, lastProgress: { dirty: true, ahead: 2 } },
      branch: ahead(2),
      checks: green,
    }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/dirty worktree/),
  },
  {
    name: "lease expired, green commits on GitHub, more commits than that reported locally: not published",
    facts: facts({
      trigger: "lease-expired",
      run: { exitCode: null, lastProgress: { ahead: 3 } },
      branch: ahead(2),
      checks: green,
    }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/3 commit\(s\) ahead of the base, GitHub shows 2/),
  },
  {
    name: "exit 0, commits ahead, checks failing, no PR",
    facts: facts({ branch: ahead(2), checks: [check("ci", "failure")] }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: { claimHeld: false, ...why(/failing: ci \(failure\)/) },
  },
  {
    name: "green checks but a dirty worktree",
    facts: facts({ run: { exitCode: 0, dirty: true }, branch: ahead(2), checks: green }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/dirty worktree/),
  },
  {
    name: "commits ahead, no checks at all: absent is not green",
    facts: facts({ branch: ahead(2) }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/no checks on the head commit/),
  },
  {
    name: "commits ahead, a check still running",
    facts: facts({ branch: ahead(2), checks: [check("build", "success"), check("e2e", null)] }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/pending: e2e/),
  },
  {
    name: "commits ahead, a check queued",
    facts: facts({ branch: ahead(2), checks: [check("e2e", null, { status: "queued" })] }),
    cls: "debris-half-done",
    recovery: "hold-resume",
  },
  {
    name: "checks green only on an older sha",
    facts: facts({ branch: ahead(2), checks: [check("ci", "success", { headSha: OLD })] }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/no checks on the head/),
  },
  {
    name: "tests reported failing, checks green",
    facts: facts({ run: { exitCode: 1, testsPassed: false }, branch: ahead(1), checks: green }),
    cls: "debris-half-done",
    recovery: "hold-resume",
    evidence: why(/failing tests/),
  },
  {
    name: "lease expired with commits and a failing check",
    facts: facts({
      trigger: "lease-expired",
      run: { exitCode: null },
      branch: ahead(4),
      checks: [check("ci", "failure")],
    }),
    cls: "debris-half-done",
    recovery: "hold-resume",
  },

  // exit/expiry that fits no debris class
  {
    name: "dirty reported but nothing ahead",
    facts: facts({ run: { exitCode: 0, dirty: true }, branch: ahead(0) }),
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/uncommitted changes/),
  },
  {
    name: "dirty reported and no branch",
    facts: facts({ run: { exitCode: 1, dirty: true } }),
    cls: "unknown",
    recovery: "escalate",
  },
  {
    name: "open PR on exit: belongs in review",
    facts: facts({ pr: pr("open"), branch: ahead(2), checks: green }),
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/#7 is open/),
  },
  {
    name: "open PR on lease expiry",
    facts: facts({ trigger: "lease-expired", run: { exitCode: null }, pr: pr("open"), branch: ahead(2) }),
    cls: "unknown",
    recovery: "escalate",
  },

  // question and turn cap
  {
    name: "the worker asked a human",
    facts: facts({ run: { exitCode: 0, question: "Which OAuth scopes should the token have?" } }),
    cls: "question",
    recovery: "block-question",
    evidence: { question: "Which OAuth scopes should the token have?" },
  },
  {
    name: "turn cap hit: escalate with the last tool calls",
    facts: facts({
      run: { exitCode: 1, turnCapHit: true, lastToolCalls: ["bash: npm test", "edit: src/a.ts", "bash: npm test"] },
      branch: ahead(1),
    }),
    cls: "turn-cap-spinning",
    recovery: "escalate",
    evidence: { lastToolCalls: ["bash: npm test", "edit: src/a.ts", "bash: npm test"], ...why(/turn cap/) },
  },
  {
    name: "turn cap hit without tool calls reported",
    facts: facts({ run: { exitCode: 1, turnCapHit: true } }),
    cls: "turn-cap-spinning",
    recovery: "escalate",
    evidence: { lastToolCalls: [] },
  },

  // precedence: merged, question, turn cap, then the trigger's rules
  {
    name: "merged beats question",
    facts: facts({ run: { exitCode: 0, question: "ok?" }, pr: pr("merged") }),
    cls: "merged",
    recovery: "settle",
  },
  {
    name: "merged beats turn cap",
    facts: facts({ run: { exitCode: 1, turnCapHit: true }, pr: pr("merged") }),
    cls: "merged",
    recovery: "settle",
  },
  {
    name: "merged beats a failed check",
    facts: facts({ trigger: "check-failed", pr: pr("merged"), checks: [check("ci", "failure")] }),
    cls: "merged",
    recovery: "settle",
  },
  {
    name: "question beats turn cap",
    facts: facts({ run: { exitCode: 1, question: "ok?", turnCapHit: true } }),
    cls: "question",
    recovery: "block-question",
  },
  {
    name: "question beats phantom",
    facts: facts({ run: { exitCode: 0, question: "ok?" } }),
    cls: "question",
    recovery: "block-question",
  },
  {
    name: "turn cap beats phantom",
    facts: facts({ run: { exitCode: 0, turnCapHit: true } }),
    cls: "turn-cap-spinning",
    recovery: "escalate",
  },
  {
    name: "turn cap beats debris-publishable",
    facts: facts({ run: { exitCode: 0, turnCapHit: true }, branch: ahead(2), checks: green }),
    cls: "turn-cap-spinning",
    recovery: "escalate",
  },
  {
    name: "turn cap beats debris-half-done",
    facts: facts({ run: { exitCode: 1, turnCapHit: true, dirty: true }, branch: ahead(2) }),
    cls: "turn-cap-spinning",
    recovery: "escalate",
  },
  {
    name: "question beats merge-conflict",
    facts: facts({
      trigger: "base-moved",
      run: { exitCode: null, question: "which side wins?" },
      pr: pr("open", "CONFLICTING"),
    }),
    cls: "question",
    recovery: "block-question",
  },

  // infra by conclusion
  {
    name: "timed_out, no reruns yet",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("e2e", "timed_out"), check("lint", "success")],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
    evidence: {
      rerunsUsed: 0,
      rerunBudget: 2,
      failed: [{ name: "e2e", conclusion: "timed_out", infra: "conclusion timed_out" }],
    },
  },
  {
    name: "cancelled",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: [check("build", "cancelled")] }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "startup_failure",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: [check("build", "startup_failure")] }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "stale",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: [check("build", "stale")] }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },

  // infra by output text
  {
    name: "runner shutdown signal",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [
        failingWith(
          "##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped.",
        ),
      ],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
    evidence: why(/infrastructure/),
  },
  {
    name: "no space left on device",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [failingWith("Error: No space left on device : '/home/runner/_diag/x.log'")],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "killed with exit code 137",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [failingWith("Error: Process completed with exit code 137.")],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "registry 503",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [failingWith("npm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/left-pad")],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "registry 504 in the summary",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [
        check("install", "failure", {
          output: { summary: "npm ERR! 504 Gateway Timeout - GET https://registry.npmjs.org/@umai%2fshop-dashboard" },
        }),
      ],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "runner lost communication",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [failingWith("The hosted runner: GitHub Actions 12 lost communication with the server.")],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "network reset",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [failingWith("npm ERR! code ECONNRESET\nnpm ERR! network aborted")],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },

  // infra rerun budget
  {
    name: "infra, one rerun left",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("e2e", "timed_out")],
      rerunsUsed: 1,
      rerunBudget: 2,
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "infra, rerun budget spent",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("e2e", "timed_out")],
      rerunsUsed: 2,
      rerunBudget: 2,
    }),
    cls: "infra",
    recovery: "escalate",
    evidence: { rerunsUsed: 2, rerunBudget: 2, ...why(/persist after 2 rerun/) },
  },
  {
    name: "timed out again when rerun on the same commit: the change hangs, fix-checks with both timeouts",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("e2e", "timed_out"), check("lint", "success")],
      rerunsUsed: 1,
      timedOut: [
        { name: "e2e", checkRunId: 11 },
        { name: "e2e", checkRunId: 12 },
      ],
    }),
    cls: "checks-failed",
    recovery: "continue-fix-checks",
    evidence: {
      timeouts: [
        { name: "e2e", checkRunId: 11 },
        { name: "e2e", checkRunId: 12 },
      ],
      ...why(/^e2e timed out again when rerun on the same commit/),
    },
  },
  {
    name: "a first timeout after a rerun of another failure is still infrastructure",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("e2e", "timed_out")],
      rerunsUsed: 1,
      timedOut: [{ name: "e2e", checkRunId: 12 }],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "another check's two timeouts (it passes now) do not make this one a hang",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("e2e", "timed_out"), check("lint", "success")],
      rerunsUsed: 1,
      timedOut: [
        { name: "lint", checkRunId: 3 },
        { name: "lint", checkRunId: 4 },
        { name: "e2e", checkRunId: 5 },
      ],
    }),
    cls: "infra",
    recovery: "rerun-failed-jobs",
  },
  {
    name: "infra, default budget (2) spent",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: [check("e2e", "cancelled")], rerunsUsed: 2 }),
    cls: "infra",
    recovery: "escalate",
  },
  {
    name: "infra, budget of zero",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: [check("e2e", "cancelled")], rerunBudget: 0 }),
    cls: "infra",
    recovery: "escalate",
  },

  // checks-failed
  {
    name: "a real test failure",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [failingWith("expected 200, received 401"), check("lint", "success")],
    }),
    cls: "checks-failed",
    recovery: "continue-fix-checks",
    evidence: why(/failing: test/),
  },
  {
    name: "one timed_out and one real failure: a rerun cannot fix it",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("e2e", "timed_out"), check("unit", "failure")],
    }),
    cls: "checks-failed",
    recovery: "continue-fix-checks",
    evidence: { why: "failing: unit" },
  },
  {
    name: "action_required is a failure, not infra",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: [check("deploy", "action_required")] }),
    cls: "checks-failed",
    recovery: "continue-fix-checks",
  },
  {
    name: "checks-failed on the branch head when there is no PR",
    facts: facts({ trigger: "check-failed", branch: ahead(1), checks: [check("ci", "failure")] }),
    cls: "checks-failed",
    recovery: "continue-fix-checks",
  },
  {
    name: "checks-failed with rerun budget spent is still checks-failed",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: [check("ci", "failure")], rerunsUsed: 5 }),
    cls: "checks-failed",
    recovery: "continue-fix-checks",
  },

  // check-failed trigger with nothing failed on the head
  {
    name: "failure only on an older sha",
    facts: facts({
      trigger: "check-failed",
      pr: pr("open"),
      checks: [check("ci", "failure", { headSha: OLD }), check("ci", "success")],
    }),
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/no check on the head has failed/),
  },
  {
    name: "check-failed with every check green",
    facts: facts({ trigger: "check-failed", pr: pr("open"), checks: green }),
    cls: "unknown",
    recovery: "escalate",
  },

  // base moved
  {
    name: "base moved and the PR conflicts",
    facts: facts({ trigger: "base-moved", run: { exitCode: null }, pr: pr("open", "CONFLICTING") }),
    cls: "merge-conflict",
    recovery: "continue-rebase",
    evidence: why(/#7 conflicts/),
  },
  {
    name: "base moved, PR still mergeable",
    facts: facts({ trigger: "base-moved", run: { exitCode: null }, pr: pr("open", "MERGEABLE") }),
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/nothing conflicts/),
  },
  {
    name: "base moved, mergeability not computed yet",
    facts: facts({ trigger: "base-moved", run: { exitCode: null }, pr: pr("open", "UNKNOWN") }),
    cls: "unknown",
    recovery: "escalate",
    evidence: why(/not computed/),
  },
  {
    name: "base moved, no PR",
    facts: facts({ trigger: "base-moved", run: { exitCode: null } }),
    cls: "unknown",
    recovery: "escalate",
  },
  {
    name: "base moved, closed PR that conflicts",
    facts: facts({ trigger: "base-moved", run: { exitCode: null }, pr: pr("closed", "CONFLICTING") }),
    cls: "unknown",
    recovery: "escalate",
  },
];

describe("classify", () => {
  test.each(rows)("$name → $cls / $recovery", ({ facts: doc, cls, recovery, evidence }) => {
    expect(factsProblems(doc)).toEqual([]);
    const verdict = classify(doc);
    expect({ class: verdict.class, recovery: verdict.recovery }).toEqual({ class: cls, recovery });
    expect(verdict.evidence["why"]).toEqual(expect.any(String));
    if (evidence) expect(verdict.evidence).toMatchObject(evidence);
  });

  test("the table covers the whole closed set and every recovery", () => {
    const classes: FailureClass[] = [
      "merged",
      "phantom",
      "debris-empty",
      "debris-publishable",
      "debris-half-done",
      "infra",
      "checks-failed",
      "merge-conflict",
      "turn-cap-spinning",
      "question",
      "unknown",
    ];
    const recoveries: Recovery[] = [
      "settle",
      "delete-branch-requeue",
      "publish",
      "hold-resume",
      "rerun-failed-jobs",
      "escalate",
      "continue-fix-checks",
      "continue-rebase",
      "block-question",
    ];
    expect(new Set(rows.map((r) => r.cls))).toEqual(new Set(classes));
    expect(new Set(rows.map((r) => r.recovery))).toEqual(new Set(recoveries));
    expect(rows.some((r) => r.cls === "infra" && r.recovery === "escalate")).toBe(true);
  });

  test("row names are unique, so a failure points at one row", () => {
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
  });

  test("a success claim only fails to hold on exit, never on lease expiry", () => {
    const expired = classify(
      facts({ trigger: "lease-expired", run: { exitCode: 0 }, branch: ahead(2), checks: green }),
    );
    expect(expired.evidence).not.toHaveProperty("claimHeld");
    const failed = classify(facts({ run: { exitCode: 1 }, branch: ahead(2), checks: green }));
    expect(failed.evidence).not.toHaveProperty("claimHeld");
  });

  test("pure: the same facts give the same answer and are not changed", () => {
    const doc = facts({ branch: ahead(2), checks: [check("ci", "failure")] });
    const before = structuredClone(doc);
    expect(classify(doc)).toEqual(classify(doc));
    expect(doc).toEqual(before);
  });
});
