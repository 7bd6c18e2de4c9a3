/**
 * What the fleet room reads and writes: the stored fleet issue of each
 * repository, and the rows its snapshot shows (tasks by state, their
 * workers, runs, open questions and blocking comments, what holds the
 * repository, and each queued task's gate).
 */
import type { Db } from "../store/db.js";
import type { Decision, FleetIssue, Pause, Repo, Task } from "../store/generated/sqlite/client.js";
import { waitingForAll } from "../gates/waiting.js";
import { gateQueries } from "../gates/queries.js";
import { EVERYWHERE } from "../gates/repos.js";

export interface FleetQueries {
  /** The stored fleet issue of a repository. */
  storedIssue(repo: string): Promise<FleetIssue | null>;
  /** Stores the repository's fleet issue (with when it was written, when `writtenAt` is given). */
  rememberIssue(i: {
    repo: string;
    installationId: number;
    number: number;
    writtenAt?: Date;
    updatedAt: Date;
  }): Promise<void>;
  /** Clears the stored number when it is `issue`; the number of rows changed. */
  forgetIssue(repo: string, issue: number, at: Date): Promise<number>;
  /** The open (unanswered, not superseded) questions of these tasks, oldest first. */
  openQuestionsOf(taskIds: string[]): Promise<Decision[]>;
  /** The comment effects of these tasks, newest first. */
  commentsOf(
    taskIds: string[],
  ): Promise<Array<{ taskId: string | null; key: string; payload: string; createdAt: Date }>>;
  repoRow(repo: string): Promise<Repo | null>;
  /** The pauses of Orchestra as a whole and of this repository. */
  pausesOver(repo: string): Promise<Pause[]>;
  /** The repository's tasks counted by state. */
  stateCounts(repo: string): Promise<Array<{ state: string; _count: { _all: number } }>>;
  /** The first `take` queued tasks of the repository, in claim order. */
  queuedTasks(repo: string, take: number): Promise<Task[]>;
  /** The first `take` tasks of the repository in a state, by issue number. */
  tasksIn(repo: string, state: string, take: number): Promise<Task[]>;
  workerNames(workerIds: string[]): Promise<Array<{ id: string; name: string }>>;
  runModes(runIds: string[]): Promise<Array<{ id: string; mode: string }>>;
  /** The classified runs of these tasks, latest attempt first. */
  runClasses(taskIds: string[]): Promise<Array<{ taskId: string; class: string | null; recovery: string | null }>>;
  /** Each task's gate (gates/waiting.ts). */
  waitingOf(
    tasks: Parameters<typeof waitingForAll>[1],
    now: Date,
    deliveriesWaiting?: Set<number>,
  ): ReturnType<typeof waitingForAll>;
}

export function fleetQueries(db: Db): FleetQueries {
  const byIssue = { issue: "asc" as const };
  const gates = gateQueries(db);
  return {
    storedIssue: (repo) => db.fleetIssue.findUnique({ where: { repo } }),
    rememberIssue: async ({ repo, installationId, number, writtenAt, updatedAt }) => {
      const written = writtenAt ? { writtenAt } : {};
      await db.fleetIssue.upsert({
        where: { repo },
        create: { repo, installationId, number, ...written, updatedAt },
        update: { installationId, number, ...written, updatedAt },
      });
    },
    forgetIssue: async (repo, issue, at) => {
      const r = await db.fleetIssue.updateMany({
        where: { repo, number: issue },
        data: { number: null, updatedAt: at },
      });
      return r.count;
    },
    openQuestionsOf: (taskIds) =>
      db.decision.findMany({
        where: { taskId: { in: taskIds }, kind: "question", answeredAt: null, supersededAt: null },
        orderBy: { createdAt: "asc" },
      }),
    commentsOf: (taskIds) =>
      db.effect.findMany({
        where: { taskId: { in: taskIds }, kind: "comment" },
        orderBy: { seq: "desc" },
        select: { taskId: true, key: true, payload: true, createdAt: true },
      }),
    repoRow: (repo) => db.repo.findUnique({ where: { id: repo } }),
    pausesOver: (repo) => db.pause.findMany({ where: { scope: { in: [EVERYWHERE, repo] } } }),
    // Read into a constant: given the method's return type as context, Prisma's groupBy types its arguments wrong.
    stateCounts: async (repo) => {
      const rows = await db.task.groupBy({ by: ["state"], where: { repo }, _count: { _all: true } });
      return rows;
    },
    queuedTasks: (repo, take) =>
      db.task.findMany({ where: { repo, state: "queued" }, orderBy: [{ priority: "asc" }, { queuedAt: "asc" }], take }),
    tasksIn: (repo, state, take) => db.task.findMany({ where: { repo, state }, orderBy: byIssue, take }),
    workerNames: (workerIds) =>
      db.worker.findMany({ where: { id: { in: workerIds } }, select: { id: true, name: true } }),
    runModes: (runIds) => db.run.findMany({ where: { id: { in: runIds } }, select: { id: true, mode: true } }),
    runClasses: (taskIds) =>
      db.run.findMany({
        where: { taskId: { in: taskIds }, class: { not: null } },
        orderBy: { attempt: "desc" },
        select: { taskId: true, class: true, recovery: true },
      }),
    waitingOf: (tasks, now, deliveriesWaiting) => waitingForAll(gates, tasks, now, deliveriesWaiting),
  };
}
