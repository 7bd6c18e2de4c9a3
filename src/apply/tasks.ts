/**
 * Raising an event: read the task and its runs, let the machine decide, apply
 * the decision in one fenced transaction. A fence that fails means someone
 * else changed the task first: the event is decided again on what is there
 * now, a few times at most. This is the one write path to task and run state;
 * every room raises events through it.
 */
import type { Logger } from "pino";
import type { Database, Db } from "../store/db.js";
import { parseRing, pushError } from "../store/error-ring.js";
import type { Step } from "../store/sql.js";
import type { Task } from "../store/generated/sqlite/client.js";
import type { ConfigResult } from "../config/repo.js";
import type { Applied, Context, Decision, RefusalReason, Subject, TaskView } from "../machine/decision.js";
import { runIdOf, type TaskEvent } from "../machine/events.js";
import { decide } from "../machine/table.js";
import { applyDecision, RolledBack, Stale } from "./apply.js";
import { runView, taskView } from "./views.js";
import type { Run } from "../store/generated/sqlite/client.js";

export interface Clock {
  now(): Date;
}

/** A task by id (or its row and run, just read), or an issue that may not have a task yet. */
export type TaskRef = { taskId: string } | { task: Task; run?: Run } | { subject: Subject };

export type RaiseResult =
  | { outcome: "applied"; taskId: string; decision: Applied; stepsRan: boolean }
  | { outcome: "unchanged"; taskId: string | null; why: string; stepsRan: boolean }
  | { outcome: "refused"; taskId: string | null; reason: RefusalReason; message: string; stepsRan: boolean };

export interface RaiseOptions {
  /**
   * The caller's statements, run in the same transaction when
   * the decision writes anything; a refused check rolls it back.
   */
  steps?: Step[];
  /** How often to decide again when someone else changed the task first (default 6). */
  attempts?: number;
  /** PostgreSQL: a task row another transaction holds counts as changed, without waiting for it. */
  noWait?: boolean;
}

export interface TasksDeps {
  db: Db;
  database: Pick<Database, "raw" | "provider">;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  log: Logger;
  clock: Clock;
  /** The service-wide dry-run switch (ORCHESTRA_DRY_RUN). */
  dryRun: boolean;
  /** The fleet issue's debounce window (ORCHESTRA_FLEET_DEBOUNCE_SECONDS); unset: the machine's default. */
  fleetDebounceMs?: number;
  /** Called after a transaction that wrote effects (the executor looks at once). */
  onEffects(): void;
  /**
   * Called after a task row is read for a decision and before its runs are:
   * tests put a concurrent transition exactly there (unset in service).
   */
  afterTaskRead?: (event: TaskEvent) => Promise<void>;
}

const ATTEMPTS = 6;

/** The task kept changing under an event, every time it was decided again: nothing was written; send it again. */
export class Busy extends Error {
  override readonly name = "Busy";
}

/** Events whose rows read whether a completion receipt exists. */
const NEEDS_RECEIPT = new Set<TaskEvent["kind"]>(["pr-merged", "run-exited", "run-classified"]);
/** Events whose rows read the task's whole run history (the others read at most the run they name). */
const NEEDS_HISTORY = new Set<TaskEvent["kind"]>([
  "run-classified",
  "publish-refused",
  "pr-merged",
  "command",
  // whether a successor started
  "run-exited",
]);

export class Tasks {
  constructor(readonly deps: TasksDeps) {}

  async #context(
    ref: TaskRef,
    event: TaskEvent,
    prefetched: { task: Task; run?: Run } | null,
  ): Promise<{ ctx: Context; runErrors: string | null }> {
    const { db, clock } = this.deps;
    const row =
      prefetched?.task ??
      ("taskId" in ref
        ? await db.task.findUnique({ where: { id: ref.taskId } })
        : "task" in ref
          ? await db.task.findUnique({ where: { id: ref.task.id } })
          : await db.task.findUnique({ where: { repo_issue: { repo: ref.subject.repo, issue: ref.subject.issue } } }));
    if (!row && !("subject" in ref)) throw new Error(`no task ${"taskId" in ref ? ref.taskId : ref.task.id}`);
    if (row && !prefetched) await this.deps.afterTaskRead?.(event);
    const task = row ? taskView(row) : null;
    const subject: Subject = row
      ? { installationId: row.installationId, repo: row.repo, issue: row.issue }
      : (ref as { subject: Subject }).subject;
    const wanted = runIdOf(event) ?? task?.runId ?? null;
    let rows: Run[] = [];
    if (task && NEEDS_HISTORY.has(event.kind))
      rows = await db.run.findMany({ where: { taskId: task.id }, orderBy: { attempt: "asc" } });
    else if (task && wanted)
      rows =
        prefetched?.run?.id === wanted
          ? [prefetched.run]
          : await db.run.findMany({ where: { id: wanted, taskId: task.id } });
    const runs = rows.map(runView);
    const runRow = wanted ? (rows.find((r) => r.id === wanted) ?? null) : null;
    const hasReceipt =
      task && NEEDS_RECEIPT.has(event.kind)
        ? (await db.completionReceipt.count({ where: { taskId: task.id } })) > 0
        : false;
    const cfg = await this.deps.configs.get(subject.installationId, subject.repo);
    const ctx: Context = {
      subject,
      task,
      run: runRow ? runView(runRow) : null,
      runs,
      config: cfg.ok ? cfg.config : null,
      hasReceipt,
      dryRun: this.deps.dryRun,
      ...(this.deps.fleetDebounceMs ? { fleetDebounceMs: this.deps.fleetDebounceMs } : {}),
      now: clock.now(),
    };
    return { ctx, runErrors: runRow?.errors ?? null };
  }

  async raise(ref: TaskRef, event: TaskEvent, opts: RaiseOptions = {}): Promise<RaiseResult> {
    let lastStale = "";
    const attempts = opts.attempts ?? ATTEMPTS;
    for (let i = 0; i < attempts; i++) {
      // A row the caller has just read serves the first decision; a retry reads again.
      const { ctx, runErrors } = await this.#context(ref, event, i === 0 && "task" in ref ? ref : null);
      const d = decide(ctx, event);
      const taskId = ctx.task?.id ?? null;
      const writes =
        d.outcome === "applied" ||
        d.effects.length > 0 ||
        (d.outcome === "unchanged" && ((d.decisions?.length ?? 0) > 0 || d.answering !== undefined));
      if (!writes) {
        return d.outcome === "refused"
          ? { outcome: "refused", taskId, reason: d.reason, message: d.message, stepsRan: false }
          : { outcome: "unchanged", taskId, why: (d as { why: string }).why, stepsRan: false };
      }
      try {
        const id = await applyDecision(this.deps.database, {
          subject: ctx.subject,
          task: ctx.task,
          decision: d,
          ...(runErrors !== null ? { runErrors: { text: runErrors, ring: parseRing(runErrors) } } : {}),
          dryRun: ctx.dryRun || (ctx.config?.dryRun ?? false),
          now: ctx.now,
          ...(opts.steps ? { steps: opts.steps } : {}),
          ...(opts.noWait ? { noWait: true } : {}),
        });
        if (d.effects.length > 0) this.deps.onEffects();
        this.#log(ctx.task, ctx.subject, event, d);
        if (d.outcome === "applied") return { outcome: "applied", taskId: id!, decision: d, stepsRan: true };
        if (d.outcome === "refused")
          return { outcome: "refused", taskId, reason: d.reason, message: d.message, stepsRan: true };
        return { outcome: "unchanged", taskId, why: d.why, stepsRan: true };
      } catch (err) {
        if (err instanceof Stale) {
          lastStale = err.message;
          continue;
        }
        if (err instanceof RolledBack)
          return { outcome: "refused", taskId, reason: "rolled-back", message: err.message, stepsRan: false };
        throw err;
      }
    }
    if (attempts < ATTEMPTS)
      return {
        outcome: "refused",
        taskId: null,
        reason: "superseded",
        message: `someone else changed the task first (${lastStale})`,
        stepsRan: false,
      };
    throw new Busy(`${event.kind}: the task kept changing under it (${lastStale}); nothing was written, send it again`);
  }

  #log(task: TaskView | null, subject: Subject, event: TaskEvent, d: Decision): void {
    const fields = {
      task: task?.id,
      repo: subject.repo,
      issue: subject.issue,
      event: event.kind,
      effects: d.effects.map((e) => e.kind),
    };
    if (d.outcome === "applied") {
      const quiet = event.kind === "heartbeat" || event.kind === "dispatched";
      this.deps.log[quiet ? "debug" : "info"]({ ...fields, from: task?.state ?? "none", to: d.to }, d.summary);
    } else {
      this.deps.log.debug(fields, d.outcome === "refused" ? d.message : d.why);
    }
  }

  /** Appends to a run's error ring: the diagnostic trail beside its state (not a transition). */
  async recordRunError(runId: string, klass: string, message: string, windowFrom?: Date): Promise<void> {
    const { db, clock } = this.deps;
    const entry = {
      at: clock.now().toISOString(),
      class: klass,
      message,
      ...(windowFrom ? { windowFrom: windowFrom.toISOString() } : {}),
    };
    for (let i = 0; i < ATTEMPTS; i++) {
      const run = await db.run.findUnique({ where: { id: runId }, select: { errors: true } });
      if (!run) return;
      const errors = JSON.stringify(pushError(parseRing(run.errors), entry));
      const r = await db.run.updateMany({ where: { id: runId, errors: run.errors }, data: { errors } });
      if (r.count === 1) return;
    }
  }

  /**
   * A run that could not be classified (GitHub unreachable) is not asked
   * about again before `until`, so a broken run never holds the sweep's head.
   */
  async deferClassification(runId: string, until: Date): Promise<void> {
    await this.deps.db.run.updateMany({
      where: { id: runId, class: null },
      data: { classifyAfter: until, classifyFailures: { increment: 1 } },
    });
  }

  /** The ids of the tasks not yet done or cancelled in an installation or a repository. */
  async openIn(where: { installationId: number } | { repo: string }): Promise<string[]> {
    const open = await this.deps.db.task.findMany({
      where: { ...where, state: { notIn: ["done", "cancelled"] } },
      select: { id: true },
    });
    return open.map((t) => t.id);
  }

  /**
   * A renamed or transferred repository: its tasks follow it, matched by the
   * repository's id or by the old name. The version moves on, so a decision
   * read before the move is applied again on the new name. Returns how many moved.
   */
  async followRepository(to: { repo: string; repoId: number }, oldName: string | null): Promise<number> {
    const where = oldName ? { OR: [{ repoId: to.repoId }, { repo: oldName }] } : { repoId: to.repoId };
    const moved = await this.deps.db.task.updateMany({
      where,
      data: { repo: to.repo, repoId: to.repoId, version: { increment: 1 } },
    });
    return moved.count;
  }
}
