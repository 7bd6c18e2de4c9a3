/**
 * Rows of scheduling: the issues GitHub lists as blocking a task (read at
 * queue time, on dependency events, when a blocker closes, and by the sweep),
 * and the breaker's one diagnostic when runs in a repository keep failing the
 * same way.
 */
import { texts } from "../../texts/comments.js";
import type { Context } from "../decision.js";
import type { EventOf } from "../events.js";
import { effect, everyState, ignore, move, taskOf, unchanged, type EventRows } from "./build.js";

const sameList = (a: string[] | null, b: string[]) =>
  (a ?? []).length === b.length && b.every((x, i) => (a ?? [])[i] === x);

const readBlockers = (ctx: Context, e: EventOf<"blockers-read">) => {
  const task = taskOf(ctx);
  const blockers = [...new Set(e.blockers)].sort();
  const summary =
    blockers.length === 0
      ? task.blockedBy
        ? `no longer blocked (was blocked by ${task.blockedBy.join(", ")})`
        : "no open blockers"
      : `blocked by ${blockers.join(", ")}`;
  // Always record when they were read: the sweep asks again only after a while.
  return move(ctx, task.state, {
    summary: e.unsupported
      ? `no dependency gate (${e.unsupported})`
      : sameList(task.blockedBy, blockers) && task.blockersAt !== null
        ? "blockers unchanged"
        : summary,
    task: { blockedBy: blockers.length ? blockers : null, blockersAt: ctx.now },
  });
};

export const blockersRead: EventRows<"blockers-read"> = everyState(ignore("not a task"), readBlockers, {
  done: ignore("the task is finished"),
  cancelled: ignore("the task is finished"),
});

/**
 * The breaker opened in the task's repository (its run tripped it): one
 * comment on this issue says which class, which runs, and when claims
 * resume. The breaker itself lives on the repository row, written in the
 * same transaction by whoever raised this.
 */
const breakerNotice = (ctx: Context, e: EventOf<"breaker-opened">) =>
  unchanged(`breaker opened on ${ctx.subject.repo}: ${e.runs.length} runs ended ${e.klass}`, [
    effect("comment", `breaker:${ctx.subject.repo}:${e.until.toISOString()}`, {
      issue: ctx.subject.issue,
      body: texts.breakerOpened(ctx.subject.repo, e.klass, e.runs, e.until),
    }),
  ]);

export const breakerOpened: EventRows<"breaker-opened"> = everyState(ignore("not a task"), breakerNotice);
