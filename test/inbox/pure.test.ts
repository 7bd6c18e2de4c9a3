import { taskKeyOf } from "../../src/inbox/task-key.js";
import { pushError, type ErrorEntry } from "../../src/store/error-ring.js";
import { statements } from "../../src/store/migrate.js";

const inst = { installation: { id: 7 } };
const repo = { repository: { full_name: "acme/app" } };

describe("taskKeyOf", () => {
  test.each([
    ["issue event", { ...inst, ...repo, issue: { number: 5 } }, "7/acme/app#5"],
    ["pull request event", { ...inst, ...repo, pull_request: { number: 9 } }, "7/acme/app#9"],
    [
      "issue comment on a PR uses the issue number",
      { ...inst, ...repo, issue: { number: 9 }, comment: {} },
      "7/acme/app#9",
    ],
    ["check run with a PR", { ...inst, ...repo, check_run: { pull_requests: [{ number: 3 }] } }, "7/acme/app#3"],
    ["check run without a PR", { ...inst, ...repo, check_run: { pull_requests: [] } }, "7/acme/app"],
    ["check suite with a PR", { ...inst, ...repo, check_suite: { pull_requests: [{ number: 4 }] } }, "7/acme/app#4"],
    ["workflow run with a PR", { ...inst, ...repo, workflow_run: { pull_requests: [{ number: 8 }] } }, "7/acme/app#8"],
    [
      "sub-issue event keys by parent",
      { ...inst, ...repo, parent_issue: { number: 2 }, sub_issue: { number: 3 } },
      "7/acme/app#2",
    ],
    ["push is repository-wide", { ...inst, ...repo, ref: "refs/heads/main" }, "7/acme/app"],
    ["installation event", { ...inst, action: "created" }, "7"],
    ["no installation", { ...repo, issue: { number: 1 } }, "-/acme/app#1"],
    ["malformed number ignored", { ...inst, ...repo, issue: { number: "5" } }, "7/acme/app"],
  ])("%s", (_n, payload, key) => {
    expect(taskKeyOf(payload as Record<string, unknown>)).toBe(key);
  });
});

describe("pushError", () => {
  const e = (i: number, message = `m${i}`, klass = "C"): ErrorEntry => ({ at: `t${i}`, class: klass, message });
  test("keeps the last eight, newest last", () => {
    let ring: ErrorEntry[] = [];
    for (let i = 0; i < 12; i++) ring = pushError(ring, e(i));
    expect(ring.map((r) => r.message)).toEqual(["m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11"]);
  });
  test("a repeat of the newest entry is counted, not appended", () => {
    let ring = pushError([], e(1, "boom"));
    ring = pushError(ring, e(2, "boom"));
    ring = pushError(ring, e(3, "boom"));
    expect(ring).toEqual([{ at: "t3", class: "C", message: "boom", count: 3, firstAt: "t1" }]);
  });
  test("same message with another class is a new entry", () => {
    expect(pushError([e(1, "x", "A")], e(2, "x", "B"))).toHaveLength(2);
  });
  test("long messages are capped", () => {
    expect(pushError([], e(1, "y".repeat(5000)))[0]!.message.length).toBeLessThanOrEqual(2001);
  });
});

describe("statements", () => {
  test("splits a generated migration and drops comments", () => {
    const sql = `-- CreateTable\nCREATE TABLE "A" (\n  "x" TEXT\n);\n\n-- CreateIndex\nCREATE INDEX "i" ON "A"("x");\n`;
    expect(statements(sql)).toEqual([`CREATE TABLE "A" (\n  "x" TEXT\n)`, `CREATE INDEX "i" ON "A"("x")`]);
  });
});
