/**
 * The fleet at a glance, as the dashboard's overview shows it: the queue of
 * each repository in claim order with why each task waits, the live leases
 * with their time left, the pull requests in review and the tasks done
 * lately, what is blocked and on what, what failed and as which class, and
 * what was parked (deliveries and effects).
 */
import type { Run, Task } from "../store/generated/sqlite/client.js";
import type { Inbox } from "../inbox/store.js";
import type { Outbox } from "../effects/outbox.js";
import type { DeliverySummary } from "../inbox/view.js";
import type { EffectSummary } from "../effects/outbox.js";
import type { WaitingFor } from "../gates/waiting.js";
import { parseJsonText } from "./task-detail.js";
import { blockedWhy, openQuestions } from "../fleet/snapshot.js";
import type { ViewsQueries } from "./queries.js";

export interface FleetDeps {
  views: Pick<
    ViewsQueries,
    | "stateCounts"
    | "queuedByRepo"
    | "queuedInClaimOrder"
    | "claimedByLease"
    | "latestIn"
    | "runsOfTasks"
    | "workerNames"
    | "openQuestionsOf"
    | "commentsOf"
    | "waitingOf"
  >;
  inbox: Pick<Inbox, "list">;
  outbox: Outbox;
  clock: { now(): Date };
  deliveriesWaiting?: () => Promise<Set<number>>;
}

interface TaskRef {
  id: string;
  repo: string;
  issue: number;
  title: string;
}

export interface QueuedTask extends TaskRef {
  attempt: number;
  queuedAt: Date;
  waitingFor: WaitingFor | null;
}

export interface LiveLease extends TaskRef {
  runId: string | null;
  workerId: string | null;
  /** The registered worker's name (null: a dispatched run, or a worker since removed). */
  workerName: string | null;
  leaseExpiresAt: Date | null;
  secondsLeft: number;
  step: string | null;
}

export interface BlockedTask extends TaskRef {
  /** The open question of the agent, if that is what blocks it. */
  question: { body: string; author: string; askedAt: Date } | null;
  /** The last run's class, when a run's outcome escalated it. */
  class: string | null;
  /** Why it is blocked, as the fleet issue says it: the question, the comment that blocked it, or its diagnostic. */
  why: string;
}

/** A task in review or done, with its pull request and when it last changed. */
export interface SubmittedTask extends TaskRef {
  prNumber: number | null;
  attempt: number;
  updatedAt: Date;
}

export interface FailedTask extends TaskRef {
  class: string | null;
  recovery: string | null;
  why: string | null;
  endedAt: Date | null;
}

export interface FleetOverview {
  at: Date;
  counts: Record<string, number>;
  queue: Array<{ repo: string; tasks: QueuedTask[]; more: number }>;
  leases: LiveLease[];
  review: SubmittedTask[];
  /** The tasks done most lately (DONE_LISTED). */
  done: SubmittedTask[];
  blocked: BlockedTask[];
  failed: FailedTask[];
  parked: { deliveries: DeliverySummary[]; effects: EffectSummary[] };
}

/** How many queued tasks each repository shows; the rest are counted. */
export const QUEUE_SHOWN = 25;
/** Queued tasks read, in claim order, to fill each repository's shown ones. */
export const QUEUE_READ = 1000;
/**
 * How many tasks each of the leases, blocked and failed lists
 * shows (the most urgent or recent first); the rest are counted.
 */
export const LISTED = 100;
/** How many of the tasks done most lately the overview shows. */
export const DONE_LISTED = 10;

const ref = (t: Pick<Task, "id" | "repo" | "issue" | "title">): TaskRef => ({
  id: t.id,
  repo: t.repo,
  issue: t.issue,
  title: t.title,
});

const submitted = (t: Task): SubmittedTask => ({
  ...ref(t),
  prNumber: t.prNumber,
  attempt: t.attempt,
  updatedAt: t.updatedAt,
});

/** `evidence.why` of a run, the one line every class's evidence carries. */
export function whyOf(run: Pick<Run, "evidence"> | undefined): string | null {
  if (!run?.evidence) return null;
  try {
    const why = (parseJsonText(run.evidence) as Record<string, unknown> | null)?.["why"];
    return typeof why === "string" ? why : null;
  } catch {
    return null;
  }
}

/** The last run of each task (highest attempt), by task id. */
async function lastRuns(q: Pick<ViewsQueries, "runsOfTasks">, taskIds: string[]): Promise<Map<string, Run>> {
  if (taskIds.length === 0) return new Map();
  const runs = await q.runsOfTasks(taskIds);
  return new Map(runs.map((r) => [r.taskId, r]));
}

export async function fleetOverview(deps: FleetDeps): Promise<FleetOverview> {
  const { views } = deps;
  const now = deps.clock.now();
  const [groups, queuedIn, queued, claimed, review, done, blocked, failed, deliveries, effects, waitingSet] =
    await Promise.all([
      views.stateCounts(),
      views.queuedByRepo(),
      views.queuedInClaimOrder(QUEUE_READ),
      views.claimedByLease(LISTED),
      views.latestIn("review", LISTED),
      views.latestIn("done", DONE_LISTED),
      views.latestIn("blocked", LISTED),
      views.latestIn("failed", LISTED),
      deps.inbox.list({ state: "parked", limit: 50 }),
      deps.outbox.list({ state: "parked", limit: 50 }),
      deps.deliveriesWaiting?.(),
    ]);
  // Only the tasks shown are asked what they wait for.
  const shownCount = new Map<string, number>();
  const shown = queued.filter((t) => {
    const n = shownCount.get(t.repo) ?? 0;
    shownCount.set(t.repo, n + 1);
    return n < QUEUE_SHOWN;
  });
  const waiting = await views.waitingOf(shown, now, waitingSet);
  const runs = await lastRuns(
    views,
    [...claimed, ...blocked, ...failed].map((t) => t.id),
  );
  const questionOf = await openQuestions(
    views,
    blocked.map((t) => t.id),
  );
  const blockedFor = await blockedWhy(views, blocked, questionOf);
  const workerIds = [...new Set(claimed.map((t) => t.workerId).filter((w): w is string => w !== null))];
  const workers = workerIds.length ? await views.workerNames(workerIds) : [];
  const nameOf = new Map(workers.map((w) => [w.id, w.name]));

  // Every repository with queued work, with its count: the tasks read above
  // are the first QUEUE_READ in claim order over all repositories, so beyond
  // that a repository's count is not the number read, and a repository whose
  // tasks all come later has none read (it is listed with its count).
  const byRepo = new Map<string, QueuedTask[]>(queuedIn.map((g) => [g.repo, []]));
  const countOf = new Map(queuedIn.map((g) => [g.repo, g._count._all]));
  for (const t of shown) {
    const list = byRepo.get(t.repo) ?? [];
    list.push({ ...ref(t), attempt: t.attempt, queuedAt: t.queuedAt, waitingFor: waiting.get(t) ?? null });
    byRepo.set(t.repo, list);
  }
  return {
    at: now,
    counts: Object.fromEntries(groups.map((g) => [g.state, g._count._all])),
    queue: [...byRepo.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([repo, tasks]) => {
        return { repo, tasks, more: Math.max(0, (countOf.get(repo) ?? 0) - tasks.length) };
      }),
    leases: claimed
      .filter((t) => t.leaseEpoch !== null)
      .map((t) => {
        const run = runs.get(t.id);
        const progress = run?.progress ? (parseJsonText(run.progress) as { step?: unknown } | null) : null;
        return {
          ...ref(t),
          runId: t.runId,
          workerId: t.workerId,
          workerName: t.workerId ? (nameOf.get(t.workerId) ?? null) : null,
          leaseExpiresAt: t.leaseExpiresAt,
          secondsLeft: t.leaseExpiresAt ? Math.round((t.leaseExpiresAt.getTime() - now.getTime()) / 1000) : 0,
          step: typeof progress?.step === "string" ? progress.step : null,
        };
      }),
    review: review.map(submitted),
    done: done.map(submitted),
    blocked: blocked.map((t) => {
      const q = questionOf.get(t.id);
      const run = runs.get(t.id);
      return {
        ...ref(t),
        question: q ? { body: q.body, author: q.author, askedAt: q.createdAt } : null,
        class: run?.class ?? null,
        why: blockedFor.get(t.id) ?? t.diagnostic ?? "blocked",
      };
    }),
    failed: failed.map((t) => {
      const run = runs.get(t.id);
      return {
        ...ref(t),
        class: run?.class ?? null,
        recovery: run?.recovery ?? null,
        why: whyOf(run),
        endedAt: run?.endedAt ?? null,
      };
    }),
    parked: { deliveries, effects },
  };
}
