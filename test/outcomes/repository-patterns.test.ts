/**
 * A repository's infraPatterns run in RE2, in time linear in the log: a
 * pattern that backtracks exponentially in JavaScript's engine (`(a+)+$`
 * against a long line of a's ending in something else) would hold the event
 * loop, which every installation shares, for longer than the universe has
 * existed. Here each such pattern classifies a long log and returns, with the
 * right answer. What RE2 cannot run in linear time (back-references,
 * lookarounds) is refused in the configuration, with a line naming the pattern
 * and why.
 */
import { classify } from "../../src/outcomes/classify.js";
import type { CheckFact, Facts } from "../../src/outcomes/facts.js";
import { infraMatch } from "../../src/outcomes/infra-patterns.js";
import { repositoryPatternProblem, repositoryPatterns } from "../../src/outcomes/repository-patterns.js";
import { parseRepoConfig } from "../../src/config/repo.js";
import { factsProblems } from "../support/facts.js";

const HEAD = "c0ffee1";
const failing = (text: string): CheckFact => ({
  name: "e2e",
  headSha: HEAD,
  status: "completed",
  conclusion: "failure",
  output: { title: "e2e / chrome", text },
});
const facts = (text: string, infraPatterns: string[]): Facts => ({
  trigger: "check-failed",
  run: { exitCode: null },
  pr: { number: 7, state: "open", headSha: HEAD },
  branch: null,
  checks: [failing(text)],
  infraPatterns,
});

const N = 50_000;
const REFUSED =
  "infraPatterns use RE2 syntax (JavaScript's, without back-references or lookarounds): rewrite or remove it";

describe("catastrophic patterns against long logs", () => {
  // JavaScript's backtracking engine takes about 2^n steps on each "no" row (n = the line's length, 50,000 here).
  test.each([
    { pattern: "(a+)+$", shape: "50,000 a's", line: "a".repeat(N), expected: "infra" },
    { pattern: "(a+)+$", shape: "50,000 a's and a !", line: `${"a".repeat(N)}!`, expected: "checks-failed" },
    {
      pattern: "^(\\w+\\s?)*$",
      shape: "10,000 words and a !",
      line: `${"word ".repeat(N / 5)}!`,
      expected: "checks-failed",
    },
    { pattern: "^(\\w+\\s?)*$", shape: "10,000 words", line: "word ".repeat(N / 5), expected: "infra" },
    { pattern: "(x+x+)+y", shape: "50,000 x's", line: "x".repeat(N), expected: "checks-failed" },
    { pattern: "(x+x+)+y", shape: "50,000 x's and a y", line: `${"x".repeat(N)}y`, expected: "infra" },
    { pattern: "^(a|aa)+$", shape: "50,000 a's and a b", line: `${"a".repeat(N)}b`, expected: "checks-failed" },
    { pattern: "^(.*?,){11}P", shape: "25,000 '1,'", line: "1,".repeat(N / 2), expected: "checks-failed" },
  ])("$pattern against $shape → $expected", ({ pattern, line, expected }) => {
    const doc = facts(`$ npm run e2e\n${line}\nProcess completed with exit code 1.`, [pattern]);
    expect(factsProblems(doc)).toEqual([]);
    const verdict = classify(doc);
    expect(verdict.class).toBe(expected);
    if (expected === "infra") {
      const evidence = `${line.slice(0, 499)}…`;
      expect(verdict.evidence["failed"]).toEqual([
        { name: "e2e", conclusion: "failure", infra: `output matches repository pattern /${pattern}/i: ${evidence}` },
      ]);
    }
  });

  test("patterns match case-insensitively, on the line as the tool wrote it and as the runner decorated it", () => {
    const own = repositoryPatterns(["^selenium grid: session queue timed out$", "^##\\[error\\]mirror down$"]);
    expect(infraMatch("2024-05-01T10:00:00.000Z SELENIUM GRID: session queue timed out", own)).toEqual({
      family: "repository pattern /^selenium grid: session queue timed out$/i",
      line: "2024-05-01T10:00:00.000Z SELENIUM GRID: session queue timed out",
    });
    expect(infraMatch("##[error]Mirror down", own)?.family).toBe("repository pattern /^##\\[error\\]mirror down$/i");
    expect(infraMatch("FAIL e2e/login.test.ts\nSelenium Grid: session queue timed out", own)).toBeNull();
  });

  test("patterns compiled before more than a thousand others still match (compiled again, not used freed)", () => {
    const first = repositoryPatterns(["^grid down$"]);
    expect(repositoryPatterns(Array.from({ length: 1200 }, (_, i) => `^service ${i} down$`))).toHaveLength(1200);
    expect(infraMatch("Grid down", first)?.family).toBe("repository pattern /^grid down$/i");
    expect(classify(facts("service 7 down", ["^service 7 down$"])).class).toBe("infra");
  });

  test("JavaScript syntax that RE2 shares is accepted", () => {
    for (const p of [
      "\\d+ ms",
      "\\bgrid\\b",
      "(?<service>grid|hub) down",
      "[^\\s]+\\.test\\.ts",
      "\\u00e9t\\u00e9",
      "^\\p{L}+ down$",
      "a{1000}",
    ])
      expect([p, repositoryPatternProblem(p)]).toEqual([p, null]);
    expect(infraMatch("hub down", repositoryPatterns(["(?<service>grid|hub) down"]))).not.toBeNull();
    expect(infraMatch("ÉTÉ", repositoryPatterns(["\\u00e9t\\u00e9"]))).not.toBeNull();
    expect(infraMatch("Écrivain down", repositoryPatterns(["^\\p{L}+ down$"]))).not.toBeNull();
  });
});

describe("patterns RE2 cannot run are refused where configuration problems are reported", () => {
  const backReference =
    "it uses a back-reference (\\1 or \\k<name>), which the linear-time matcher (RE2) does not support";
  const lookaround =
    "it uses a lookaround ((?=, (?!, (?<= or (?<!), which the linear-time matcher (RE2) does not support";
  test.each([
    ["(a)\\1", backReference],
    ["(?<word>\\w+) \\k<word>", backReference],
    ["timed out(?= after)", lookaround],
    ["(?!ok)fail", lookaround],
    ["(?<=npm )ERR", lookaround],
    ["(?<!test )timeout", lookaround],
    ["a{1001}", "a counted repetition ({n} or {n,m}) is above 1000, or nested ones multiply past it"],
    ["((a{100}){100}){100}", "a counted repetition ({n} or {n,m}) is above 1000, or nested ones multiply past it"],
    ["(unclosed", "it is not a valid regular expression"],
    ["\\Z", "the linear-time matcher (RE2) cannot compile it (invalid escape sequence: \\Z)"],
  ])("%s", (pattern, why) => {
    const line = `\`${pattern}\` is refused: ${why}. ${REFUSED}`;
    expect(repositoryPatternProblem(pattern)).toBe(line);
    expect(parseRepoConfig({ infraPatterns: ["grid down", pattern] })).toEqual({
      ok: false,
      problems: [`infraPatterns.1: ${line}`],
    });
    expect(factsProblems(facts("", ["grid down", pattern]))).toEqual([`infraPatterns.1: ${line}`]);
  });

  test("a pattern with a backtick is still shown as one code span", () => {
    expect(repositoryPatternProblem("`(?=x)")).toBe(
      `\`\` \`(?=x) \`\` is refused: it uses a lookaround ((?=, (?!, (?<= or (?<!), which the linear-time matcher ` +
        `(RE2) does not support. ${REFUSED}`,
    );
  });
});
