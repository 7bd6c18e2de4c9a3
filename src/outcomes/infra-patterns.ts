/**
 * Is a failed check's output an infrastructure failure? infraMatch answers
 * with the family and the line that says so, or null.
 *
 * The rule, in two parts:
 *
 * 1. A pattern recognises the tool that failed, not a word. Lines are matched
 *    one at a time, after the runner's decorations are removed (normalizeLine),
 *    against patterns that begin with the tool's own prefix (see
 *    infra-catalogue/). "connection reset" or "no space left on device"
 *    inside an assertion message, a test name or a diff is not at the start of
 *    a line written by npm, git, curl or the runner, so it does not match.
 *
 * 2. A test runner's failure report is a genuine failure. When the output
 *    carries one (TEST_FAILURE_MARKERS: jest/vitest FAIL, ●, ✕, mocha
 *    "N failing", pytest FAILED, go "--- FAIL:", cargo "test result: FAILED",
 *    JUnit under Gradle or Maven, dotnet test, RSpec, Minitest, PHPUnit, an
 *    AssertionError, jest's expect(received)), only `runner` families count:
 *    the runner's shutdown, lost runner, provisioning, job time limit or
 *    cancellation, the OOM kill, the runner's own disk-full error, a failed
 *    action download. Those say the machine under the tests went away, so the
 *    test results themselves cannot be trusted, and a rerun on a healthy
 *    machine is what tells whether the failure is real: if it is, the rerun
 *    fails without the runner's line and is classified checks-failed. They
 *    count only as the runner or the kernel wrote them, at the start of a
 *    line: indented, they are quoted inside the report (a test asserting on
 *    the kernel's OOM line, shown in jest's diff). `tool` families and the
 *    repository's own patterns are ignored next to a test failure: a test
 *    that spawned npm or curl and printed its error may well be testing
 *    exactly that, and a rerun must never stand in for a fix.
 *
 * A test's own timeout (jest "Exceeded timeout of 5000 ms for a test", mocha
 * "Timeout of 2000ms exceeded") matches nothing: it is the code under test
 * that was slow. So does "Process completed with exit code 143" on its own:
 * SIGTERM alone does not say who sent it; the runner's shutdown or
 * cancellation line, when there is one, does.
 */
import { INFRA_FAMILIES, type InfraFamily } from "./infra-catalogue/index.js";
import type { LinePattern } from "./repository-patterns.js";

export { INFRA_FAMILIES, type InfraFamily };

export interface InfraHit {
  /** The catalogue family, or `repository pattern /…/i` for an infraPatterns entry. */
  family: string;
  /** The output line that matched, trimmed: the evidence. */
  line: string;
}

/** Outputs that report failing tests; their presence means a genuine failure is on record. */
export const TEST_FAILURE_MARKERS: readonly RegExp[] = [
  /^[ \t]*FAIL[ \t]+\S/m, // jest "FAIL src/a.test.ts", vitest " FAIL  a.test.ts > case", go "FAIL\tpkg\t0.01s"
  /^[ \t]*●[ \t]+\S/m, // jest's header of a failed test: "● suite › case"
  /^[ \t]*[✕×][ \t]+\S/m, // jest "✕ case (12 ms)", vitest "× case"
  /^Tests:[ \t]+.*\b\d+ failed\b/m, // jest summary
  /^[ \t]*(?:Test Files|Tests)[ \t]+\d+ failed\b/m, // vitest summary
  /^[ \t]*\d+ failing\b/m, // mocha
  /^FAILED[ \t]+\S/m, // pytest short test summary
  /^=+ .*\b\d+ failed\b.* =+$/m, // pytest final line
  /^[ \t]*--- FAIL: \S/m, // go test
  /^test result: FAILED\b/m, // cargo test
  /^error: test failed, to rerun pass\b/m, // cargo test when a test binary died (src/ops/cargo_test.rs)
  /^[ \t]*\S+ > .+ FAILED$/m, // Gradle's test logging: "com.example.FooTest > bar() FAILED"
  /\bThere were failing tests\. See the report at: /, // Gradle's Test task
  /^(?:\[ERROR\] )?Tests run: \d+, Failures: (?:[1-9]\d*, Errors: \d+|\d+, Errors: [1-9]\d*)/m, // Maven Surefire
  /<<< (?:FAILURE|ERROR)!$/m, // Maven Surefire, the failed test's line
  /^Failed!\s+- Failed:\s+[1-9]/m, // dotnet test (VSTest) summary
  /^\d+ examples?, [1-9]\d* failures?\b/m, // RSpec
  /^\d+ runs, \d+ assertions, (?:[1-9]\d* failures, \d+ errors|\d+ failures, [1-9]\d* errors)/m, // Minitest
  /^(?:FAILURES|ERRORS)!$/m, // PHPUnit
  /\bAssertionError\b/, // node:assert, chai, pytest
  /\bexpect\(received\)/, // jest matchers
];

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** The Actions runner's timestamp and the one space after it: what it puts before every line it logs. */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z /;
const TIMESTAMPS = new RegExp(TIMESTAMP.source, "gm");

/** What the Actions runner and its annotations put in front of a tool's line. */
const DECORATION = new RegExp(
  String.raw`^(?:\s+|\d{2,4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|##\[(?:error|warning)\]|` +
    String.raw`::(?:error|warning)[^:]*::|(?:Error|Warning):(?=\s))`,
);

/** A line as the tool wrote it: timestamps, ##[error], an annotation's "Error: " and indentation removed. */
export function normalizeLine(raw: string): string {
  let line = raw.replace(ANSI, "");
  for (let m = DECORATION.exec(line); m && m[0].length > 0; m = DECORATION.exec(line)) line = line.slice(m[0].length);
  return line.trimEnd();
}

/** Whether the output reports failing tests (rule 2 above), in a job log with the runner's timestamps too. */
export function hasTestFailure(text: string): boolean {
  const clean = text.replace(ANSI, "").replace(TIMESTAMPS, "");
  return TEST_FAILURE_MARKERS.some((m) => m.test(clean));
}

function test(p: RegExp | LinePattern, s: string): boolean {
  if (p instanceof RegExp) p.lastIndex = 0; // a caller's /g or /y pattern must not carry state between lines
  return p.test(s);
}

/** Indented: a line quoted inside a test runner's report, not one the runner or the kernel wrote (rule 2). */
function quoted(raw: string): boolean {
  return /^[ \t]/.test(raw.replace(ANSI, "").replace(TIMESTAMP, ""));
}

function evidence(raw: string): string {
  const line = raw.replace(ANSI, "").trim();
  return line.length > 500 ? `${line.slice(0, 499)}…` : line;
}

/**
 * The first line of `text` that an infrastructure family recognises, with its
 * family; `extra` are the repository's infraPatterns (compiled by RE2, case-
 * insensitive: repositoryPatterns), which count like tool families. Null when
 * nothing matches or when only tool-level lines sit next to a test failure
 * report. Pure.
 */
export function infraMatch(text: string, extra: readonly LinePattern[] = []): InfraHit | null {
  const genuine = hasTestFailure(text);
  const families: readonly InfraFamily[] = genuine
    ? INFRA_FAMILIES.filter((f) => f.scope === "runner")
    : INFRA_FAMILIES;
  const repository = genuine ? [] : extra;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = normalizeLine(raw);
    if (line === "" || (genuine && quoted(raw))) continue;
    const family = families.find((f) => f.patterns.some((p) => test(p, line)));
    if (family) return { family: family.family, line: evidence(raw) };
    const own = repository.find((p) => test(p, line) || test(p, raw.trim()));
    if (own) return { family: `repository pattern /${own.source}/i`, line: evidence(raw) };
  }
  return null;
}
