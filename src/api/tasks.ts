/** Operator read API for tasks and their runs (admin token). */
import type { Db } from "../store/db.js";
import { parseRing } from "../store/error-ring.js";
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";

const STATES = new Set(["queued", "claimed", "review", "done", "blocked", "failed", "cancelled"]);

const parse = (text: string | null): unknown => (text === null ? null : (JSON.parse(text) as unknown));

export function taskRoutes(router: Router, deps: { db: Db; adminToken: string }): void {
  const { db } = deps;

  router.add("GET", "/api/v1/tasks", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const state = query.get("state");
    const repo = query.get("repo");
    if (state && !STATES.has(state)) throw new HttpError(400, `state must be one of ${[...STATES].join(", ")}`);
    const tasks = await db.task.findMany({
      where: { ...(state ? { state } : {}), ...(repo ? { repo } : {}) },
      orderBy: [{ priority: "asc" }, { queuedAt: "asc" }],
      take: 500,
    });
    sendJson(res, 200, {
      tasks: tasks.map((t) => ({ id: t.id, repo: t.repo, issue: t.issue, state: t.state, attempt: t.attempt, prNumber: t.prNumber, diagnostic: t.diagnostic })),
    });
  });

  router.add("GET", "/api/v1/tasks/:id", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const task = await db.task.findUnique({ where: { id: params["id"]! } });
    if (!task) throw new HttpError(404, `no task ${params["id"]}`);
    const [runs, decisions, receipt] = await Promise.all([
      db.run.findMany({ where: { taskId: task.id }, orderBy: { attempt: "asc" } }),
      db.decision.findMany({ where: { taskId: task.id }, orderBy: { createdAt: "asc" } }),
      db.completionReceipt.findUnique({ where: { taskId: task.id } }),
    ]);
    sendJson(res, 200, {
      task: {
        id: task.id,
        repo: task.repo,
        issue: task.issue,
        title: task.title,
        state: task.state,
        attempt: task.attempt,
        branch: task.branch,
        prNumber: task.prNumber,
        continuation: parse(task.continuation),
        lease: task.runId ? { runId: task.runId, leaseEpoch: task.leaseEpoch, leaseExpiresAt: task.leaseExpiresAt, workerId: task.workerId } : null,
        label: task.label,
        labelSynced: task.labelSynced,
        diagnostic: task.diagnostic,
        backoffUntil: task.backoffUntil,
        queuedAt: task.queuedAt,
      },
      runs: runs.map((r) => ({
        id: r.id,
        attempt: r.attempt,
        state: r.state,
        mode: r.mode,
        workerId: r.workerId,
        leaseEpoch: r.leaseEpoch,
        leaseExpiresAt: r.leaseExpiresAt,
        startedAt: r.startedAt,
        endedAt: r.endedAt,
        endReason: r.endReason,
        prNumber: r.prNumber,
        class: r.class,
        recovery: r.recovery,
        evidence: parse(r.evidence),
        errors: parseRing(r.errors),
      })),
      decisions: decisions.map((d) => ({ id: d.id, kind: d.kind, subject: d.subject, body: d.body, author: d.author, createdAt: d.createdAt, deliveredRunId: d.deliveredRunId, receiptAt: d.receiptAt })),
      receipt,
    });
  });
}
