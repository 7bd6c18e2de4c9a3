/**
 * The vocabulary rows are written in: a transition to a state (with its label
 * change), an unchanged state, a refusal, and the checks that fence an event
 * on the run and lease it names.
 */
import { DEFAULT_CONFIG } from "../../config/repo.js";
import { effect, type EffectSpec } from "../effects.js";
import { fleetEffect, fleetShows } from "../fleet.js";
import type {
  Applied,
  Context,
  Decision,
  NewDecision,
  Refused,
  RefusalReason,
  RunView,
  TaskView,
  Unchanged,
} from "../decision.js";
import type { EventKind, EventOf } from "../events.js";
import { labelFor, stateLabelsOf, type Labels, type State, type TaskState } from "../model.js";

/** One cell of the table: what an event means for a task in one state. */
export type Row<K extends EventKind> = (ctx: Context, e: EventOf<K>) => Decision;
export type EventRows<K extends EventKind> = { readonly [S in State]: Row<K> };

export function labelsOf(ctx: Context): Labels {
  return ctx.config?.labels ?? DEFAULT_CONFIG.labels;
}

export function unchanged(
  why: string,
  effects: EffectSpec[] = [],
  decisions?: NewDecision[],
  answering?: string,
): Unchanged {
  return {
    outcome: "unchanged",
    why,
    effects,
    ...(decisions ? { decisions } : {}),
    ...(answering ? { answering } : {}),
  };
}

export function refused(reason: RefusalReason, message: string, effects: EffectSpec[] = []): Refused {
  return { outcome: "refused", reason, message, effects };
}

/** A row for a state where the event has no meaning: nothing changes. */
export const ignore = (why: string) => (): Decision => unchanged(why);

/** The task, for rows that only run in task states. */
export function taskOf(ctx: Context): TaskView {
  if (!ctx.task) throw new Error("row for a task state called without a task");
  return ctx.task;
}

/** The label effect that brings GitHub in line with `label` after a transition. */
export function labelEffect(ctx: Context, taskId: string, version: number, label: string | null): EffectSpec {
  const others = stateLabelsOf(labelsOf(ctx)).filter((l) => l !== label);
  return {
    ...effect("label", `label:${taskId}:v${version}`, { issue: ctx.subject.issue, label, others }),
    coalesce: `label:${taskId}`,
    ...(label !== null && label === labelsOf(ctx).inProgress ? { lane: "interlock" as const } : {}),
  };
}

type MoveParts = Omit<Applied, "outcome" | "to" | "label" | "effects" | "task"> & {
  task?: Applied["task"];
  effects?: EffectSpec[];
};

/**
 * A transition of the task in `ctx` to `to`. The label the new state shows
 * comes with it, and so does the label effect whenever the state changes
 * (GitHub is brought in line even when a person edited the labels).
 */
export function move(ctx: Context, to: TaskState, parts: MoveParts): Applied {
  const label = labelFor(to, labelsOf(ctx));
  const id = parts.create?.id ?? taskOf(ctx).id;
  const version = parts.create ? 0 : taskOf(ctx).version + 1;
  const relabel = parts.create !== undefined || ctx.task?.state !== to || ctx.task?.label !== label;
  const effects = [...(relabel ? [labelEffect(ctx, id, version, label)] : []), ...(parts.effects ?? [])];
  // The Orchestra check run on the PR head follows what people would want to see change there.
  const pr = parts.task?.prNumber !== undefined ? parts.task.prNumber : (ctx.task?.prNumber ?? null);
  const head = parts.task?.headSha !== undefined ? parts.task.headSha : (ctx.task?.headSha ?? null);
  const shown =
    relabel ||
    parts.task?.prNumber !== undefined ||
    parts.task?.headSha !== undefined ||
    parts.run?.patch.class !== undefined;
  if (shown && pr !== null && head !== null) effects.push(checkRunEffect(id, version, pr, head));
  // The repository's fleet issue follows what it shows, one debounced edit per window.
  if (ctx.config?.fleetIssue && fleetShows(parts.create ? null : ctx.task, to, parts.task ?? {}, parts.run?.patch))
    effects.push(fleetEffect(ctx.subject.repo, ctx.now, ctx.fleetDebounceMs));
  return { ...parts, outcome: "applied", to, label, task: parts.task ?? {}, effects };
}

/** Brings the Orchestra check run on the PR head up to date (one check run per head sha, updated in place). */
export function checkRunEffect(
  taskId: string,
  version: number | string,
  prNumber: number,
  headSha: string,
): EffectSpec {
  return {
    ...effect("check-run", `check-run:${taskId}:${headSha}:v${version}`, { headSha, prNumber }),
    coalesce: `check-run:${taskId}:${headSha}`,
  };
}

/** The lease fields of a task without a live lease. */
export const NO_LEASE = { runId: null, leaseEpoch: null, leaseExpiresAt: null, workerId: null } as const;

/**
 * The fence of every event a run's worker sends: the run is the task's
 * current run, its lease is live, and the epoch is the lease's epoch. The
 * refusal says which of these failed, in the worker API's reason words.
 */
export function checkLease(
  ctx: Context,
  runId: string,
  leaseEpoch: string | null,
): { task: TaskView; run: RunView } | Refused {
  const run = ctx.run;
  if (!run || run.id !== runId) return refused("superseded", `run ${runId} is not this task's run`);
  if (leaseEpoch !== null && run.leaseEpoch !== leaseEpoch)
    return refused("stale-epoch", "stale lease epoch: this run's lease has another epoch");
  const task = ctx.task;
  if (run.state !== "live") {
    const reason: RefusalReason = run.stalled
      ? "stalled"
      : run.state === "exited" ||
          run.state === "expired" ||
          run.state === "revoked" ||
          run.state === "review" ||
          run.state === "aborted" ||
          run.state === "released"
        ? run.state
        : "superseded";
    return refused(reason, `lease no longer held: ${run.endReason ?? run.state}`);
  }
  if (
    !task ||
    task.runId !== run.id ||
    task.state !== "claimed" ||
    (leaseEpoch !== null && task.leaseEpoch !== leaseEpoch)
  ) {
    return refused("superseded", "lease no longer held: the task has moved on");
  }
  return { task, run };
}

/** Events a run's worker sends under its lease: the run id and epoch they are fenced on. */
type LeasedKind = { [K in EventKind]: EventOf<K> extends { runId: string; leaseEpoch: string } ? K : never }[EventKind];

/**
 * The rows of an event a worker sends under its lease: refused in every
 * state unless the lease holds (with the reason the fence gives), and `live`
 * when it does (only a claimed task holds a live lease).
 */
export function underLease<K extends LeasedKind>(
  live: (ctx: Context, e: EventOf<K>, lease: { task: TaskView; run: RunView }) => Decision,
): EventRows<K> {
  const fenced: Row<K> = (ctx, e) => {
    const fence = e as unknown as { runId: string; leaseEpoch: string }; // LeasedKind guarantees both
    const lease = checkLease(ctx, fence.runId, fence.leaseEpoch);
    if (isRefusal(lease)) return lease;
    return ctx.task?.state === "claimed" ? live(ctx, e, lease) : refused("superseded", "lease no longer held");
  };
  return everyState<K>(() => refused("superseded", "no such task"), fenced);
}

export function isRefusal(x: unknown): x is Refused {
  return typeof x === "object" && x !== null && (x as Refused).outcome === "refused";
}

/** Rows that mean the same in every task state, with one for "none". */
export function everyState<K extends EventKind>(
  none: Row<K>,
  task: Row<K>,
  overrides: Partial<EventRows<K>> = {},
): EventRows<K> {
  return {
    none,
    queued: task,
    claimed: task,
    review: task,
    done: task,
    blocked: task,
    failed: task,
    cancelled: task,
    ...overrides,
  };
}

export { effect };
