/**
 * The fenced apply: a decision becomes one database transaction — the
 * conditional update of the task (its version, plus run id and lease epoch
 * where a run is involved), the run's changes (fenced on the run's state),
 * a new run, a receipt, decisions, and the effects rows of the outbox. If any
 * fence fails the transaction changes nothing and reports `Stale`.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../store/db.js";
import { parseRing, pushError } from "../store/error-ring.js";
import type { Decision, Subject, TaskView } from "../machine/decision.js";

/** A fence did not hold: the task (or run) changed since it was read. Nothing was written. */
export class Stale extends Error {
  override readonly name = "Stale";
}

/** A check inside the transaction refused it (e.g. a limit). Nothing was written. */
export class RolledBack extends Error {
  override readonly name = "RolledBack";
}

/** Extra work inside the same transaction (a limit check, finishing the effect that raised the event). */
export type InTransaction = (tx: Db) => Promise<string | null | void>;

export interface ApplyInput {
  subject: Subject;
  task: TaskView | null;
  decision: Decision;
  /** Effects are recorded as "would have done" (dry run). */
  dryRun: boolean;
  now: Date;
  /** Runs last inside the transaction; a returned reason rolls everything back. */
  inTransaction?: InTransaction;
}

const TX = { maxWait: 15_000, timeout: 30_000 };

/** Applies a decision that writes something. Returns the task's id (a created one included). */
export async function applyDecision(db: Db, input: ApplyInput): Promise<string | null> {
  const { decision: d, now } = input;
  try {
    return await db.$transaction(async (txc) => {
      const tx = txc as unknown as Db;
      let taskId = input.task?.id ?? null;
      if (d.outcome === "applied") {
        if (d.create) {
          taskId = d.create.id;
          await tx.task.create({
            data: {
              id: d.create.id,
              installationId: input.subject.installationId,
              repo: input.subject.repo,
              issue: input.subject.issue,
              title: d.create.title,
              body: d.create.body,
              state: d.to,
              attempt: 0,
              priority: d.create.priority,
              queuedAt: now,
              branch: d.create.branch,
              label: d.label,
              createdAt: now,
              updatedAt: now,
            },
          });
        } else {
          const t = input.task;
          if (!t) throw new Error("a transition of a task that was not read");
          const { usage, continuation, ...rest } = d.task;
          const r = await tx.task.updateMany({
            where: {
              id: t.id,
              version: t.version,
              ...(d.fence?.runId !== undefined ? { runId: d.fence.runId } : {}),
              ...(d.fence?.leaseEpoch !== undefined ? { leaseEpoch: d.fence.leaseEpoch } : {}),
            },
            data: {
              ...rest,
              ...(continuation !== undefined ? { continuation: continuation ? JSON.stringify(continuation) : null } : {}),
              ...(usage
                ? { inputTokens: { increment: usage.inputTokens }, outputTokens: { increment: usage.outputTokens }, costUsd: { increment: usage.costUsd } }
                : {}),
              state: d.to,
              label: d.label,
              version: { increment: 1 },
              updatedAt: now,
            },
          });
          if (r.count !== 1) throw new Stale(`task ${t.id} changed since version ${t.version}`);
        }
        if (d.run) {
          const { error, ...patch } = d.run.patch;
          let errors: string | undefined;
          if (error) {
            const cur = await tx.run.findUnique({ where: { id: d.run.id }, select: { errors: true } });
            errors = JSON.stringify(pushError(parseRing(cur?.errors), { at: now.toISOString(), ...error }));
          }
          const r = await tx.run.updateMany({ where: { id: d.run.id, state: { in: d.run.from } }, data: { ...patch, ...(errors ? { errors } : {}) } });
          if (r.count !== 1) throw new Stale(`run ${d.run.id} is no longer ${d.run.from.join(" or ")}`);
        }
        if (d.newRun) {
          const n = d.newRun;
          await tx.run.create({
            data: {
              id: n.id,
              taskId: taskId!,
              attempt: n.attempt,
              workerId: n.workerId,
              mode: n.mode,
              state: "live",
              leaseEpoch: n.leaseEpoch,
              leaseExpiresAt: n.leaseExpiresAt,
              branch: n.branch,
              continuation: n.continuation ? JSON.stringify(n.continuation) : null,
              startedAt: now,
            },
          });
        }
        if (d.receipt && !(await tx.completionReceipt.findUnique({ where: { taskId: taskId! }, select: { id: true } }))) {
          await tx.completionReceipt.create({ data: { id: randomUUID(), taskId: taskId!, ...d.receipt } });
        }
      } else if (input.task) {
        // Effects of an unchanged state still follow the state they were decided on.
        const r = await tx.task.updateMany({ where: { id: input.task.id, version: input.task.version }, data: { version: { increment: 1 }, updatedAt: now } });
        if (r.count !== 1) throw new Stale(`task ${input.task.id} changed since version ${input.task.version}`);
      }
      const decisions = d.outcome === "refused" ? [] : (d.decisions ?? []);
      if (decisions.length > 0) {
        const seen = new Set((await tx.decision.findMany({ where: { source: { in: decisions.map((x) => x.source) } }, select: { source: true } })).map((x) => x.source));
        for (const x of decisions.filter((x) => !seen.has(x.source))) {
          await tx.decision.create({
            data: {
              id: x.id,
              taskId: taskId!,
              runId: x.runId,
              kind: x.kind,
              subject: x.subject,
              body: x.body,
              author: x.author,
              source: x.source,
              condition: x.condition ?? null,
              createdAt: now,
              expiresAt: x.expiresAt ?? null,
            },
          });
        }
      }
      if (d.effects.length > 0) {
        const seen = new Set((await tx.effect.findMany({ where: { key: { in: d.effects.map((e) => e.key) } }, select: { key: true } })).map((e) => e.key));
        const fresh = d.effects.filter((e, i) => !seen.has(e.key) && d.effects.findIndex((x) => x.key === e.key) === i);
        if (fresh.length > 0) {
          await tx.effect.createMany({
            data: fresh.map((e) => ({
              id: randomUUID(),
              key: e.key,
              taskId,
              runId: e.runId ?? null,
              installationId: input.subject.installationId,
              repo: input.subject.repo,
              kind: e.kind,
              payload: JSON.stringify(e.payload),
              state: "pending",
              nextAttemptAt: now,
              dryRun: input.dryRun,
              createdAt: now,
            })),
          });
        }
      }
      if (input.inTransaction) {
        const why = await input.inTransaction(tx);
        if (typeof why === "string") throw new RolledBack(why);
      }
      return taskId;
    }, TX);
  } catch (err) {
    // Two transactions inserting the same task or effect key: the loser re-reads.
    if ((err as { code?: string }).code === "P2002") throw new Stale(`a concurrent change won: ${(err as Error).message.split("\n").pop()}`);
    throw err;
  }
}
