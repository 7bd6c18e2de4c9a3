/**
 * Operator read API for runs across tasks, newest first: which worker ran
 * which task, how each run ended, its class, recovery and evidence. A run is
 * rendered the same way here and in a task's detail (GET /api/v1/tasks/:id):
 * both use `runJson` (src/views/task-detail.ts).
 */
import type { Database } from "../store/db.js";
import { runJson } from "../views/task-detail.js";
import { select } from "../store/sql.js";
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import { FAILURE_CLASSES } from "../outcomes/classify.js";
import { RUN_STATES } from "../machine/model.js";
import type { ApiQueries } from "./queries.js";

export const RUNS_DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;
const PARAMS = ["repo", "class", "task", "state", "limit"] as const;
const CLASSES = new Set<string>(FAILURE_CLASSES);
const STATES = new Set<string>(RUN_STATES);
const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

export interface RunFilter {
  repo?: string;
  class?: string;
  task?: string;
  state?: string;
  limit: number;
}

/** The query of GET /api/v1/runs, or a 400 that names the parameter and what it takes. */
export function runFilter(query: URLSearchParams): RunFilter {
  for (const name of new Set(query.keys())) {
    if (!(PARAMS as readonly string[]).includes(name))
      throw new HttpError(400, `unknown query parameter ${name}; this list takes ${PARAMS.join(", ")}`);
    if (query.getAll(name).length > 1) throw new HttpError(400, `${name} is given more than once; give it once`);
  }
  const get = (name: (typeof PARAMS)[number]) => query.get(name) ?? undefined;
  const f: RunFilter = { limit: RUNS_DEFAULT_LIMIT };
  const repo = get("repo");
  if (repo !== undefined) {
    if (!REPO.test(repo))
      throw new HttpError(400, `repo must be owner/name, e.g. acme/app (got ${JSON.stringify(repo.slice(0, 100))})`);
    f.repo = repo;
  }
  const cls = get("class");
  if (cls !== undefined) {
    if (!CLASSES.has(cls))
      throw new HttpError(
        400,
        `class must be one of ${FAILURE_CLASSES.join(", ")} (got ${JSON.stringify(cls.slice(0, 100))})`,
      );
    f.class = cls;
  }
  const state = get("state");
  if (state !== undefined) {
    if (!STATES.has(state))
      throw new HttpError(
        400,
        `state must be one of ${RUN_STATES.join(", ")} (got ${JSON.stringify(state.slice(0, 100))})`,
      );
    f.state = state;
  }
  const task = get("task");
  if (task !== undefined) {
    if (task === "") throw new HttpError(400, "task must be a task id (see GET /api/v1/tasks)");
    f.task = task;
  }
  const limit = get("limit");
  if (limit !== undefined) {
    const n = /^[0-9]+$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= MAX_LIMIT))
      throw new HttpError(
        400,
        `limit must be a whole number from 1 to ${MAX_LIMIT} (got ${JSON.stringify(limit.slice(0, 100))})`,
      );
    f.limit = n;
  }
  return f;
}

/**
 * The ids of the runs a filter selects, newest first: the filters
 * and the order in one query, whatever the size of a repository.
 */
async function selectedIds(database: Pick<Database, "raw" | "provider">, f: RunFilter): Promise<string[]> {
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    where.push(sql);
    args.push(value);
  };
  if (f.repo !== undefined) add(`t."repo" = ?`, f.repo);
  if (f.class !== undefined) add(`r."class" = ?`, f.class);
  if (f.state !== undefined) add(`r."state" = ?`, f.state);
  if (f.task !== undefined) add(`r."taskId" = ?`, f.task);
  const sql = [
    `SELECT r."id" FROM "Run" r JOIN "Task" t ON t."id" = r."taskId"`,
    where.length ? `WHERE ${where.join(" AND ")}` : "",
    `ORDER BY r."startedAt" DESC, r."id" DESC LIMIT ${Math.floor(f.limit)}`,
  ].join(" ");
  return (await select(database, sql, args)).map((row) => String(row["id"]));
}

export function runRoutes(
  router: Router,
  deps: {
    queries: Pick<ApiQueries, "taskExists" | "runsByIds" | "taskNames" | "workerNames">;
    database: Pick<Database, "raw" | "provider">;
    adminToken: string;
  },
): void {
  router.add("GET", "/api/v1/runs", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const f = runFilter(query);
    if (f.task !== undefined && !(await deps.queries.taskExists(f.task))) {
      throw new HttpError(404, `no task ${f.task}; list them with GET /api/v1/tasks`);
    }
    const ids = await selectedIds(deps.database, f);
    const runs = await deps.queries.runsByIds(ids);
    const tasks = await deps.queries.taskNames([...new Set(runs.map((r) => r.taskId))]);
    const workerIds = [...new Set(runs.map((r) => r.workerId).filter((w): w is string => w !== null))];
    const workers = await deps.queries.workerNames(workerIds);
    const byId = new Map(runs.map((r) => [r.id, r]));
    const taskOf = new Map(tasks.map((t) => [t.id, t]));
    const nameOf = new Map(workers.map((w) => [w.id, w.name]));
    sendJson(res, 200, {
      runs: ids.flatMap((id) => {
        const r = byId.get(id);
        if (!r) return []; // pruned between the two reads
        const t = taskOf.get(r.taskId);
        const task = t ? { id: t.id, repo: t.repo, issue: t.issue } : { id: r.taskId, repo: null, issue: null };
        return [{ ...runJson(r), task, workerName: r.workerId ? (nameOf.get(r.workerId) ?? null) : null }];
      }),
      limit: f.limit,
    });
  });
}
