/**
 * Raising an event: read the task and its runs, let the machine decide, apply
 * the decision in one fenced transaction. A fence that fails means someone
 * else changed the task first: the event is decided again on what is there
 * now, a few times at most. This is the one write path to task and run state;
 * every room raises events through it.
 */
import type { Logger } from "pino";
import type { Db } from "../store/db.js";
import { parseRing, pushError } from "../store/error-ring.js";
import type { ConfigResult } from "../config/repo.js";
import type { Applied, Context, Decision, Refused, RefusalReason, Subject, TaskView } from "../machine/decision.js";
import { runIdOf, type TaskEvent } from "../machine/events.js";
import { decide } from "../machine/table.js";
import { applyDecision, RolledBack, Stale, type InTransaction } from "./apply.js";
import { runView, taskView } from "./views.js";

export interface Clock {
  now(): Date;
}

/** A task by id, or an issue that may not have a task yet. */
export type TaskRef = { taskId: string } | { subject: Subject };

export type RaiseResult =
  | { outcome: "applied"; taskId: string; decision: Applied; inTransactionRan: boolean }
  | { outcome: "unchanged"; taskId: string | null; why: string; inTransactionRan: boolean }
  | { outcome: "refused"; taskId: string | null; reason: RefusalReason; message: string; inTransactionRan: boolean };

export interface RaiseOptions {
  /** Runs inside the transaction when the decision writes anything; a returned reason rolls it back. */
  inTransaction?: InTransaction;
}

export interface TasksDeps {
  db: Db;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  log: Logger;
  clock: Clock;
  /** The service-wide dry-run switch (ORCHESTRA_DRY_RUN). */
  dryRun: boolean;
  /** Called after a transaction that wrote effects (the executor looks at once). */
  onEffects(): void;
}

const ATTEMPTS = 6;

/** Events whose rows read whether a completion receipt exists. */
const NEEDS_RECEIPT = new Set<TaskEvent["kind"]>(["pr-merged", "run-exited", "run-classified"]);

export class Tasks {
  constructor(readonly deps: TasksDeps) {}

  async #context(ref: TaskRef, event: TaskEvent): Promise<Context> {
    const { db, clock } = this.deps;
    const row = "taskId" in ref ? await db.task.findUnique({ where: { id: ref.taskId } }) : await db.task.findUnique({ where: { repo_issue: { repo: ref.subject.repo, issue: ref.subject.issue } } });
    if (!row && "taskId" in ref) throw new Error(`no task ${ref.taskId}`);
    const task = row ? taskView(row) : null;
    const subject: Subject = row ? { installationId: row.installationId, repo: row.repo, issue: row.issue } : (ref as { subject: Subject }).subject;
    const runs = task ? (await db.run.findMany({ where: { taskId: task.id }, orderBy: { attempt: "asc" } })).map(runView) : [];
    const wanted = runIdOf(event) ?? task?.runId ?? null;
    const run = wanted ? (runs.find((r) => r.id === wanted) ?? null) : null;
    const hasReceipt = task && NEEDS_RECEIPT.has(event.kind) ? (await db.completionReceipt.count({ where: { taskId: task.id } })) > 0 : false;
    const cfg = await this.deps.configs.get(subject.installationId, subject.repo);
    return { subject, task, run, runs, config: cfg.ok ? cfg.config : null, hasReceipt, dryRun: this.deps.dryRun, now: clock.now() };
  }

  /** Decides without applying: what the event would do now. */
  async preview(ref: TaskRef, event: TaskEvent): Promise<Decision> {
    return decide(await this.#context(ref, event), event);
  }

  async raise(ref: TaskRef, event: TaskEvent, opts: RaiseOptions = {}): Promise<RaiseResult> {
    let lastStale = "";
    for (let i = 0; i < ATTEMPTS; i++) {
      const ctx = await this.#context(ref, event);
      const d = decide(ctx, event);
      const taskId = ctx.task?.id ?? null;
      const writes = d.outcome === "applied" || d.effects.length > 0 || (d.outcome === "unchanged" && (d.decisions?.length ?? 0) > 0);
      if (!writes) {
        return d.outcome === "refused"
          ? { outcome: "refused", taskId, reason: d.reason, message: d.message, inTransactionRan: false }
          : { outcome: "unchanged", taskId, why: (d as { why: string }).why, inTransactionRan: false };
      }
      try {
        const id = await applyDecision(this.deps.db, {
          subject: ctx.subject,
          task: ctx.task,
          decision: d,
          dryRun: ctx.dryRun || (ctx.config?.dryRun ?? false),
          now: ctx.now,
          ...(opts.inTransaction ? { inTransaction: opts.inTransaction } : {}),
        });
        if (d.effects.length > 0) this.deps.onEffects();
        this.#log(ctx.task, ctx.subject, event, d);
        if (d.outcome === "applied") return { outcome: "applied", taskId: id!, decision: d, inTransactionRan: true };
        if (d.outcome === "refused") return { outcome: "refused", taskId, reason: d.reason, message: d.message, inTransactionRan: true };
        return { outcome: "unchanged", taskId, why: d.why, inTransactionRan: true };
      } catch (err) {
        if (err instanceof Stale) {
          lastStale = err.message;
          continue;
        }
        if (err instanceof RolledBack) return { outcome: "refused", taskId, reason: "illegal", message: err.message, inTransactionRan: false };
        throw err;
      }
    }
    throw new Error(`${event.kind}: the task kept changing under it (${lastStale}); try again`);
  }

  #log(task: TaskView | null, subject: Subject, event: TaskEvent, d: Decision): void {
    const fields = { task: task?.id, repo: subject.repo, issue: subject.issue, event: event.kind, effects: d.effects.map((e) => e.kind) };
    if (d.outcome === "applied") {
      const quiet = event.kind === "heartbeat" || event.kind === "dispatched";
      this.deps.log[quiet ? "debug" : "info"]({ ...fields, from: task?.state ?? "none", to: d.to }, d.summary);
    } else {
      this.deps.log.debug(fields, d.outcome === "refused" ? (d as Refused).message : d.why);
    }
  }

  /** Appends to a run's error ring: the diagnostic trail beside its state (not a transition). */
  async recordRunError(runId: string, klass: string, message: string): Promise<void> {
    const { db, clock } = this.deps;
    for (let i = 0; i < ATTEMPTS; i++) {
      const run = await db.run.findUnique({ where: { id: runId }, select: { errors: true } });
      if (!run) return;
      const errors = JSON.stringify(pushError(parseRing(run.errors), { at: clock.now().toISOString(), class: klass, message }));
      const r = await db.run.updateMany({ where: { id: runId, errors: run.errors }, data: { errors } });
      if (r.count === 1) return;
    }
  }

  /**
   * A run that could not be classified (GitHub unreachable) is not asked
   * about again before `until`, so a broken run never holds the sweep's head.
   */
  async deferClassification(runId: string, until: Date): Promise<void> {
    await this.deps.db.run.updateMany({ where: { id: runId, class: null }, data: { classifyAfter: until, classifyFailures: { increment: 1 } } });
  }
}
