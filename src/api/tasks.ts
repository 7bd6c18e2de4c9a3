/** Operator read API for tasks: their runs, decisions, effects and what they cost (admin token). */
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import { TASK_STATES } from "../machine/model.js";
import type { Outbox } from "../effects/outbox.js";
import type { Ledger } from "../cost/ledger.js";
import { waitingForAll } from "../gates/waiting.js";
import { taskDetail, type TaskReadDeps } from "../views/task-detail.js";
import type { ApiQueries } from "./queries.js";

const STATES = new Set<string>(TASK_STATES);

export function taskRoutes(
  router: Router,
  deps: {
    queries: Pick<ApiQueries, "taskList" | "waitingFacts">;
    views: TaskReadDeps["views"];
    outbox: Outbox;
    ledger: Ledger;
    adminToken: string;
    clock: { now(): Date };
    deliveriesWaiting?: () => Promise<Set<number>>;
  },
): void {
  const { queries } = deps;

  router.add("GET", "/api/v1/tasks", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const state = query.get("state");
    const repo = query.get("repo");
    if (state && !STATES.has(state)) throw new HttpError(400, `state must be one of ${[...STATES].join(", ")}`);
    const tasks = await queries.taskList(state ?? undefined, repo ?? undefined);
    const waiting = await waitingForAll(queries, tasks, deps.clock.now(), await deps.deliveriesWaiting?.());
    sendJson(res, 200, {
      tasks: tasks.map((t) => {
        const w = waiting.get(t);
        const lease = t.leaseEpoch ? { runId: t.runId, workerId: t.workerId, leaseExpiresAt: t.leaseExpiresAt } : null;
        return {
          id: t.id,
          repo: t.repo,
          issue: t.issue,
          state: t.state,
          attempt: t.attempt,
          prNumber: t.prNumber,
          diagnostic: t.diagnostic,
          lease,
          ...(w ? { waitingFor: w } : {}),
        };
      }),
    });
  });

  router.add("GET", "/api/v1/tasks/:id", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const detail = await taskDetail(deps, params["id"]!);
    if (!detail) throw new HttpError(404, `no task ${params["id"]}`);
    sendJson(res, 200, detail);
  });
}
