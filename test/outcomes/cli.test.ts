/**
 * `orchestra classify`: the function behind it, then the real command from
 * the build. Operators pipe this into other tools, so every bad input must
 * exit 2 with nothing on stdout and name the field at fault.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { classifyCommand } from "../../src/cli/classify.js";
import { classify } from "../../src/outcomes/classify.js";
import type { Facts } from "../../src/outcomes/facts.js";

const root = join(import.meta.dirname, "..", "..");

const publishable: Facts = {
  trigger: "exit",
  run: { exitCode: 0 },
  pr: null,
  branch: { name: "agent/42-fix-login", aheadBy: 2, headSha: "c0ffee1" },
  checks: [{ name: "ci", headSha: "c0ffee1", status: "completed", conclusion: "success" }],
};
const phantom: Facts = { trigger: "exit", run: { exitCode: 0 }, pr: null, branch: null, checks: [] };
const conflict: Facts = {
  trigger: "base-moved",
  run: { exitCode: null },
  pr: { number: 7, state: "open", headSha: "c0ffee1", mergeable: "CONFLICTING" },
  branch: null,
  checks: [],
};

const json = (v: unknown) => JSON.stringify(v);

describe("classifyCommand", () => {
  test("one document: the service's verdict, pretty-printed, exit 0", () => {
    const out = classifyCommand(json(publishable));
    expect(out).toEqual({ stdout: `${JSON.stringify(classify(publishable), null, 2)}\n`, stderr: "", code: 0 });
    const answer = JSON.parse(out.stdout) as Record<string, unknown>;
    expect(Object.keys(answer)).toEqual(["class", "recovery", "evidence"]);
    expect(answer).toMatchObject({ class: "debris-publishable", recovery: "publish", evidence: { claimHeld: false } });
  });

  test("a file piped with a byte-order mark and trailing newline still reads", () => {
    expect(classifyCommand(`\uFEFF${json(phantom)}\n`).code).toBe(0);
  });

  test("--batch: an array in, answers in the same order", () => {
    const out = classifyCommand(json([conflict, phantom, publishable]), { batch: true });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe("");
    const answers = JSON.parse(out.stdout) as Array<{ class: string; recovery: string }>;
    expect(answers.map((a) => [a.class, a.recovery])).toEqual([
      ["merge-conflict", "continue-rebase"],
      ["phantom", "delete-branch-requeue"],
      ["debris-publishable", "publish"],
    ]);
    expect(out.stdout).toBe(`${JSON.stringify([conflict, phantom, publishable].map(classify), null, 2)}\n`);
  });

  test("--batch with an empty array answers an empty array", () => {
    expect(classifyCommand("[]", { batch: true })).toEqual({ stdout: "[]\n", stderr: "", code: 0 });
  });

  test.each([
    ["empty stdin", "", {}, /^orchestra: classify: no input on stdin/],
    ["whitespace only", " \n\t\n", { batch: true }, /^orchestra: classify: no input on stdin; it reads a JSON array/],
    ["not JSON", "{ trigger: exit", {}, /^orchestra: classify: stdin is not JSON \(.+\)$/],
    ["not JSON in batch mode", "[{},", { batch: true }, /^orchestra: classify: stdin is not JSON/],
    [
      "--batch given an object",
      json(phantom),
      { batch: true },
      /^orchestra: classify --batch: expected a JSON array of facts documents, got an object/,
    ],
    ["--batch given a number", "42", { batch: true }, /got a number/],
    ["an array without --batch", json([phantom]), {}, /use --batch/],
  ])("%s → exit 2, one line on stderr, nothing on stdout", (_name, input, flags, line) => {
    const out = classifyCommand(input, flags);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr.split("\n").filter(Boolean)).toEqual([expect.stringMatching(line)]);
  });

  test.each([
    [
      "exitCode as a string",
      { ...phantom, run: { exitCode: "1" } },
      "orchestra: facts: run.exitCode: expected number, received string",
    ],
    [
      "unknown trigger",
      { ...phantom, trigger: "crashed" },
      'orchestra: facts: trigger: expected one of "exit"|"lease-expired"|"check-failed"|"base-moved"',
    ],
    [
      "missing checks",
      { trigger: "exit", run: { exitCode: 0 }, pr: null, branch: null },
      "orchestra: facts: checks: missing (expected array)",
    ],
    [
      "missing pr (null is allowed there)",
      { trigger: "exit", run: { exitCode: 0 }, branch: null, checks: [] },
      "orchestra: facts: pr: missing (expected object or null)",
    ],
    [
      "a field that is not in the document",
      { ...phantom, run: { exitCode: 0, exit_code: 0 } },
      "orchestra: facts: run.exit_code: not a field of the facts document",
    ],
    [
      "negative aheadBy",
      { ...publishable, branch: { name: "b", aheadBy: -1, headSha: "x" } },
      expect.stringMatching(/^orchestra: facts: branch\.aheadBy: .*>=\s?0/),
    ],
    [
      "a bad check, by index",
      { ...publishable, checks: [publishable.checks[0], { name: "ci", headSha: "x", status: "completed" }] },
      "orchestra: facts: checks[1].conclusion: missing (expected string or null)",
    ],
    ["not an object at all", "yes", "orchestra: facts: (document): expected object, received string"],
  ])("schema: %s → exit 2, the field named", (_name, doc, line) => {
    const out = classifyCommand(json(doc));
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr.split("\n").filter(Boolean)).toEqual([line]);
  });

  test("schema: every bad field gets its own line", () => {
    const out = classifyCommand(
      json({ trigger: "exit", run: { exitCode: "0", dirty: "yes" }, pr: null, branch: null, checks: [] }),
    );
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      "orchestra: facts: run.exitCode: expected number, received string\norchestra: facts: run.dirty: expected boolean, received string\n",
    );
  });

  test("--batch: problems carry the array index, and no answers are printed", () => {
    const bad = { ...phantom, trigger: "sometime" };
    const out = classifyCommand(json([phantom, publishable, bad, 7]), { batch: true });
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/^orchestra: facts: \[2\]\.trigger: expected one of/),
      "orchestra: facts: [3]: expected object, received number",
    ]);
  });
});

describe("orchestra classify (the built command)", () => {
  const run = (args: string[], input: string) =>
    spawnSync(process.execPath, [join(root, "bin/orchestra.js"), ...args], {
      cwd: root,
      input,
      encoding: "utf8",
      timeout: 20_000,
    });

  test("a facts document on stdin → the verdict as JSON, exit 0", () => {
    const child = run(["classify"], json(conflict));
    expect(child.stderr).toBe("");
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual(classify(conflict));
    expect(JSON.parse(child.stdout)).toMatchObject({ class: "merge-conflict", recovery: "continue-rebase" });
  });

  test("a malformed document → exit 2, the field named on stderr, nothing on stdout", () => {
    const child = run(["classify"], json({ ...phantom, run: { exitCode: "0" } }));
    expect(child.status).toBe(2);
    expect(child.stdout).toBe("");
    expect(child.stderr).toBe("orchestra: facts: run.exitCode: expected number, received string\n");
  });
});
