/**
 * What the operator's views read: the fleet overview (views/fleet.ts), one
 * task with everything behind it (views/task-detail.ts), and the runs per
 * hour (views/activity.ts). Blocked tasks' questions and comments are read
 * as the fleet room reads them.
 */
import type { Db } from "../store/db.js";
import type { CompletionReceipt, Decision, DecisionDelivery, Run, Task } from "../store/generated/sqlite/client.js";
import { waitingForAll } from "../gates/waiting.js";
import { gateQueries } from "../gates/queries.js";
import { fleetQueries, type FleetQueries } from "../fleet/queries.js";

/** What the queue shows of a task and what its gates are decided on (not its body). */
const QUEUED_COLUMNS = {
  id: true,
  repo: true,
  issue: true,
  title: true,
  attempt: true,
  queuedAt: true,
  state: true,
  installationId: true,
  backoffUntil: true,
  blockedBy: true,
  blockersAt: true,
  diagnostic: true,
} as const;

export type QueuedRow = Pick<Task, keyof typeof QUEUED_COLUMNS>;

export interface ViewsQueries extends Pick<FleetQueries, "openQuestionsOf" | "commentsOf"> {
  /** Every task counted by state. */
  stateCounts(): Promise<Array<{ state: string; _count: { _all: number } }>>;
  /** Queued tasks counted by repository. */
  queuedByRepo(): Promise<Array<{ repo: string; _count: { _all: number } }>>;
  /** The first `take` queued tasks over all repositories, in claim order. */
  queuedInClaimOrder(take: number): Promise<QueuedRow[]>;
  /** The first `take` claimed tasks, the lease that expires first first. */
  claimedByLease(take: number): Promise<Task[]>;
  /** The `take` tasks in a state changed last, latest first. */
  latestIn(state: "review" | "done" | "blocked" | "failed", take: number): Promise<Task[]>;
  /** The runs of these tasks, lowest attempt first. */
  runsOfTasks(taskIds: string[]): Promise<Run[]>;
  workerNames(workerIds: string[]): Promise<Array<{ id: string; name: string }>>;
  task(id: string): Promise<Task | null>;
  /** The task's runs, lowest attempt first. */
  runsOf(taskId: string): Promise<Run[]>;
  /** The task's decisions, oldest first. */
  decisionsOf(taskId: string): Promise<Decision[]>;
  receiptOf(taskId: string): Promise<CompletionReceipt | null>;
  /** Which runs these decisions were handed to. */
  deliveriesOf(decisionIds: string[]): Promise<DecisionDelivery[]>;
  /** Runs that ended at or after `since`, with their class. */
  runsEndedSince(since: Date): Promise<Array<{ endedAt: Date | null; class: string | null }>>;
  /** Each task's gate (gates/waiting.ts). */
  waitingOf(
    tasks: Parameters<typeof waitingForAll>[1],
    now: Date,
    deliveriesWaiting?: Set<number>,
  ): ReturnType<typeof waitingForAll>;
}

export function viewsQueries(db: Db): ViewsQueries {
  const fleet = fleetQueries(db);
  const gates = gateQueries(db);
  return {
    openQuestionsOf: (taskIds) => fleet.openQuestionsOf(taskIds),
    commentsOf: (taskIds) => fleet.commentsOf(taskIds),
    // Read into a constant: given the method's return type as context, Prisma's groupBy types its arguments wrong.
    stateCounts: async () => {
      const rows = await db.task.groupBy({ by: ["state"], _count: { _all: true } });
      return rows;
    },
    queuedByRepo: async () => {
      const rows = await db.task.groupBy({ by: ["repo"], where: { state: "queued" }, _count: { _all: true } });
      return rows;
    },
    queuedInClaimOrder: (take) =>
      db.task.findMany({
        where: { state: "queued" },
        orderBy: [{ priority: "asc" }, { queuedAt: "asc" }],
        take,
        select: QUEUED_COLUMNS,
      }),
    claimedByLease: (take) =>
      db.task.findMany({ where: { state: "claimed" }, orderBy: { leaseExpiresAt: "asc" }, take }),
    latestIn: (state, take) => db.task.findMany({ where: { state }, orderBy: { updatedAt: "desc" }, take }),
    runsOfTasks: (taskIds) => db.run.findMany({ where: { taskId: { in: taskIds } }, orderBy: { attempt: "asc" } }),
    workerNames: (workerIds) =>
      db.worker.findMany({ where: { id: { in: workerIds } }, select: { id: true, name: true } }),
    task: (id) => db.task.findUnique({ where: { id } }),
    runsOf: (taskId) => db.run.findMany({ where: { taskId }, orderBy: { attempt: "asc" } }),
    decisionsOf: (taskId) => db.decision.findMany({ where: { taskId }, orderBy: { createdAt: "asc" } }),
    receiptOf: (taskId) => db.completionReceipt.findUnique({ where: { taskId } }),
    deliveriesOf: (decisionIds) => db.decisionDelivery.findMany({ where: { decisionId: { in: decisionIds } } }),
    runsEndedSince: (since) =>
      db.run.findMany({ where: { endedAt: { gte: since } }, select: { endedAt: true, class: true } }),
    waitingOf: (tasks, now, deliveriesWaiting) => waitingForAll(gates, tasks, now, deliveriesWaiting),
  };
}
