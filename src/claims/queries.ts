/**
 * The claims room's queries: the run and task a lease names, the run a
 * continuation follows, and the decisions handed to runs with their receipts.
 * (The claim query itself and its fenced limits are plain SQL: candidates.ts,
 * limits.ts.)
 */
import type { Db } from "../store/db.js";
import type { Decision, DecisionDelivery, Run, Task } from "../store/generated/sqlite/client.js";

export interface ClaimQueries {
  run(runId: string): Promise<Run | null>;
  task(taskId: string): Promise<Task | null>;
  /** The task's latest run other than `runId` whose agent started (not aborted or released). */
  previousRun(taskId: string, runId: string): Promise<Run | null>;
  decision(decisionId: string): Promise<Decision | null>;
  delivery(decisionId: string, runId: string): Promise<DecisionDelivery | null>;
  /** Records that the decision was handed to the run (once more). */
  handed(decisionId: string, runId: string, now: Date): Promise<void>;
  /** Records the run's receipt of the decision; true the first time. */
  receipted(decisionId: string, runId: string, now: Date): Promise<boolean>;
}

export function claimQueries(db: Db): ClaimQueries {
  return {
    run: (runId) => db.run.findUnique({ where: { id: runId } }),
    task: (taskId) => db.task.findUnique({ where: { id: taskId } }),
    previousRun: (taskId, runId) =>
      db.run.findFirst({
        where: { taskId, id: { not: runId }, state: { notIn: ["aborted", "released"] } },
        orderBy: { startedAt: "desc" },
      }),
    decision: (decisionId) => db.decision.findUnique({ where: { id: decisionId } }),
    delivery: (decisionId, runId) =>
      db.decisionDelivery.findUnique({ where: { decisionId_runId: { decisionId, runId } } }),
    async handed(decisionId, runId, now) {
      await db.decisionDelivery.upsert({
        where: { decisionId_runId: { decisionId, runId } },
        create: { decisionId, runId, firstAt: now, lastAt: now },
        update: { lastAt: now, count: { increment: 1 } },
      });
    },
    async receipted(decisionId, runId, now) {
      const r = await db.decisionDelivery.updateMany({
        where: { decisionId, runId, receiptAt: null },
        data: { receiptAt: now },
      });
      return r.count === 1;
    },
  };
}
