import { laneOf } from "../../src/machine/effects.js";
/**
 * Text cut to GitHub's limits: a table of shapes (plain, code block, details,
 * surrogate pairs at the cut, exact lengths), every comment and check run
 * summary as the performers send them, and a property over random text.
 */
import fc from "fast-check";
import { fitted, GITHUB_CHECK_SUMMARY_LIMIT, GITHUB_COMMENT_LIMIT } from "../../src/texts/limits.js";
import { commentMarker, texts, withMarker } from "../../src/texts/comments.js";
import { fullTextAt, PERFORMERS, type PerformContext } from "../../src/effects/perform.js";
import { memoryGitHub, type MemoryGitHub } from "../support/memory-github.js";
import type { OutboxEffect } from "../../src/effects/outbox.js";
import { exampleTask } from "../../src/machine/examples.js";
import { CHECK_RUN_NAME } from "../../src/texts/check-run.js";
import type { Labels } from "../../src/machine/model.js";

const DEFAULT_LABELS: Labels = {
  queued: "agent:queued",
  inProgress: "agent:in-progress",
  review: "agent:review",
  blocked: "agent:blocked",
  failed: "agent:failed",
};

const WHERE = "in task t-1 (GET /api/v1/tasks/t-1)";
const NOTE =
  /\n\n---\n\*\*Truncated:\*\* this text was [0-9,]+ characters, over GitHub's limit of [0-9,]+; the full text is in task t-1 \(GET \/api\/v1\/tasks\/t-1\)\.$/;

/** Balanced fences and details in the posted text: the note is not swallowed by either. */
function balanced(text: string): boolean {
  const fences = text.split("\n").filter((l) => /^\s*```/.test(l)).length;
  const opens = (text.match(/<details\b/g) ?? []).length;
  const closes = (text.match(/<\/details>/g) ?? []).length;
  return fences % 2 === 0 && opens === closes;
}

const noLoneSurrogate = (text: string) =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

describe("fitted", () => {
  test.each([
    ["short text", "hello", 100, false],
    ["exactly at the limit", "x".repeat(1000), 1000, false],
    ["one over the limit", "x".repeat(1001), 1000, true],
    ["far over the limit", "word ".repeat(100_000), GITHUB_COMMENT_LIMIT, true],
    ["cut inside a code block", "intro\n```json\n" + '{"a": 1}\n'.repeat(20_000) + "```\nafter", 10_000, true],
    [
      "cut inside details and a code block",
      "<details><summary>Evidence</summary>\n\n```\n" + "line\n".repeat(50_000) + "```\n</details>\n\nend",
      20_000,
      true,
    ],
    ["cut inside a tilde fence", "~~~\n" + "z".repeat(5000) + "\n~~~", 1000, true],
    ["surrogate pairs at the cut (odd room)", "😀".repeat(10_000), 999, true],
    ["surrogate pairs at the cut (even room)", "😀".repeat(10_000), 1000, true],
    ["a fence closed before the cut", "```\ncode\n```\n" + "y".repeat(5000), 1000, true],
  ])("%s", (_name, text, limit, cut) => {
    const out = fitted(text, limit, WHERE);
    expect(out.length).toBeLessThanOrEqual(limit);
    if (!cut) {
      expect(out).toBe(text);
      return;
    }
    expect(out).toMatch(NOTE);
    expect(out).toContain(`this text was ${text.length.toLocaleString("en-US")} characters`);
    expect(balanced(out)).toBe(true);
    expect(noLoneSurrogate(out)).toBe(true);
    // What is kept is the beginning of the text, as much of it as fits.
    const kept = out
      .slice(0, out.indexOf("\n\n---\n**Truncated:**"))
      .replace(/\n(```|~~~)$/, "")
      .replace(/(\n<\/details>)+$/, "")
      .replace(/\n(```|~~~)$/, "");
    expect(text.startsWith(kept)).toBe(true);
    expect(kept.length).toBeGreaterThan(limit - 400);
  });

  test("any text, any limit from 300: within the limit, unchanged when it fits, else noted, balanced, no lone surrogate", () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.constantFrom("```", "\n", "<details>", "</details>", "😀", "~~~"),
            fc.string({ maxLength: 20 }),
          ),
          maxLength: 400,
        }),
        fc.integer({ min: 300, max: 3000 }),
        (text, limit) => {
          const out = fitted(text, limit, WHERE);
          expect(out.length).toBeLessThanOrEqual(limit);
          if (text.length <= limit) expect(out).toBe(text);
          else {
            expect(out).toMatch(NOTE);
            expect(noLoneSurrogate(out) || !noLoneSurrogate(text)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("every comment Orchestra posts fits GitHub's limit with its marker", () => {
  const huge = "x".repeat(200_000);
  const bodies: Array<[string, string]> = [
    [
      "escalation with huge evidence",
      texts.escalation("run-1", 2, "turn-cap-spinning", {
        why: "the worker hit its turn cap",
        lastToolCalls: Array.from({ length: 50 }, (_, i) => `call-${i}-${"y".repeat(2000)}`),
      }),
    ],
    ["question", texts.question(1, huge, DEFAULT_LABELS)],
    ["expired question", texts.questionExpired(huge, DEFAULT_LABELS)],
    [
      "bad config",
      texts.badConfig(Array.from({ length: 5000 }, (_, i) => `infraPatterns.${i}: not a valid regular expression`)),
    ],
    ["attempts spent", texts.attemptsSpent(3, [huge], DEFAULT_LABELS)],
    ["status", texts.status([huge])],
    ["exactly the room left", "z".repeat(GITHUB_COMMENT_LIMIT - `\n\n${commentMarker("k-1")}`.length)],
  ];
  test.each(bodies)("%s", (_name, body) => {
    const posted = withMarker(body, "k-1", WHERE);
    expect([...posted].length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(posted.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(posted.endsWith(`\n\n${commentMarker("k-1")}`)).toBe(true);
    const withoutMarker = posted.slice(0, -`\n\n${commentMarker("k-1")}`.length);
    if (body.length + `\n\n${commentMarker("k-1")}`.length <= GITHUB_COMMENT_LIMIT) expect(withoutMarker).toBe(body);
    else {
      expect(withoutMarker).toMatch(NOTE);
      expect(balanced(withoutMarker)).toBe(true);
    }
  });
});

describe("the performers cut what they send", () => {
  const effect = (kind: OutboxEffect["kind"]): OutboxEffect => ({
    seq: 1,
    id: "eff-1",
    key: "key-1",
    kind,
    spec: {} as OutboxEffect["spec"],
    taskId: "task-1",
    runId: null,
    installationId: 1,
    repo: "o/r",
    attempts: 1,
    maybeSent: false,
    dryRun: false,
    createdAt: new Date(),
    errors: [],
    coalesceKey: null,
    lane: laneOf(kind),
  });
  const HEAD = "a".repeat(40);
  let github: MemoryGitHub;
  beforeEach(() => {
    github = memoryGitHub({ repos: { "o/r": { issues: [{ number: 7, title: "the task" }] } } });
    github.commit("o/r", "main", { sha: HEAD });
  });

  test("a comment: under the limit, the note names the effect and its task in the operator API", async () => {
    const body = "q".repeat(100_000);
    await PERFORMERS.comment.perform(
      { effect: effect("comment"), task: null, run: null, github },
      {
        issue: 7,
        body,
      },
    );
    expect(github.callsTo("createComment")).toHaveLength(1);
    const posted = github.comments("o/r", 7);
    expect(posted).toHaveLength(1);
    const text = posted[0]!.body;
    expect(github.callsTo("createComment")[0]!.args).toEqual([{ owner: "o", repo: "r" }, 7, text]);
    expect(text.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(text).toContain(`the full text is ${fullTextAt({ id: "eff-1", taskId: "task-1" })}.`);
    expect(text).toContain("GET /api/v1/tasks/task-1");
    expect(text.endsWith(commentMarker("key-1"))).toBe(true);
  });

  test("a check run summary: under GitHub's 65,535, with the note naming the task view", async () => {
    const ctx: PerformContext = {
      effect: effect("check-run"),
      task: exampleTask("claimed", { id: "task-1" }),
      run: null,
      github,
      checkRunOf: async () => ({ title: "Task claimed", summary: "| row |\n".repeat(20_000), conclusion: "neutral" }),
    };
    await PERFORMERS["check-run"].perform(ctx, { headSha: HEAD, prNumber: 7 });
    expect(github.callsTo("createCheckRun")).toHaveLength(1);
    const runs = github.checkRuns("o/r", HEAD);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ name: CHECK_RUN_NAME, status: "completed", conclusion: "neutral" });
    const summary = runs[0]!.output.summary ?? "";
    expect(summary.length).toBeLessThanOrEqual(GITHUB_CHECK_SUMMARY_LIMIT);
    expect(summary).toMatch(
      /\*\*Truncated:\*\* this text was 160,000 characters, over GitHub's limit of 65,535; the full text is shown by the task view in Orchestra's operator API \(GET \/api\/v1\/tasks\/task-1\)\.$/,
    );
  });
});
