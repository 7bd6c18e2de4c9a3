/**
 * The infrastructure catalogue against the lines tools really print (each
 * family's samples, cited in src/outcomes/infra-catalogue/), and against
 * genuine failures that merely quote the same words (each family's
 * counterparts, and the negatives below): those must never be rerun instead
 * of fixed. Whole test-run logs: infra-logs.test.ts.
 */
import { classify, infraReason } from "../../src/outcomes/classify.js";
import type { CheckFact, Facts } from "../../src/outcomes/facts.js";
import { factsProblems } from "../support/facts.js";
import { INFRA_FAMILIES, hasTestFailure, infraMatch, normalizeLine } from "../../src/outcomes/infra-patterns.js";

const samples = INFRA_FAMILIES.flatMap((f) => f.samples.map((sample) => ({ family: f.family, sample })));
const counterparts = INFRA_FAMILIES.flatMap((f) => f.counterparts.map((text) => ({ family: f.family, text })));
const PATTERNS = INFRA_FAMILIES.flatMap((f) => f.patterns);

describe("the catalogue", () => {
  test("families are unique, documented, and each has patterns, samples and counterparts", () => {
    expect(new Set(INFRA_FAMILIES.map((f) => f.family)).size).toBe(INFRA_FAMILIES.length);
    for (const f of INFRA_FAMILIES) {
      expect(f.description).not.toBe("");
      expect(f.patterns.length).toBeGreaterThan(0);
      expect(f.samples.length).toBeGreaterThan(0);
      expect({ family: f.family, hasCounterparts: f.counterparts.length > 0 }).toMatchObject({ hasCounterparts: true });
    }
  });

  // The evidence is the line, cut at 500 characters (Maven's run longer).
  test.each(samples)("$family: $sample", ({ family, sample }) => {
    const line = sample.trim();
    expect(infraMatch(sample)).toEqual({ family, line: line.length > 500 ? `${line.slice(0, 499)}…` : line });
  });

  test.each(counterparts)("$family counterpart → nothing: $text", ({ text }) => {
    expect(infraMatch(text)).toBeNull();
  });

  // A counterpart carrying a test runner's failure report rests on rule 2 (infra-patterns.ts); the others
  // may not match a single pattern on any of their lines.
  test.each(counterparts.filter((c) => !hasTestFailure(c.text)))(
    "$family counterpart, line by line: $text",
    ({ text }) => {
      const lines = text.split("\n").map(normalizeLine);
      expect(lines.filter((line) => PATTERNS.some((p) => p.test(line)))).toEqual([]);
    },
  );

  test("every pattern is exercised by one of its family's samples", () => {
    for (const f of INFRA_FAMILIES) {
      for (const p of f.patterns) {
        expect({
          family: f.family,
          pattern: p.source,
          hit: f.samples.some((s) => p.test(normalizeLine(s))),
        }).toMatchObject({ hit: true });
      }
    }
  });

  test("a sample is found inside a job log tail, and the line is the evidence", () => {
    const log = [
      "2024-05-10T10:01:02.1234567Z > orchestra@0.1.0 test",
      "2024-05-10T10:01:02.2234567Z npm ci",
      "2024-05-10T10:01:40.0000000Z npm error code ECONNRESET",
      "2024-05-10T10:01:40.0000001Z npm error network aborted",
      "2024-05-10T10:01:40.1000000Z ##[error]Process completed with exit code 1.",
    ].join("\n");
    expect(infraMatch(log)).toEqual({
      family: "network",
      line: "2024-05-10T10:01:40.0000000Z npm error code ECONNRESET",
    });
  });

  test("colour codes and CRLF line ends do not hide a line", () => {
    expect(
      infraMatch(
        "\u001b[31mnpm ERR! code E429\u001b[39m\r\nnpm ERR! 429 Too Many Requests - GET https://registry.npmjs.org/aws4\r\n",
      )?.family,
    ).toBe("rate-limit");
  });
});

describe("genuine failures that quote the same words", () => {
  const negatives: Array<[string, string]> = [
    [
      "jest: a test named after ECONNRESET",
      '  ● retries › recovers after ECONNRESET\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: "ok"\n    Received: "ECONNRESET"',
    ],
    [
      "jest: a test named after a connection reset",
      "FAIL src/net.test.ts\n  ✕ handles connection reset by peer (12 ms)",
    ],
    ["chai: an assertion quoting a full disk", "AssertionError: expected 'No space left on device' to equal 'ok'"],
    [
      "go test: a disk-full case",
      '--- FAIL: TestDiskFull (0.00s)\n    disk_test.go:12: got "no space left on device", want nil\nFAIL\nFAIL\texample.com/disk\t0.004s',
    ],
    [
      "mocha: a test's own timeout",
      '  1 failing\n\n  1) client\n       fetches:\n     Error: Timeout of 2000ms exceeded. For async tests and hooks, ensure "done()" is called; if returning a Promise, ensure it resolves.',
    ],
    [
      "jest: a test's own timeout",
      '  ● api › answers\n\n    thrown: "Exceeded timeout of 5000 ms for a test.\n    Use jest.setTimeout(newTimeout) to increase the timeout value, if this is a long-running test."',
    ],
    [
      "pytest: an ETIMEDOUT assertion",
      "FAILED tests/test_client.py::test_retry - AssertionError: assert 'ETIMEDOUT' == 'ok'\n==== 1 failed, 12 passed in 0.52s ====",
    ],
    [
      "vitest: a test about exit code 137",
      " FAIL  src/exit.test.ts > maps exit code 137 to oom\n × maps exit code 137 to oom 3ms",
    ],
    [
      "jest: a test spawning npm that prints npm's own reset",
      "FAIL test/install.test.ts\n  ● install › retries the registry\n\n    npm ERR! code ECONNRESET\n    npm ERR! network aborted",
    ],
    ["a failing step, exit code 1", "Error: Process completed with exit code 1."],
    ["SIGTERM alone: exit code 143", "Error: Process completed with exit code 143."],
    ["a type error", "src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'."],
    [
      "a lint error mentioning a timeout",
      "  12:7  error  'timeout' is assigned a value but never used  no-unused-vars",
    ],
    [
      "a bad action reference: 404 (https://github.com/cirrus-actions/rebase/issues/27)",
      "##[warning]Failed to download action 'https://api.github.com/repos/cirrus-actions/rebase/tarball/v1.2.0'. Error Response status code does not indicate success: 404 (Not Found).\n##[error]Response status code does not indicate success: 404 (Not Found).",
    ],
    [
      "git refused: 403 (https://github.com/InternationalColorConsortium/iccDEV/issues/2232)",
      "error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403\nfatal: expected flush after ref listing",
    ],
    [
      "a mistyped host: curl (6) (https://github.com/kingparks/jetbra-activate/issues/5)",
      "curl: (6) Could not resolve host: lin",
    ],
    ["a word, not a tool: reset", "connection reset by peer"],
    ["a word, not a tool: ENOSPC", "ENOSPC"],
    ["a word, not a tool: 503", "got 503 from the mock server"],
    ["an empty output", ""],
  ];

  test.each(negatives)("%s → null", (_name, text) => {
    expect(infraMatch(text)).toBeNull();
  });

  test("a test failure report is recognised", () => {
    expect(negatives.filter(([, t]) => hasTestFailure(t)).length).toBeGreaterThanOrEqual(9);
    expect(hasTestFailure("npm ERR! code ECONNRESET")).toBe(false);
    expect(hasTestFailure("Tests:       12 passed, 12 total")).toBe(false);
  });

  test("the machine going away still counts next to a test failure: a rerun re-tests, it does not hide", () => {
    const text =
      "FAIL src/big.test.ts\n  ✕ builds the index (40210 ms)\n##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.";
    expect(infraMatch(text)?.family).toBe("runner-shutdown");
    expect(
      infraMatch(
        "  ● worker › survives\n\n    expect(received).toBe(expected)\nError: Process completed with exit code 137.",
      )?.family,
    ).toBe("oom-kill");
  });

  test("a tool's line next to a test failure does not", () => {
    expect(infraMatch("npm ERR! code ECONNRESET")?.family).toBe("network");
    expect(infraMatch("npm ERR! code ECONNRESET\n--- FAIL: TestFetch (0.01s)")).toBeNull();
  });
});

describe("repository patterns", () => {
  const grid = [/^selenium grid: session queue timed out$/i];

  test("a repository's own pattern marks its flaky service as infrastructure", () => {
    expect(infraMatch("Selenium Grid: session queue timed out", grid)).toEqual({
      family: "repository pattern /^selenium grid: session queue timed out$/i",
      line: "Selenium Grid: session queue timed out",
    });
    expect(infraMatch("Selenium Grid: session queue timed out")).toBeNull();
  });

  test("they follow the genuine-failure rule", () => {
    expect(infraMatch("FAIL e2e/login.test.ts\nSelenium Grid: session queue timed out", grid)).toBeNull();
  });

  test("a /g pattern does not carry state from one line to the next", () => {
    const g = [/flaky-service down/gi];
    expect(infraMatch("flaky-service down", g)).not.toBeNull();
    expect(infraMatch("flaky-service down", g)).not.toBeNull();
  });
});

describe("infraReason and classify", () => {
  const HEAD = "c0ffee1";
  const failing = (name: string, text: string, conclusion = "failure"): CheckFact => ({
    name,
    headSha: HEAD,
    status: "completed",
    conclusion,
    output: { title: name, text },
  });
  const facts = (checks: CheckFact[], more: Partial<Facts> = {}): Facts => ({
    trigger: "check-failed",
    run: { exitCode: null },
    pr: { number: 7, state: "open", headSha: HEAD },
    branch: null,
    checks,
    ...more,
  });
  const jestFailure = "FAIL src/a.test.ts\n  ✕ adds (3 ms)\n\n  ● adds\n\n    expect(received).toBe(expected)";

  test("the reason names the family and the line", () => {
    expect(infraReason(failing("install", "npm ERR! code E503"))).toBe("output matches remote-5xx: npm ERR! code E503");
    expect(infraReason(failing("install", "Could not reach the flaky mirror"), [/flaky mirror/i])).toBe(
      "output matches repository pattern /flaky mirror/i: Could not reach the flaky mirror",
    );
    expect(infraReason(failing("unit", jestFailure))).toBeNull();
  });

  test("every failing check infrastructure → infra, rerun", () => {
    const doc = facts([
      failing("install", "npm error code ETIMEDOUT"),
      failing("e2e", "The hosted runner: GitHub Actions 9 lost communication with the server."),
    ]);
    const v = classify(doc);
    expect([v.class, v.recovery]).toEqual(["infra", "rerun-failed-jobs"]);
    expect(v.evidence["failed"]).toEqual([
      { name: "install", conclusion: "failure", infra: "output matches network: npm error code ETIMEDOUT" },
      {
        name: "e2e",
        conclusion: "failure",
        infra: "output matches runner-lost: The hosted runner: GitHub Actions 9 lost communication with the server.",
      },
    ]);
  });

  test("one infrastructure failure and one genuine → checks-failed, naming the genuine one", () => {
    const v = classify(facts([failing("install", "npm ERR! code ECONNRESET"), failing("unit", jestFailure)]));
    expect([v.class, v.recovery, v.evidence["why"]]).toEqual(["checks-failed", "continue-fix-checks", "failing: unit"]);
  });

  test.each(["cancelled", "timed_out", "startup_failure", "stale"])(
    "conclusion %s → infra whatever the output says",
    (conclusion) => {
      const v = classify(facts([failing("unit", jestFailure, conclusion)]));
      expect([v.class, v.recovery]).toEqual(["infra", "rerun-failed-jobs"]);
      expect(v.evidence["failed"]).toEqual([{ name: "unit", conclusion, infra: `conclusion ${conclusion}` }]);
    },
  );

  test("the facts document's infraPatterns are compiled case-insensitively and used", () => {
    const check = failing("e2e", "SELENIUM GRID: session queue timed out");
    expect(classify(facts([check])).class).toBe("checks-failed");
    const doc = facts([check], { infraPatterns: ["^selenium grid: session queue timed out$"] });
    expect(factsProblems(doc)).toEqual([]);
    expect(classify(doc)).toMatchObject({ class: "infra", recovery: "rerun-failed-jobs" });
    expect(
      classify(
        facts([failing("e2e", `${jestFailure}\nSELENIUM GRID: session queue timed out`)], {
          infraPatterns: ["selenium grid"],
        }),
      ).class,
    ).toBe("checks-failed");
  });

  test("a facts document with a pattern that does not compile is rejected, naming it", () => {
    expect(factsProblems(facts([], { infraPatterns: ["ok", "(unclosed"] }))).toEqual([
      "infraPatterns.1: `(unclosed` is refused: it is not a valid regular expression. infraPatterns use RE2 syntax " +
        "(JavaScript's, without back-references or lookarounds): rewrite or remove it",
    ]);
  });
});
