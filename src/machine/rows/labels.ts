/**
 * Rows of label changes by people (or bots) who are not trusted. Such a
 * change has no effect on the task; where the label is Orchestra's truth it
 * is undone:
 *
 * - a state label removed while the task shows it (`agent:queued` from a
 *   queued task, `agent:in-progress` from a claimed one, …) is put back;
 * - a state label added that the task does not show (or any on an issue
 *   without a live task) is taken off again;
 * - a change that leaves the labels as the task shows them (removing
 *   `agent:failed` from a queued task, adding the label it already shows)
 *   needs nothing.
 *
 * Each undo is its own effect (keyed by the delivery), so a bot that repeats
 * the change is undone every time; the reply that says why goes at most once
 * per person, issue and calendar day in UTC (`untrustedReplyKey`), so the same
 * bot cannot make Orchestra mention it in a loop.
 */
import { texts } from "../../texts/comments.js";
import type { Context, Subject } from "../decision.js";
import type { EventOf } from "../events.js";
import { stateLabelsOf } from "../model.js";
import { effect, everyState, labelsOf, unchanged, type EventRows } from "./build.js";
import type { EffectSpec } from "../effects.js";

/** The calendar day in UTC of `at` (YYYY-MM-DD): the window of one reply. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * The outbox key of the reply to an untrusted label change: one per
 * repository, issue, person (logins are case-insensitive) and UTC day. Every
 * untrusted label change on the issue shares it, whatever the label.
 */
export function untrustedReplyKey(subject: Pick<Subject, "repo" | "issue">, login: string, at: Date): string {
  return `untrusted-label-reply:${subject.repo.toLowerCase()}#${subject.issue}:${login.toLowerCase()}:${utcDay(at)}`;
}

/**
 * The bounded reply: recorded for every change, posted for the
 * first of the day only (the outbox keeps one row per key).
 */
export function untrustedReply(ctx: Context, actor: string, body: string): EffectSpec {
  return effect("comment", untrustedReplyKey(ctx.subject, actor, ctx.now), { issue: ctx.subject.issue, body });
}

const same = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase();

const undo = (ctx: Context, e: EventOf<"label-untrusted">) => {
  if (!stateLabelsOf(labelsOf(ctx)).some((l) => same(l, e.label)))
    return unchanged(`${e.label} is not one of Orchestra's labels`);
  // What the issue should show: the task's label; no task (or a finished one), no agent label.
  const want = ctx.task?.label ?? null;
  if (e.change === "removed" && !same(want, e.label))
    return unchanged(`${e.actor} removed ${e.label}, which the task does not show: nothing to restore`);
  if (e.change === "added" && same(want, e.label))
    return unchanged(`${e.actor} added ${e.label}, which the task shows already`);
  const issue = ctx.subject.issue;
  // The label effect is dropped when the task shows another label by the time it runs (it moved on meanwhile).
  const fix = effect("label", `untrusted-label-undo:${e.deliveryId}`, {
    issue,
    label: want,
    others: e.change === "added" ? [e.label] : [],
  });
  const body = texts.untrustedLabel(e.actor, e.label, e.change, ctx.config?.trust.minPermission ?? "write", e.why);
  return unchanged(
    `${e.actor} may not change Orchestra's labels ` +
      `(${e.why}): ${e.label} ${e.change === "removed" ? "put back" : "taken off"}`,
    [fix, untrustedReply(ctx, e.actor, body)],
  );
};

export const labelUntrusted: EventRows<"label-untrusted"> = everyState(undo, undo);
