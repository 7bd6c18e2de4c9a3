/**
 * A worker's question waits only while its task does: blocked on it, or
 * claimed by the run that asked it. Rather than each row remembering, every
 * applied decision that takes a task out of `blocked` or `claimed` (an
 * answer, a command, a label, a merge, a closed issue: any path) closes the
 * task's open questions in the same transaction. None is left open to take
 * a later comment as its answer, or to be looked at by every expiry sweep.
 * (A question asked by the same decision, claimed → blocked, is recorded
 * after the others close.)
 */
import type { Context, Decision } from "./decision.js";

export function withQuestionsClosed(ctx: Context, d: Decision): Decision {
  if (d.outcome !== "applied") return d;
  const from = ctx.task?.state;
  if ((from !== "blocked" && from !== "claimed") || d.to === from) return d;
  return { ...d, closesQuestions: true };
}
