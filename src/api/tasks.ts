/** Operator read API for tasks: their runs, decisions, effects and what they cost (admin token). */
import type { Db } from "../store/db.js";
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import { TASK_STATES } from "../machine/model.js";
import type { Outbox } from "../effects/outbox.js";
import type { Ledger } from "../cost/ledger.js";
import { waitingForAll } from "../gates/waiting.js";
import { UNRECEIPTED_FLAG } from "../claims/decisions.js";
import { runView } from "./runs.js";

const STATES = new Set<string>(TASK_STATES);

const parse = (text: string | null): unknown => (text === null ? null : (JSON.parse(text) as unknown));

export function taskRoutes(router: Router, deps: { db: Db; outbox: Outbox; ledger: Ledger; adminToken: string; clock: { now(): Date }; deliveriesWaiting?: () => Promise<Set<number>> }): void {
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
    const waiting = await waitingForAll(db, tasks, deps.clock.now(), await deps.deliveriesWaiting?.());
    sendJson(res, 200, {
      tasks: tasks.map((t) => {
        const w = waiting.get(t);
        const lease = t.leaseEpoch ? { runId: t.runId, workerId: t.workerId, leaseExpiresAt: t.leaseExpiresAt } : null;
        return { id: t.id, repo: t.repo, issue: t.issue, state: t.state, attempt: t.attempt, prNumber: t.prNumber, diagnostic: t.diagnostic, lease, ...(w ? { waitingFor: w } : {}) };
      }),
    });
  });

  router.add("GET", "/api/v1/tasks/:id", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const task = await db.task.findUnique({ where: { id: params["id"]! } });
    if (!task) throw new HttpError(404, `no task ${params["id"]}`);
    const [runs, decisions, receipt, effects, calls, waiting, handed] = await Promise.all([
      db.run.findMany({ where: { taskId: task.id }, orderBy: { attempt: "asc" } }),
      db.decision.findMany({ where: { taskId: task.id }, orderBy: { createdAt: "asc" } }),
      db.completionReceipt.findUnique({ where: { taskId: task.id } }),
      deps.outbox.list({ taskId: task.id, limit: 1000 }),
      deps.ledger.of(task.id),
      deps.deliveriesWaiting ? deps.deliveriesWaiting().then((w) => waitingForAll(db, [task], deps.clock.now(), w)) : waitingForAll(db, [task], deps.clock.now()),
      db.decisionDelivery.findMany({ where: { decisionId: { in: (await db.decision.findMany({ where: { taskId: task.id }, select: { id: true } })).map((d) => d.id) } } }),
    ]);
    const waitingFor = waiting.get(task) ?? null;
    const now = deps.clock.now().getTime();
    const started = runs.filter((r) => r.state !== "aborted");
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
        lease: task.leaseEpoch ? { runId: task.runId, leaseEpoch: task.leaseEpoch, leaseExpiresAt: task.leaseExpiresAt, workerId: task.workerId } : null,
        label: task.label,
        diagnostic: task.diagnostic,
        backoffUntil: task.backoffUntil,
        blockedBy: parse(task.blockedBy),
        ...(waitingFor ? { waitingFor } : {}),
        queuedAt: task.queuedAt,
        version: task.version,
      },
      runs: runs.map(runView),
      decisions: decisions.map((d) => {
        const to = handed.filter((h) => h.decisionId === d.id);
        return {
          id: d.id,
          kind: d.kind,
          subject: d.subject,
          body: d.body,
          author: d.author,
          createdAt: d.createdAt,
          ...(d.headSha ? { headSha: d.headSha, stale: task.headSha !== null && task.headSha !== d.headSha } : {}),
          ...(d.supersededAt ? { supersededAt: d.supersededAt } : {}),
          ...(d.kind === "question" ? { condition: d.condition, expiresAt: d.expiresAt, answeredAt: d.answeredAt } : {}),
          deliveries: to.map((h) => ({ runId: h.runId, count: h.count, firstAt: h.firstAt, receiptAt: h.receiptAt })),
          // Handed out again and again and never receipted: the agent may not be reading it.
          unreceipted: to.some((h) => h.receiptAt === null && h.count >= UNRECEIPTED_FLAG),
        };
      }),
      effects,
      cost: {
        githubCalls: calls.githubReads + calls.githubWrites,
        githubReads: calls.githubReads,
        githubWrites: calls.githubWrites,
        attempts: task.attempt,
        runs: started.length,
        wallSeconds: Math.round(started.reduce((sum, r) => sum + ((r.endedAt?.getTime() ?? now) - r.startedAt.getTime()), 0) / 1000),
        inputTokens: task.inputTokens,
        outputTokens: task.outputTokens,
        costUsd: Math.round(task.costUsd * 1e6) / 1e6,
      },
      receipt,
    });
  });
}
