/** Which deliveries say the same (src/inbox/collapse.ts), on GitHub's example payloads. */
import { collapseOf, runLength } from "../../src/inbox/collapse.js";
import { examplePayload, type Payload } from "../support/webhooks.js";

const SELF = "orchestra[bot]";
const SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const of = (event: string, action: string | null, payload: Payload, self: string | null = SELF) =>
  collapseOf(event, action, payload, self);

const checkRun = (o: Record<string, unknown> = {}) =>
  examplePayload("check_run", "completed", { check_run: { conclusion: "failure", ...o } });
const checkSuite = (o: Record<string, unknown> = {}) =>
  examplePayload("check_suite", "completed", { check_suite: { conclusion: "failure", ...o } });
const workflowRun = (o: Record<string, unknown> = {}) =>
  examplePayload("workflow_run", "completed", {
    workflow_run: {
      event: "pull_request",
      conclusion: "failure",
      head_sha: SHA,
      head_repository: { full_name: "Codertocat/Hello-World" },
      pull_requests: (checkRun()["check_run"] as Payload)["pull_requests"],
      ...o,
    },
  });
const labeled = (o: Record<string, unknown> = {}, action = "labeled") =>
  examplePayload("issues", action, { ...(action === "unlabeled" ? { label: { name: "bug" } } : {}), ...o });
const bot = { sender: { login: SELF, type: "Bot" } };

describe("collapseOf: deliveries that say the same share a signature", () => {
  test.each<[string, [string, string, Payload], [string, string, Payload]]>([
    [
      "two failing check runs on one sha and PR",
      ["check_run", "completed", checkRun()],
      ["check_run", "completed", checkRun({ id: 99, name: "lint" })],
    ],
    [
      "a failing check run and its failing suite",
      ["check_run", "completed", checkRun()],
      ["check_suite", "completed", checkSuite()],
    ],
    [
      "a failing workflow run and a failing check run on its sha",
      ["workflow_run", "completed", workflowRun()],
      ["check_run", "completed", checkRun()],
    ],
    [
      "failing for different reasons (the handler reads every check)",
      ["check_run", "completed", checkRun()],
      ["check_run", "completed", checkRun({ conclusion: "timed_out" })],
    ],
    [
      "passing checks on any sha: the handler does nothing",
      ["check_run", "completed", checkRun({ conclusion: "success" })],
      ["check_suite", "completed", checkSuite({ conclusion: "neutral", head_sha: "f".repeat(40) })],
    ],
    [
      "a workflow run that is not a completion does nothing either",
      ["workflow_run", "requested", workflowRun()],
      ["check_run", "completed", checkRun({ conclusion: "skipped" })],
    ],
    [
      "Orchestra's own label echoes, added or removed, any label",
      ["issues", "labeled", labeled({ ...bot, label: { name: "agent:in-progress" } })],
      ["issues", "unlabeled", labeled({ ...bot }, "unlabeled")],
    ],
    [
      "the same label change again",
      ["issues", "labeled", labeled()],
      ["issues", "labeled", labeled({ issue: { updated_at: "2026-01-02T00:00:00Z" } })],
    ],
  ])("%s", (_name, [e1, a1, p1], [e2, a2, p2]) => {
    const first = of(e1, a1, p1);
    expect(first).not.toBeNull();
    expect(of(e2, a2, p2)).toBe(first);
  });

  test.each<[string, [string, string, Payload], [string, string, Payload]]>([
    [
      "failing on another sha",
      ["check_run", "completed", checkRun()],
      ["check_run", "completed", checkRun({ head_sha: "a".repeat(40) })],
    ],
    [
      "failing, then passing on the same sha",
      ["check_run", "completed", checkRun()],
      ["check_run", "completed", checkRun({ conclusion: "success" })],
    ],
    [
      "failing with another pull request matched",
      ["check_run", "completed", checkRun()],
      ["check_run", "completed", checkRun({ pull_requests: [] })],
    ],
    [
      "a fork's workflow run (no pull request acts) and this repository's",
      ["workflow_run", "completed", workflowRun({ head_repository: { full_name: "fork/Hello-World" } })],
      ["workflow_run", "completed", workflowRun()],
    ],
    [
      "a label added by someone else",
      ["issues", "labeled", labeled()],
      ["issues", "labeled", labeled({ sender: { login: "mallory" } })],
    ],
    [
      "another label",
      ["issues", "labeled", labeled()],
      ["issues", "labeled", labeled({ label: { name: "agent:queued" } })],
    ],
    ["added, then removed", ["issues", "labeled", labeled()], ["issues", "unlabeled", labeled({}, "unlabeled")]],
    ["another label set", ["issues", "labeled", labeled()], ["issues", "labeled", labeled({ issue: { labels: [] } })]],
    [
      "the issue closed meanwhile",
      ["issues", "labeled", labeled()],
      ["issues", "labeled", labeled({ issue: { state: "closed" } })],
    ],
    [
      "the issue's body changed (the fleet issue is told by it)",
      ["issues", "labeled", labeled()],
      ["issues", "labeled", labeled({ issue: { body: "other" } })],
    ],
    [
      "Orchestra's echo and a person's change",
      ["issues", "labeled", labeled({ ...bot })],
      ["issues", "labeled", labeled({ sender: { login: SELF, type: "User" } })],
    ],
  ])("not: %s", (_name, [e1, a1, p1], [e2, a2, p2]) => {
    expect(of(e2, a2, p2)).not.toBe(of(e1, a1, p1));
  });

  test.each<[string, string, string | null, Payload, string | null]>([
    [
      "a dispatched workflow's run (a run's heartbeat and exit)",
      "workflow_run",
      "completed",
      workflowRun({ event: "workflow_dispatch" }),
      null,
    ],
    ["a check run that is not a completion", "check_run", "created", checkRun(), null],
    ["a comment", "issue_comment", "created", examplePayload("issue_comment", "created"), null],
    ["a pull request opened", "pull_request", "opened", examplePayload("pull_request", "opened"), null],
    ["an issue opened", "issues", "opened", examplePayload("issues", "opened"), null],
    ["a label change without a sender", "issues", "labeled", labeled({ sender: null }), null],
  ])("always processed: %s", (_name, event, action, payload, expected) => {
    expect(of(event, action, payload)).toBe(expected);
  });

  test("Orchestra's login unknown yet: its echo is an ordinary label change", () => {
    const echo = labeled({ ...bot });
    expect(of("issues", "labeled", echo, null)).not.toBe("labels:own-echo");
    expect(of("issues", "labeled", echo, null)).toBe(of("issues", "labeled", structuredClone(echo), null));
  });
});

describe("runLength", () => {
  const d = (collapse: string | null, attempts = 0) => ({ collapse, attempts });
  test.each<[string, ReturnType<typeof d>, ReturnType<typeof d>[], number]>([
    ["nothing behind the head", d("a"), [], 0],
    ["a head that never collapses", d(null), [d(null), d(null)], 0],
    ["a head that failed before keeps its retries", d("a", 1), [d("a")], 0],
    ["the whole backlog says the same", d("a"), [d("a"), d("a"), d("a")], 3],
    ["only the consecutive ones: nothing is reordered", d("a"), [d("a"), d("b"), d("a")], 1],
    ["a different one right behind", d("a"), [d("b"), d("a")], 0],
    ["a replayed one behind (attempts) ends the run", d("a"), [d("a"), d("a", 2), d("a")], 1],
  ])("%s", (_name, head, newer, n) => {
    expect(runLength(head, newer)).toBe(n);
  });
});
