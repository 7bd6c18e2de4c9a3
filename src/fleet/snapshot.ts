/**
 * Reads what a repository's fleet issue shows, when the fleet-issue effect
 * is performed (never when it was recorded): its open tasks by state, the
 * queue in claim order with each task's gate (the same `waitingFor` the
 * operator API answers), the workers holding leases, why blocked tasks are
 * blocked and what failed tasks last failed of. A few queries per section,
 * each bounded to the rows the issue shows.
 */
import type { Decision, Task } from "../store/generated/sqlite/client.js";
import { EVERYWHERE } from "../gates/repos.js";
import { parseJson } from "../apply/views.js";
import { FLEET_SECTION_ROWS, type FleetSnapshot, type Section } from "./render.js";
import type { FleetQueries } from "./queries.js";

/** Comments Orchestra posts when it blocks a task: the first line says why. */
const BLOCKING_COMMENTS = ["question:", "escalation:", "budget:", "blocked-half-done:", "rewritten:", "pr-closed:"];

const row = (t: Task) => ({ issue: t.issue, title: t.title });

function section<T>(total: number | undefined, tasks: T[]): Section<T> {
  return { total: Math.max(total ?? 0, tasks.length), tasks };
}

/** The first line of a comment Orchestra posted, without the sentence every escalation opens with. */
function firstLine(body: string): string {
  return (body.split("\n")[0] ?? "").replace(/^Orchestra needs a human for this issue\.\s*/, "");
}

/** The open question of each task that has one (the latest), by task id. */
export async function openQuestions(
  q: Pick<FleetQueries, "openQuestionsOf">,
  taskIds: string[],
): Promise<Map<string, Decision>> {
  if (taskIds.length === 0) return new Map();
  const questions = await q.openQuestionsOf(taskIds);
  return new Map(questions.map((q) => [q.taskId, q]));
}

/**
 * Why each blocked task is blocked: its open question, else the comment that
 * blocked it (since it was last queued), else its diagnostic. `questions` are
 * the tasks' open questions when the caller has read them already.
 */
export async function blockedWhy(
  q: Pick<FleetQueries, "openQuestionsOf" | "commentsOf">,
  tasks: Task[],
  questions?: Map<string, Decision>,
): Promise<Map<string, string>> {
  const ids = tasks.map((t) => t.id);
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const [open, comments] = await Promise.all([questions ?? openQuestions(q, ids), q.commentsOf(ids)]);
  for (const [taskId, q] of open) out.set(taskId, `question: “${q.body}”`);
  const since = new Map(tasks.map((t) => [t.id, t.queuedAt.getTime()]));
  for (const c of comments) {
    if (
      !c.taskId ||
      out.has(c.taskId) ||
      c.createdAt.getTime() < (since.get(c.taskId) ?? 0) ||
      !BLOCKING_COMMENTS.some((p) => c.key.startsWith(p))
    )
      continue;
    const body = parseJson<{ body?: string }>(c.payload)?.body;
    if (body) out.set(c.taskId, firstLine(body));
  }
  for (const t of tasks)
    if (!out.has(t.id))
      out.set(t.id, t.diagnostic ?? "stopped (`orchestra hold`, or a label set by hand); see the issue");
  return out;
}

/** What holds every claim in the repository: an operator's pause, `paused: true`, or an invalid configuration. */
async function heldBy(q: Pick<FleetQueries, "repoRow" | "pausesOver">, repo: string): Promise<string | null> {
  const [r, pauses] = await Promise.all([q.repoRow(repo), q.pausesOver(repo)]);
  const pause = pauses.find((p) => p.scope === EVERYWHERE) ?? pauses[0];
  if (pause)
    return `${pause.scope === EVERYWHERE ? "Orchestra is" : `${repo} is`} paused by ${pause.by}: ${pause.reason}`;
  if (r?.configProblems)
    return `\`.github/orchestra.yml\` is invalid: ${(parseJson<string[]>(r.configProblems) ?? []).join("; ")}`;
  if (r?.paused) return `${repo} is paused (\`paused: true\` in \`.github/orchestra.yml\`)`;
  return null;
}

export async function readFleet(
  q: FleetQueries,
  repo: string,
  now: Date,
  deliveriesWaiting?: Set<number>,
): Promise<FleetSnapshot> {
  const take = FLEET_SECTION_ROWS;
  const [counts, queued, claimed, review, blocked, failed, held] = await Promise.all([
    q.stateCounts(repo),
    q.queuedTasks(repo, take),
    q.tasksIn(repo, "claimed", take),
    q.tasksIn(repo, "review", take),
    q.tasksIn(repo, "blocked", take),
    q.tasksIn(repo, "failed", take),
    heldBy(q, repo),
  ]);
  const total = new Map(counts.map((c) => [c.state, c._count._all]));
  const workerIds = claimed.map((t) => t.workerId).filter((x): x is string => x !== null);
  const runIds = claimed.map((t) => t.runId).filter((x): x is string => x !== null);
  const [waiting, workers, runs, why, classes] = await Promise.all([
    q.waitingOf(queued, now, deliveriesWaiting),
    workerIds.length ? q.workerNames(workerIds) : [],
    runIds.length ? q.runModes(runIds) : [],
    blockedWhy(q, blocked),
    failed.length ? q.runClasses(failed.map((t) => t.id)) : [],
  ]);
  const workerName = new Map(workers.map((w) => [w.id, w.name]));
  const modeOf = new Map(runs.map((r) => [r.id, r.mode]));
  const lastClass = new Map<string, { class: string | null; recovery: string | null }>();
  for (const c of classes) if (!lastClass.has(c.taskId)) lastClass.set(c.taskId, c);
  return {
    repo,
    held,
    queued: section(
      total.get("queued"),
      queued.map((t) => ({ ...row(t), attempt: t.attempt, waitingFor: waiting.get(t) ?? null })),
    ),
    claimed: section(
      total.get("claimed"),
      claimed.map((t) => ({
        ...row(t),
        attempt: t.attempt,
        worker: t.workerId ? (workerName.get(t.workerId) ?? t.workerId) : null,
        mode: (t.runId && modeOf.get(t.runId)) || "worker",
        leaseExpiresAt: t.leaseEpoch ? t.leaseExpiresAt : null,
      })),
    ),
    review: section(
      total.get("review"),
      review.map((t) => ({ ...row(t), prNumber: t.prNumber })),
    ),
    blocked: section(
      total.get("blocked"),
      blocked.map((t) => ({ ...row(t), why: why.get(t.id) ?? "" })),
    ),
    failed: section(
      total.get("failed"),
      failed.map((t) => ({
        ...row(t),
        attempt: t.attempt,
        klass: lastClass.get(t.id)?.class ?? null,
        recovery: lastClass.get(t.id)?.recovery ?? null,
      })),
    ),
  };
}
