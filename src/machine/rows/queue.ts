/**
 * Rows of the label queue: a trusted queue label creates or re-queues a task,
 * an untrusted one is taken off again with a reply (at most one a day), a
 * trusted person removing the label from queued work cancels it, and closing the issue ends whatever was going on.
 */
import { createHash, randomUUID } from "node:crypto";
import { branchFor, priorityOf } from "../../config/repo.js";
import { texts } from "../../texts/comments.js";
import type { Context } from "../decision.js";
import type { EventOf } from "../events.js";
import { stateLabelsOf } from "../model.js";
import { effect, everyState, ignore, labelsOf, move, NO_LEASE, taskOf, unchanged, type EventRows } from "./build.js";
import { untrustedReply } from "./labels.js";

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);

/** A queue label on work already under way would make two state labels: it goes again. */
function takeOffQueueLabel(ctx: Context, why: string, key: string) {
  return unchanged(why, [effect("remove-label", key, { issue: ctx.subject.issue, label: labelsOf(ctx).queued })]);
}

/** What the queue label's event knows about the issue's blockers. */
function blockersOf(ctx: Context, e: EventOf<"queue-label">): { blockedBy: string[] | null; blockersAt: Date | null } {
  if (!e.issue.blockedBy) return { blockedBy: null, blockersAt: null };
  return { blockedBy: e.issue.blockedBy.length ? [...e.issue.blockedBy].sort() : null, blockersAt: ctx.now };
}

function requeue(ctx: Context, e: EventOf<"queue-label">) {
  const config = ctx.config;
  if (!config) return unchanged("the repository's config is invalid: nothing is queued");
  return move(ctx, "queued", {
    summary: `re-queued by ${e.actor} with a fresh attempt budget`,
    task: {
      attempt: 0,
      queuedAt: ctx.now,
      title: e.issue.title,
      body: e.issue.body,
      priority: priorityOf(config, e.issue.labels),
      backoffUntil: null,
      backoffCount: 0,
      diagnostic: null,
      freeRequeues: 0,
      ...(e.issue.blockedBy ? blockersOf(ctx, e) : {}),
    },
  });
}

export const queueLabel: EventRows<"queue-label"> = {
  none: (ctx, e) =>
    ctx.config
      ? move(ctx, "queued", {
          summary: `queued by ${e.actor}`,
          create: {
            id: randomUUID(),
            title: e.issue.title,
            body: e.issue.body,
            priority: priorityOf(ctx.config, e.issue.labels),
            branch: branchFor(ctx.config, ctx.subject.issue),
            ...blockersOf(ctx, e),
            repoId: e.issue.repoId ?? null,
          },
        })
      : unchanged("the repository's config is invalid: nothing is queued"),
  queued: ignore("already queued"),
  claimed: (ctx) =>
    takeOffQueueLabel(
      ctx,
      "an agent is already working on it",
      `queue-label-on-running:${taskOf(ctx).id}:v${taskOf(ctx).version}`,
    ),
  review: (ctx) =>
    takeOffQueueLabel(
      ctx,
      "its pull request is in review",
      `queue-label-on-running:${taskOf(ctx).id}:v${taskOf(ctx).version}`,
    ),
  done: requeue,
  blocked: requeue,
  failed: requeue,
  cancelled: requeue,
};

/**
 * Nobody untrusted queues work: the label goes every time (one effect per
 * delivery), with a reply that says why at most once per person, issue and
 * UTC day — a bot that re-adds the label is not mentioned in a loop.
 */
const rejectUntrusted = (ctx: Context, e: EventOf<"queue-label-untrusted">) => {
  const config = ctx.config;
  const labels = labelsOf(ctx);
  return unchanged(`${e.actor} may not queue work (${e.why})`, [
    effect("remove-label", `untrusted-queue-label:${e.deliveryId}`, { issue: ctx.subject.issue, label: labels.queued }),
    untrustedReply(ctx, e.actor, texts.untrustedQueue(e.actor, labels, config?.trust.minPermission ?? "write", e.why)),
  ]);
};

export const queueLabelUntrusted: EventRows<"queue-label-untrusted"> = everyState(rejectUntrusted, rejectUntrusted, {
  // A trusted person queued it; the label stays.
  queued: ignore("already queued by a trusted person"),
});

/** Raised only for a trusted person; anyone else's removal is `label-untrusted` (the label comes back). */
export const queueLabelRemoved: EventRows<"queue-label-removed"> = everyState(
  ignore("not a task"),
  ignore("only a queued task is cancelled by removing its queue label"),
  {
    queued: (ctx, e) => move(ctx, "cancelled", { summary: `queue label removed by ${e.actor}: cancelled` }),
  },
);

const close = (ctx: Context, e: EventOf<"issue-closed">) => {
  const task = taskOf(ctx);
  const to = e.completed || task.prNumber !== null ? "done" : "cancelled";
  const run = ctx.run && ctx.run.id === task.runId && ctx.run.state === "live" ? ctx.run : null;
  return move(ctx, to, {
    summary: `issue closed by ${e.actor}: ${to}`,
    task: { ...NO_LEASE },
    ...(run
      ? {
          run: {
            id: run.id,
            from: ["live"],
            patch: { state: "revoked", endedAt: ctx.now, endReason: `issue closed by ${e.actor}` },
          },
        }
      : {}),
  });
};

/**
 * A closed issue keeps no agent:* label it shows beyond the one its task still owns (none for no task, a done or
 * cancelled one): the close event's own payload is the evidence, so they go at once, not at the next reconcile.
 */
function staleLabels(ctx: Context, e: EventOf<"issue-closed">, why: string) {
  const owned = ctx.task?.label ?? null;
  const state = stateLabelsOf(labelsOf(ctx)).map((l) => l.toLowerCase());
  const stale = (e.labels ?? []).filter((l) => state.includes(l.toLowerCase()) && l !== owned);
  const key = (label: string) => `closed-label:${ctx.subject.repo}#${ctx.subject.issue}:${label}:${e.deliveryId ?? ""}`;
  return unchanged(
    stale.length ? `${why}; stale ${stale.join(", ")} taken off the closed issue` : why,
    stale.map((label) => effect("remove-label", key(label), { issue: ctx.subject.issue, label })),
  );
}

export const issueClosed: EventRows<"issue-closed"> = everyState((ctx, e) => staleLabels(ctx, e, "not a task"), close, {
  done: (ctx, e) => staleLabels(ctx, e, "already done"),
  cancelled: (ctx, e) => staleLabels(ctx, e, "already cancelled"),
});

/** One comment per distinct set of problems; the repository is paused until the file is fixed. */
const reportConfig = (ctx: Context, e: EventOf<"config-invalid">) =>
  unchanged("the repository's .github/orchestra.yml is invalid", [
    effect("comment", `bad-config:${ctx.subject.repo}:${ctx.subject.issue}:${digest(e.problems.join("\n"))}`, {
      issue: ctx.subject.issue,
      body: texts.badConfig(e.problems),
    }),
  ]);

export const configInvalid: EventRows<"config-invalid"> = everyState(reportConfig, reportConfig);
