/**
 * The fenced apply: a decision becomes one database transaction — the
 * conditional update of the task (its version, plus run id and lease epoch
 * where a run is involved), the run's changes (fenced on the run's state), a
 * new run, a receipt, decisions, and the effects rows of the outbox. If any
 * fence fails the transaction changes nothing and reports `Stale`.
 */
import { randomUUID } from "node:crypto";
import type { Database } from "../store/db.js";
import { type ErrorEntry, pushError } from "../store/error-ring.js";
import { atomically, isUniqueViolation, StepRefused, type Step } from "../store/sql.js";
import type { Decision, Subject, TaskPatch, TaskView } from "../machine/decision.js";
import { decisionSteps } from "./decisions.js";
import { supersedeSteps } from "./coalesce.js";
import { laneOf } from "../machine/effects.js";

/** A fence did not hold: the task (or run) changed since it was read. Nothing was written. */
export class Stale extends Error {
  override readonly name = "Stale";
}

/** A check of the caller's refused the transaction (e.g. a limit). Nothing was written. */
export class RolledBack extends Error {
  override readonly name = "RolledBack";
}

export interface ApplyInput {
  subject: Subject;
  task: TaskView | null;
  decision: Decision;
  /** The error ring of the run the decision changes, as read (an error is appended to it). */
  runErrors?: { text: string; ring: ErrorEntry[] };
  /** Effects are recorded as "would have done" (dry run). */
  dryRun: boolean;
  now: Date;
  /**
   * The caller's own statements, last in the transaction: a limit check, finishing the effect that raised the event.
   */
  steps?: Step[];
  /**
   * PostgreSQL: do not wait for a task row another transaction holds; treat it
   * as changed (claims move on to the next candidate instead of queueing up).
   */
  noWait?: boolean;
}

/** Fences report as stale; a caller's step refusing reports as rolled back. */
const STALE = "stale: ";
const one = (what: string) => (r: { changes: number }) => (r.changes === 1 ? null : `${STALE}${what}`);

/**
 * `"column" = ?` assignments for a patch of the task or a run: JSON columns
 * serialised, usage added to what is there, absent keys left alone.
 */
function assignments(patch: Record<string, unknown>): { sets: string[]; args: unknown[] } {
  const sets: string[] = [];
  const args: unknown[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (key === "usage") {
      const u = value as NonNullable<TaskPatch["usage"]>;
      sets.push(
        `"inputTokens" = "inputTokens" + ?`,
        `"outputTokens" = "outputTokens" + ?`,
        `"costUsd" = "costUsd" + ?`,
      );
      args.push(u.inputTokens, u.outputTokens, u.costUsd);
    } else if (key === "continuation" || key === "blockedBy") {
      sets.push(`"${key}" = ?`);
      args.push(value === null ? null : JSON.stringify(value));
    } else {
      sets.push(`"${key}" = ?`);
      args.push(value);
    }
  }
  return { sets, args };
}

/** The statements of a decision, in order. */
export function stepsOf(
  database: Pick<Database, "provider">,
  input: ApplyInput,
): { steps: Step[]; taskId: string | null } {
  const { decision: d, now, subject } = input;
  const steps: Step[] = [];
  let taskId = input.task?.id ?? null;
  const t = input.task;
  if (t && input.noWait && database.provider === "postgresql") {
    steps.push({
      sql: `SELECT 1 AS "held" FROM "Task" WHERE "id" = ? FOR UPDATE SKIP LOCKED`,
      args: [t.id],
      check: (r) => (r.rows.length === 1 ? null : `${STALE}task ${t.id} is being changed by another transaction`),
    });
  }
  if (d.outcome === "applied") {
    if (d.create) {
      taskId = d.create.id;
      steps.push({
        sql:
          `INSERT INTO "Task" ("id","installationId","repo","issue","title","body","state",` +
          `"attempt","priority","queuedAt","branch","label","blockedBy","blockersAt",` +
          `"repoId","createdAt","updatedAt") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
        args: [
          d.create.id,
          subject.installationId,
          subject.repo,
          subject.issue,
          d.create.title,
          d.create.body,
          d.to,
          0,
          d.create.priority,
          now,
          d.create.branch,
          d.label,
          d.create.blockedBy && d.create.blockedBy.length ? JSON.stringify(d.create.blockedBy) : null,
          d.create.blockersAt,
          d.create.repoId,
          now,
          now,
        ],
      });
    } else {
      if (!t) throw new Error("a transition of a task that was not read");
      const { sets, args } = assignments(d.task);
      const where = [`"id" = ?`, `"version" = ?`];
      const whereArgs: unknown[] = [t.id, t.version];
      if (d.fence?.runId !== undefined) {
        where.push(d.fence.runId === null ? `"runId" IS NULL` : `"runId" = ?`);
        if (d.fence.runId !== null) whereArgs.push(d.fence.runId);
      }
      if (d.fence?.leaseEpoch !== undefined) {
        where.push(d.fence.leaseEpoch === null ? `"leaseEpoch" IS NULL` : `"leaseEpoch" = ?`);
        if (d.fence.leaseEpoch !== null) whereArgs.push(d.fence.leaseEpoch);
      }
      const columns = [...sets, `"state" = ?`, `"label" = ?`, `"version" = "version" + 1`, `"updatedAt" = ?`];
      steps.push({
        sql: `UPDATE "Task" SET ${columns.join(", ")} WHERE ${where.join(" AND ")}`,
        args: [...args, d.to, d.label, now, ...whereArgs],
        check: one(`task ${t.id} changed since version ${t.version}`),
      });
    }
    if (d.run) {
      const { error, ...patch } = d.run.patch;
      const { sets, args } = assignments(patch);
      const where = [`"id" = ?`, `"state" IN (${d.run.from.map(() => "?").join(",")})`];
      const whereArgs: unknown[] = [d.run.id, ...d.run.from];
      if (error) {
        const ring = input.runErrors ?? { text: "[]", ring: [] };
        sets.push(`"errors" = ?`);
        args.push(JSON.stringify(pushError(ring.ring, { at: now.toISOString(), ...error })));
        where.push(`"errors" = ?`);
        whereArgs.push(ring.text);
      }
      if (sets.length > 0)
        steps.push({
          sql: `UPDATE "Run" SET ${sets.join(", ")} WHERE ${where.join(" AND ")}`,
          args: [...args, ...whereArgs],
          check: one(`run ${d.run.id} is no longer ${d.run.from.join(" or ")}`),
        });
    }
    if (d.newRun) {
      const n = d.newRun;
      steps.push({
        sql:
          `INSERT INTO "Run" ("id","taskId","attempt","workerId","mode","state","leaseEpoch","leaseExpiresAt",` +
          `"branch","continuation","startedAt","progressAt","credentials") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
        args: [
          n.id,
          taskId,
          n.attempt,
          n.workerId,
          n.mode,
          "live",
          n.leaseEpoch,
          n.leaseExpiresAt,
          n.branch,
          n.continuation ? JSON.stringify(n.continuation) : null,
          now,
          now,
          n.credentials ?? null,
        ],
      });
    }
    if (d.receipt) {
      const r = d.receipt;
      steps.push({
        sql:
          `INSERT INTO "CompletionReceipt" ("id","taskId","runId","prNumber","mergeSha","headSha","mergedAt") ` +
          `VALUES (?,?,?,?,?,?,?) ON CONFLICT ("taskId") DO NOTHING`,
        args: [randomUUID(), taskId, r.runId, r.prNumber, r.mergeSha, r.headSha, r.mergedAt],
      });
    }
  } else if (t) {
    // Effects of an unchanged state still follow the state they were decided on.
    steps.push({
      sql: `UPDATE "Task" SET "version" = "version" + 1, "updatedAt" = ? WHERE "id" = ? AND "version" = ?`,
      args: [now, t.id, t.version],
      check: one(`task ${t.id} changed since version ${t.version}`),
    });
  }
  const answering = d.outcome === "refused" ? undefined : d.answering;
  if (answering) {
    // A question is answered once: a second answer (or an expiry after one) writes nothing.
    steps.push({
      sql: `UPDATE "Decision" SET "answeredAt" = ? WHERE "id" = ? AND "answeredAt" IS NULL`,
      args: [now, answering],
      check: one(`question ${answering} was already answered`),
    });
  }
  if (d.outcome === "applied" && d.closesQuestions) {
    // Before this decision's own rows: a question it asks stays open.
    steps.push({
      sql: `UPDATE "Decision" SET "answeredAt" = ? WHERE "taskId" = ? AND "kind" = 'question' AND "answeredAt" IS NULL`,
      args: [now, taskId],
    });
  }
  for (const x of d.outcome === "refused" ? [] : (d.decisions ?? [])) steps.push(...decisionSteps(taskId, x, now));
  if (d.effects.length > 0) {
    // One logical effect, one row: a key already recorded (the
    // same event again, a debounced effect's window) adds nothing.
    steps.push({
      sql:
        `INSERT INTO "Effect" ("id","key","taskId","runId","installationId","repo","kind",` +
        `"payload","state","nextAttemptAt","dryRun","createdAt","lane","coalesceKey") ` +
        `VALUES ${d.effects.map(() => "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)").join(",")} ON CONFLICT ("key") DO NOTHING`,
      args: d.effects.flatMap((e) => [
        randomUUID(),
        e.key,
        e.repoWide ? null : taskId,
        e.runId ?? null,
        subject.installationId,
        subject.repo,
        e.kind,
        JSON.stringify(e.payload),
        "pending",
        e.at ?? now,
        input.dryRun,
        now,
        laneOf(e),
        e.coalesce ?? null,
      ]),
    });
    steps.push(...d.effects.flatMap((e) => (e.coalesce ? supersedeSteps(e.coalesce, e.key, e.at ?? now, now) : [])));
  }
  return { steps: [...steps, ...(input.steps ?? [])], taskId };
}

/** Applies a decision that writes something, in one transaction. Returns the task's id (a created one included). */
export async function applyDecision(
  database: Pick<Database, "raw" | "provider">,
  input: ApplyInput,
): Promise<string | null> {
  const { steps, taskId } = stepsOf(database, input);
  try {
    await atomically(database, steps);
    return taskId;
  } catch (err) {
    if (err instanceof StepRefused)
      throw err.reason.startsWith(STALE) ? new Stale(err.reason.slice(STALE.length)) : new RolledBack(err.reason);
    // Two transactions creating the same task: the loser reads it and decides again.
    if (isUniqueViolation(err)) throw new Stale(`a concurrent change won: ${(err as Error).message.split("\n").pop()}`);
    throw err;
  }
}
