/**
 * Trusted comments as the machine decides them, state by state: what acts on
 * each one, the reaction and reply it gets, the continuation it rides, and
 * that one comment never sends a task back twice. And questions: they close
 * whenever their task leaves the state they wait in, whatever the path.
 */
import type { Applied, Context, Decision } from "../../src/machine/decision.js";
import { EVENT_KINDS, type EventOf, type TaskEvent } from "../../src/machine/events.js";
import { contextIn, exampleDecision, exampleContext } from "../../src/machine/examples.js";
import { CONTINUATION_COMMENTS, STATES, type Continuation, type State } from "../../src/machine/model.js";
import { decide } from "../../src/machine/table.js";

const HEAD = "h".repeat(40);
const ctx = (state: State, over: Parameters<typeof contextIn>[1] = {}): Context => contextIn(state, over);
const comment = (over: Partial<EventOf<"correction">> = {}): TaskEvent => ({
  kind: "correction",
  author: "alice",
  commentId: 43,
  body: "Rename the helper to parseConfig.",
  on: "pull",
  ...over,
});
const applied = (d: Decision): Applied => {
  if (d.outcome !== "applied") throw new Error(`expected a transition, got ${JSON.stringify(d)}`);
  return d;
};
const reactions = (d: Decision) =>
  d.effects.filter((e) => e.kind === "reaction").map((e) => (e.payload as { content: string }).content);
const replies = (d: Decision) => d.effects.filter((e) => e.kind === "comment").map((e) => e.payload);
const decisions = (d: Decision) => (d.outcome === "refused" ? [] : (d.decisions ?? []));

/** Columns: none queued claimed review done blocked failed cancelled. */
const EXPECTED: Record<State, { to: string; reactions: string[]; reply: RegExp | null; recorded: boolean }> = {
  none: { to: "·", reactions: [], reply: null, recorded: false },
  queued: { to: "·", reactions: ["eyes"], reply: /the run that picks it up gets this comment/, recorded: true },
  claimed: { to: "·", reactions: ["eyes"], reply: null, recorded: true },
  review: { to: "queued", reactions: ["eyes", "rocket"], reply: null, recorded: true },
  done: { to: "·", reactions: [], reply: null, recorded: false },
  blocked: { to: "·", reactions: ["eyes"], reply: /`orchestra resume` continues it/, recorded: true },
  failed: { to: "·", reactions: ["eyes"], reply: /`orchestra retry` queues it again/, recorded: true },
  cancelled: { to: "·", reactions: [], reply: null, recorded: false },
};

describe("a trusted comment", () => {
  test.each(STATES.map((s) => [s]))("in %s", (state) => {
    const want = EXPECTED[state];
    const d = decide(ctx(state), comment());
    expect(d.outcome === "applied" ? d.to : "·").toBe(want.to);
    expect(reactions(d)).toEqual(want.reactions);
    const reply = replies(d);
    if (want.reply) {
      expect(reply).toHaveLength(1);
      expect(reply[0]!.body).toMatch(want.reply);
    } else expect(reply).toEqual([]);
    expect(decisions(d).map((x) => [x.kind, x.source, x.body])).toEqual(
      want.recorded ? [["correction", "comment:43", "Rename the helper to parseConfig."]] : [],
    );
  });

  test.each(STATES.map((s) => [s]))("delivered again, in %s: nothing at all", (state) => {
    const d = decide(ctx(state), comment({ recorded: true }));
    expect(d).toMatchObject({ outcome: "unchanged", effects: [] });
    expect(decisions(d)).toEqual([]);
  });

  test("in review it goes back to the agent on the same branch and PR, the comment in the continuation", () => {
    const d = applied(decide(ctx("review"), comment()));
    const recorded = decisions(d)[0]!;
    expect(d.task.continuation).toEqual({
      kind: "changes-requested",
      prNumber: 7,
      headSha: HEAD,
      reason: "alice commented on pull request #7; push to the same branch, the pull request is reused",
      comments: [
        { id: 43, decisionId: recorded.id, author: "alice", body: "Rename the helper to parseConfig.", on: "pull" },
      ],
    });
    expect(d.effects.map((e) => e.kind).sort()).toEqual(["check-run", "label", "reaction", "reaction"]);
    // On the issue, it says so.
    const onIssue = applied(decide(ctx("review"), comment({ on: "issue" })));
    expect(onIssue.task.continuation?.reason).toMatch(/^alice commented on issue #12;/);
  });

  test("in review with the attempts spent: blocked with one escalation, the comment kept for the next run", () => {
    const d = applied(decide(ctx("review", { task: { attempt: 3 } }), comment()));
    expect(d.to).toBe("blocked");
    expect(reactions(d)).toEqual(["eyes"]);
    expect(replies(d)[0]!.body).toMatch(/attempts are spent/);
    expect(decisions(d)).toHaveLength(1);
  });

  const queuedWith = (continuation: Continuation | null) => ctx("queued", { task: { continuation, prNumber: 7 } });
  const sentBack = (): Continuation => applied(decide(ctx("review"), comment())).task.continuation!;

  test("queued after one: the next comment joins the same continuation (once), with a reply", () => {
    const first = sentBack();
    const d = applied(
      decide(queuedWith(first), comment({ commentId: 44, body: "And keep the old name as an alias." })),
    );
    expect(d.to).toBe("queued");
    expect(d.task.continuation!.comments!.map((c) => [c.id, c.body])).toEqual([
      [43, "Rename the helper to parseConfig."],
      [44, "And keep the old name as an alias."],
    ]);
    expect(d.effects.some((e) => e.kind === "label")).toBe(false);
    expect(replies(d)).toHaveLength(1);
    // The same comment again adds nothing to it (a continuation holds a comment once).
    const again = decide(queuedWith(d.task.continuation!), comment({ commentId: 44, body: "x" }));
    expect(again.outcome).toBe("unchanged");
  });

  test("queued with no continuation (a fresh run): recorded for the claim, nothing else changes", () => {
    const d = decide(queuedWith(null), comment());
    expect(d.outcome).toBe("unchanged");
    expect(decisions(d)).toHaveLength(1);
  });

  test(`a continuation carries ${CONTINUATION_COMMENTS} comments; later ones are counted and go as decisions`, () => {
    let c = sentBack();
    for (let id = 100; c.comments!.length < CONTINUATION_COMMENTS; id++)
      c = applied(decide(queuedWith(c), comment({ commentId: id }))).task.continuation!;
    const d = applied(decide(queuedWith(c), comment({ commentId: 999 })));
    expect(d.task.continuation!.comments).toHaveLength(CONTINUATION_COMMENTS);
    expect(d.task.continuation!.moreComments).toBe(1);
    expect(decisions(d)).toHaveLength(1);
  });

  test("the reply goes where the comment was", () => {
    const issue = (on: "issue" | "pull") =>
      replies(decide(ctx("failed", { task: { prNumber: 7 } }), comment({ on })))[0]!.issue;
    expect([issue("pull"), issue("issue")]).toEqual([7, 12]);
  });

  test("an edit replaces the comment in a queued continuation and supersedes its decision; elsewhere only the decision", () => {
    const first = sentBack();
    const d = applied(decide(queuedWith(first), comment({ edited: true, body: "Rename it to loadConfig." })));
    const replaced = decisions(d)[0]!;
    expect(replaced).toMatchObject({ source: expect.stringMatching(/^comment:43:edit:/) });
    expect(replaced.supersedes).toEqual({ source: "comment:43" });
    expect(d.task.continuation!.comments).toEqual([
      expect.objectContaining({ id: 43, body: "Rename it to loadConfig.", decisionId: replaced.id }),
    ]);
    expect(d.effects).toEqual([]);
    for (const state of ["claimed", "review", "blocked"] as const) {
      const other = decide(ctx(state), comment({ edited: true, body: "Rename it to loadConfig." }));
      expect({ state, outcome: other.outcome, effects: other.effects }).toEqual({
        state,
        outcome: "unchanged",
        effects: [],
      });
      expect(decisions(other)).toHaveLength(1);
    }
  });
});

describe("a comment taken as an answer", () => {
  const answer = (over: Partial<EventOf<"question-answered">> = {}): TaskEvent => ({
    kind: "question-answered",
    decisionId: "q1",
    author: "alice",
    answer: "Use PostgreSQL.",
    commentId: 50,
    on: "issue",
    ...over,
  });

  test("is keyed by its comment, so a second delivery finds it recorded", () => {
    const d = applied(decide(ctx("blocked"), answer()));
    expect(decisions(d)).toEqual([expect.objectContaining({ kind: "answer", source: "comment:50" })]);
    expect(d.answering).toBe("q1");
    // A sign-off's answer has no comment of its own: keyed by the question.
    const signOff = applied(decide(ctx("blocked"), answer({ commentId: undefined })));
    expect(decisions(signOff)[0]!.source).toBe("answer:q1");
  });

  test("when the task stopped waiting before it was decided, it is the correction it would have been", () => {
    const d = applied(decide(ctx("review"), answer()));
    expect(d.to).toBe("queued");
    expect(d.task.continuation?.comments?.[0]).toMatchObject({ id: 50, body: "Use PostgreSQL." });
    expect(decisions(decide(ctx("failed"), answer()))).toEqual([
      expect.objectContaining({ kind: "correction", source: "comment:50" }),
    ]);
    expect(decide(ctx("review"), answer({ commentId: undefined })).outcome).toBe("unchanged");
  });
});

describe("a changes-requested review while the task is already sent back", () => {
  const review = (reviewId: number, over: Partial<EventOf<"review-submitted">> = {}): TaskEvent => ({
    kind: "review-submitted",
    pr: { number: 7, headSha: HEAD },
    review: "changes_requested",
    reviewId,
    author: "bob",
    body: `Review ${reviewId}`,
    comments: [{ path: "src/a.ts", line: 3, body: "use const", author: "bob" }],
    ...over,
  });

  test("joins the queued continuation once per review; another PR's or an approval does not", () => {
    const first = applied(decide(ctx("review"), comment())).task.continuation!;
    const queued = (c: Continuation) => ctx("queued", { task: { continuation: c, prNumber: 7, headSha: HEAD } });
    const d = applied(decide(queued(first), review(5)));
    expect(d.task.continuation).toMatchObject({
      kind: "changes-requested",
      comments: [expect.objectContaining({ id: 43 })],
      review: { author: "bob", body: "Review 5", ids: [5] },
    });
    const second = applied(decide(queued(d.task.continuation!), review(6, { author: "carol" })));
    expect(second.task.continuation!.review).toMatchObject({
      author: "bob, carol",
      body: "Review 5\n\nReview 6",
      ids: [5, 6],
    });
    expect(second.task.continuation!.review!.comments).toHaveLength(2);
    expect(decide(queued(second.task.continuation!), review(6)).outcome).toBe("unchanged");
    expect(decide(queued(first), review(7, { pr: { number: 8, headSha: HEAD } })).outcome).toBe("unchanged");
    expect(decide(queued(first), review(8, { review: "approved" })).outcome).toBe("unchanged");
  });
});

describe("questions close with their task's wait", () => {
  test("every applied decision that leaves blocked or claimed closes them, and no other", () => {
    for (const kind of EVENT_KINDS)
      for (const state of STATES) {
        const d = exampleDecision(state, kind);
        const leaves = d.outcome === "applied" && (state === "blocked" || state === "claimed") && d.to !== state;
        expect({ kind, state, closes: d.outcome === "applied" && d.closesQuestions === true }).toEqual({
          kind,
          state,
          closes: leaves,
        });
      }
  });

  test("any path out of blocked: an answer, a command, the queue label, a merge", () => {
    const paths: TaskEvent[] = [
      { kind: "question-answered", decisionId: "q1", author: "alice", answer: "yes", commentId: 9 },
      { kind: "command", command: "retry", author: "alice", commentId: 10 },
      { kind: "queue-label", actor: "alice", issue: { title: "t", body: "b", labels: [] } },
      { kind: "issue-closed", actor: "alice", completed: true },
    ];
    for (const e of paths) expect(applied(decide(exampleContext("blocked", e.kind), e)).closesQuestions).toBe(true);
  });
});
