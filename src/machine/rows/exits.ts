/**
 * The worker says it is done. Whoever raises this has already looked on
 * GitHub for the run's PR: an open one moves the task to review, a merged one
 * settles it, none ends the run and leaves it owed a class.
 *
 * A late exit — its lease expired or stalled — is accepted while no successor
 * has claimed the task: before its run is classified it counts as a normal
 * exit; after, a PR it names still moves the task to review. Once a successor
 * holds the task the exit is refused with `superseded`: the worker drops its
 * work.
 */
import type { Context, Decision, RunView, TaskView } from "../decision.js";
import type { EventOf } from "../events.js";
import { everyState, move, NO_LEASE, refused, unchanged, type EventRows } from "./build.js";
import { ENDED_LEASE, usageChange } from "./runs.js";
import { neverStarted } from "../model.js";

type Exit = EventOf<"run-exited">;

/** The run's exit on a task that still waits on it (live, or ended without an exit and not classified yet). */
function exitOwned(ctx: Context, e: Exit, task: TaskView, run: RunView): Decision {
  const usage = usageChange(run, e.report.usage);
  const late = run.state !== "live";
  // A live lease is fenced on its epoch; an expired one kept only the run id on the task.
  const fence = late ? { runId: run.id } : { runId: run.id, leaseEpoch: e.leaseEpoch };
  const from = [run.state];
  const lateNote = late ? ` (late: ${run.endReason ?? "its lease had ended"})` : "";
  // What every exit records on the run: the report, the usage, when it ended.
  const ended = (endReason: string, state: "exited" | "review") => ({
    state,
    endedAt: ctx.now,
    endReason: `${endReason}${lateNote}`,
    report: JSON.stringify(e.report),
    ...usage.run,
  });
  if (e.pr === null) {
    return move(ctx, "claimed", {
      summary: `run exited ${e.report.exitCode} without a pull request${lateNote}; owed a class`,
      task: { ...ENDED_LEASE, ...usage.task },
      fence,
      run: {
        id: run.id,
        from,
        patch: {
          ...ended(`exited ${e.report.exitCode} without a pull request`, "exited"),
          ...(e.report.headSha ? { headSha: e.report.headSha } : {}),
          classifyAfter: null,
        },
      },
    });
  }
  if (!e.pr.merged) {
    return move(ctx, "review", {
      summary: `run exited with pull request #${e.pr.number}${lateNote}: in review`,
      task: { ...NO_LEASE, prNumber: e.pr.number, headSha: e.pr.headSha, continuation: null, ...usage.task },
      fence,
      run: {
        id: run.id,
        from,
        patch: {
          ...ended(`pull request #${e.pr.number} opened`, "review"),
          prNumber: e.pr.number,
          headSha: e.pr.headSha,
        },
      },
    });
  }
  const m = e.pr.merge;
  return move(ctx, "done", {
    summary: `run exited after pull request #${m.prNumber} merged${lateNote}: done`,
    task: { ...NO_LEASE, prNumber: m.prNumber, ...usage.task },
    fence,
    run: {
      id: run.id,
      from,
      patch: {
        ...ended(`pull request #${m.prNumber} merged`, "exited"),
        prNumber: m.prNumber,
        headSha: m.headSha,
        class: "merged",
        recovery: "settle",
        evidence: JSON.stringify({ pr: m.prNumber, merged: true }),
        recoveredAt: ctx.now,
      },
    },
    receipt: ctx.hasReceipt ? undefined : { runId: run.id, ...m },
  });
}

/** Whether a run started after this one (a successor claimed the task). */
function succeeded(ctx: Context, run: RunView): boolean {
  return ctx.runs.some((r) => r.id !== run.id && r.startedAt > run.startedAt);
}

const SUPERSEDED = "superseded: another run holds the task now; drop this run's work";

/** The run was classified after its lease ended and nobody claimed the task since: a PR it names still counts. */
function exitAfterClass(ctx: Context, e: Exit, run: RunView): Decision {
  if (e.pr === null)
    return unchanged(`already classified ${run.class ?? "(pending)"} after its lease ended; nothing new to act on`);
  const usage = usageChange(run, e.report.usage);
  const report = {
    endReason: `${run.endReason ?? "lease ended"}; exited late`,
    report: JSON.stringify(e.report),
    ...usage.run,
  };
  if (!e.pr.merged) {
    return move(ctx, "review", {
      summary: `late exit with pull request #${e.pr.number} after the run was classified ${run.class}: in review`,
      task: { ...NO_LEASE, prNumber: e.pr.number, headSha: e.pr.headSha, continuation: null, ...usage.task },
      fence: { runId: null },
      run: {
        id: run.id,
        from: [run.state],
        patch: { ...report, state: "review", prNumber: e.pr.number, headSha: e.pr.headSha },
      },
    });
  }
  const m = e.pr.merge;
  return move(ctx, "done", {
    summary: `late exit after pull request #${m.prNumber} merged: done`,
    task: { ...NO_LEASE, prNumber: m.prNumber, continuation: null, ...usage.task },
    fence: { runId: null },
    run: { id: run.id, from: [run.state], patch: { ...report, prNumber: m.prNumber, headSha: m.headSha } },
    receipt: ctx.hasReceipt ? undefined : { runId: run.id, ...m },
  });
}

/**
 * The run's own PR moved the task to review before its exit came in (the
 * `pull_request.opened` webhook won the race, or the exit is sent again): the
 * exit agrees with what happened. Its report is recorded on the run, once;
 * only a successor run refuses it. The task keeps whatever state it has now.
 */
function exitAfterReview(ctx: Context, e: Exit, task: TaskView, run: RunView): Decision {
  if (succeeded(ctx, run)) return refused("superseded", SUPERSEDED);
  if (run.reported) return unchanged(`the exit is recorded already (pull request #${run.prNumber})`);
  const usage = usageChange(run, e.report.usage);
  return move(ctx, task.state, {
    summary: `run exited ${e.report.exitCode} after its pull request #${run.prNumber} moved the task to review`,
    task: { ...usage.task },
    run: {
      id: run.id,
      from: ["review"],
      patch: {
        report: JSON.stringify(e.report),
        endReason: `${run.endReason ?? `pull request #${run.prNumber} opened`}; exited ${e.report.exitCode}`,
        ...usage.run,
      },
    },
  });
}

function exitRow(ctx: Context, e: Exit): Decision {
  const task = ctx.task;
  const run = ctx.run;
  if (!task || !run || run.id !== e.runId) return refused("superseded", `run ${e.runId} is not this task's run`);
  if (run.leaseEpoch !== e.leaseEpoch)
    return refused("stale-epoch", "stale lease epoch: this run's lease has another epoch");
  if (run.state === "revoked" || neverStarted(run.state))
    return refused(run.state, `lease no longer held: ${run.endReason ?? run.state}`);
  // Before the task's state: a task read just before the PR's transition and its run read just after it still
  // lands here, and the version fence then sends the exit round again on what is there now.
  if (run.state === "review" && run.prNumber !== null) return exitAfterReview(ctx, e, task, run);
  if (task.state === "claimed") {
    if (task.runId !== run.id) return refused("superseded", SUPERSEDED);
    if (run.state === "live")
      return task.leaseEpoch === e.leaseEpoch ? exitOwned(ctx, e, task, run) : refused("superseded", SUPERSEDED);
    if (run.state === "expired" && run.class === null) return exitOwned(ctx, e, task, run);
    return refused(run.state, `lease no longer held: ${run.endReason ?? run.state}`);
  }
  if (succeeded(ctx, run)) return refused("superseded", SUPERSEDED);
  if (task.state === "review")
    return task.prNumber !== null && e.pr !== null && !e.pr.merged && e.pr.number === task.prNumber
      ? unchanged(`already in review with pull request #${task.prNumber}`)
      : refused("superseded", "the task is in review with another pull request");
  if ((task.state === "queued" || task.state === "blocked" || task.state === "failed") && run.state === "expired")
    return exitAfterClass(ctx, e, run);
  // This run has exited already (an exit sent twice, or taken over from a request presumed dead): the same answer
  // whether or not the first exit's recovery has moved the task on yet.
  if (run.state === "exited") return refused("exited", `lease no longer held: ${run.endReason ?? "exited"}`);
  return refused("superseded", `the task is ${task.state}: this run's work is not wanted any more`);
}

export const runExited: EventRows<"run-exited"> = everyState<"run-exited">(
  () => refused("superseded", "no such task"),
  exitRow,
);
