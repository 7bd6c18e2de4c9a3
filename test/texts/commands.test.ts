/**
 * Orchestra's comments never ask a person to edit its labels by hand to steer
 * a task (the labels follow the task; a hand edit is undone): where a comment
 * says what to do next, it names the `orchestra` command that does it.
 */
import { DEFAULT_CONFIG } from "../../src/config/repo.js";
import { texts } from "../../src/texts/comments.js";

const L = DEFAULT_CONFIG.labels;
const steering: Array<[string, string, RegExp]> = [
  ["attempts spent", texts.attemptsSpent(3, ["- run 1: phantom"], L), /`orchestra retry`/],
  ["pull request closed", texts.prClosed(12), /`orchestra retry`.*`orchestra resume`/],
  ["a question", texts.question(2, "Which API?", L), /answer resumes the task/],
  ["a question expired", texts.questionExpired("Which API?", L), /`orchestra resume`/],
  ["blocked with half-done work", texts.blockedHalfDone(3, "agent/issue-4", "tests failing", L), /`orchestra resume`/],
  ["an escalation", texts.escalation("r1", 2, "unknown", { why: "odd" }), /`orchestra retry`/],
  ["the budget spent", texts.budgetSpent(12.5, 10, 4, L), /`orchestra resume`/],
  ["a comment on a blocked task", texts.correctionRecorded("blocked", L), /`orchestra resume`.*`orchestra retry`/],
  ["a comment on a failed task", texts.correctionRecorded("failed", L), /`orchestra retry`/],
  ["labels edited by hand", texts.driftRestored(["agent:review"], "agent:in-progress", "claimed"), /`orchestra hold`/],
];

test.each(steering)("%s: names the command, never a label edit", (_what, body, command) => {
  expect(body).toMatch(command);
  // "remove `agent:blocked` and add `agent:queued`" and the like: no instruction to move Orchestra's labels.
  expect(body).not.toMatch(/\b(remove|add|re-add)\s+`agent:[a-z-]+`/i);
});
