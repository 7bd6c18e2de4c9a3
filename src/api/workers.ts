/**
 * The worker API under /api/v1: registration (admin), claim, heartbeat,
 * decision receipt, exit and decision request. Bodies are validated with zod
 * (400 lists the issues); mutations honour Idempotency-Key by returning the
 * first answer again.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { Db } from "../store/db.js";
import { bearer, HttpError, requireAdmin, type Router } from "../http/router.js";
import { jsonBody } from "../http/body.js";
import { sendJson } from "../http/respond.js";
import type { Worker, Workers } from "../workers/workers.js";
import type { Claims } from "../claims/claims.js";
import type { Leases } from "../claims/leases.js";
import type { Exits } from "../exits/exit.js";
import { Busy } from "../apply/tasks.js";
import { INFRA_DEATHS } from "../machine/events.js";
import { parseCondition } from "../human/conditions.js";

const repoName = z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "must be owner/repo");
const epoch = z.string().min(1);
/** The run's model usage so far (a running total: the latest report wins). */
const usage = z
  .object({
    inputTokens: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
    costUsd: z.number().min(0).max(1_000_000),
  })
  .strict();

export const schemas = {
  register: z.object({ name: z.string().min(1).max(100), repos: z.array(repoName).max(1000).optional() }).strict(),
  claim: z.object({}).strict(),
  heartbeat: z
    .object({
      leaseEpoch: epoch,
      usage: usage.optional(),
      /** What changed since the last heartbeat; unchanged progress for limits.stallSeconds stops the lease. */
      progress: z
        .object({
          headSha: z.string().regex(/^[0-9a-f]{7,40}$/, "must be a commit sha").optional(),
          worktree: z.string().max(200).optional(),
          step: z.string().max(200).optional(),
        })
        .strict()
        .optional(),
    })
    .strict(),
  receipt: z.object({ leaseEpoch: epoch }).strict(),
  exit: z
    .object({
      leaseEpoch: epoch,
      exitCode: z.number().int(),
      branch: z.string().min(1).optional(),
      headSha: z.string().regex(/^[0-9a-f]{7,40}$/, "must be a commit sha").optional(),
      testsPassed: z.boolean().optional(),
      dirty: z.boolean().optional(),
      turnCapHit: z.boolean().optional(),
      handoff: z.boolean().optional(),
      lastToolCalls: z.array(z.string()).max(100).optional(),
      question: z.string().max(10_000).optional(),
      /** The run died of a run-level infrastructure failure, not the agent's doing. */
      infra: z.enum(INFRA_DEATHS).optional(),
      usage: usage.optional(),
      sessionRef: z.string().max(1000).optional(),
      harness: z.string().max(200).optional(),
      model: z.string().max(200).optional(),
    })
    .strict(),
  decisionRequest: z
    .object({
      leaseEpoch: epoch,
      question: z.string().min(1).max(10_000),
      kind: z
        .string()
        .regex(/^(question|verify:[A-Za-z0-9][A-Za-z0-9._-]{0,63})$/, "must be question or verify:<phase-id>")
        .optional(),
      blocks: z.enum(["run", "nothing"]).optional(),
      condition: z
        .string()
        .refine((c) => parseCondition(c) !== null, "must be pr-merged:<owner/repo#n or pull request URL>, issue-closed:<n> or npm-version:<package@range>")
        .optional(),
    })
    .strict(),
};

export interface WorkerApiDeps {
  db: Db;
  adminToken: string;
  workers: Workers;
  claims: Claims;
  leases: Leases;
  exits: Exits;
}

async function authWorker(req: IncomingMessage, workers: Workers): Promise<Worker> {
  const token = bearer(req);
  if (!token) throw new HttpError(401, "missing bearer token: send Authorization: Bearer <worker token>");
  const worker = await workers.byToken(token);
  if (!worker) throw new HttpError(401, "unknown worker token");
  return worker;
}

/**
 * Runs a mutation once per Idempotency-Key (per worker and route): a retry
 * gets the stored first answer. Server errors are not stored, so they can be
 * retried for real.
 */
async function idempotent(db: Db, req: IncomingMessage, res: ServerResponse, scope: string, run: () => Promise<{ status: number; body?: unknown }>): Promise<void> {
  const header = req.headers["idempotency-key"];
  const key = Array.isArray(header) ? header[0] : header;
  const id = key ? createHash("sha256").update(`${scope}\n${req.method} ${req.url}\n${key}`).digest("hex") : null;
  if (id) {
    const stored = await db.idempotentResponse.findUnique({ where: { key: id } });
    if (stored) {
      replay(res, stored.status, stored.body);
      return;
    }
  }
  let answer: { status: number; body?: unknown };
  try {
    answer = await run();
  } catch (err) {
    if (err instanceof HttpError) answer = { status: err.status, body: { error: err.message, ...err.extra } };
    else if (err instanceof Busy) answer = { status: 409, body: { error: err.message, reason: "busy", retryable: true } };
    else throw err;
  }
  const text = answer.body === undefined ? "" : JSON.stringify(answer.body);
  // Server errors and a busy task are transient: a retry with the same key runs again.
  const transient = answer.status >= 500 || (answer.body as { retryable?: boolean } | undefined)?.retryable === true;
  if (id && !transient) {
    await db.idempotentResponse.create({ data: { key: id, status: answer.status, body: text, createdAt: new Date() } }).catch((err: { code?: string }) => {
      if (err.code !== "P2002") throw err;
    });
  }
  replay(res, answer.status, text);
}

function replay(res: ServerResponse, status: number, text: string): void {
  if (text === "") {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) }).end(text);
}

export function workerRoutes(router: Router, deps: WorkerApiDeps): void {
  const { db, workers } = deps;

  router.add("POST", "/api/v1/workers", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    const body = await jsonBody(req, schemas.register);
    await idempotent(db, req, res, "admin", async () => ({ status: 201, body: await workers.register(body.name, body.repos) }));
  });

  // A restarted worker re-attaches: its live runs, to go on heartbeating instead of losing them.
  router.add("GET", "/api/v1/workers/me/runs", async ({ req, res }) => {
    const worker = await authWorker(req, workers);
    const runs = await db.run.findMany({ where: { workerId: worker.id, state: "live" }, orderBy: { startedAt: "asc" } });
    const tasks = await db.task.findMany({ where: { id: { in: runs.map((r) => r.taskId) } } });
    const byId = new Map(tasks.map((t) => [t.id, t]));
    // Live on the task too: a run whose task moved on is not the worker's any more.
    const live = runs.filter((r) => byId.get(r.taskId)?.runId === r.id && byId.get(r.taskId)?.leaseEpoch === r.leaseEpoch);
    const body = {
      runs: live.map((r) => {
        const t = byId.get(r.taskId)!;
        return {
          id: r.id,
          task: { id: t.id, repo: t.repo, issue: t.issue, title: t.title },
          attempt: r.attempt,
          leaseEpoch: r.leaseEpoch,
          leaseExpiresAt: (t.leaseExpiresAt ?? r.leaseExpiresAt).toISOString(),
          branch: r.branch,
          continuation: r.continuation === null ? null : (JSON.parse(r.continuation) as unknown),
        };
      }),
    };
    sendJson(res, 200, body);
  });

  router.add("POST", "/api/v1/claims", async ({ req, res }) => {
    const worker = await authWorker(req, workers);
    await jsonBody(req, schemas.claim);
    await idempotent(db, req, res, worker.id, async () => {
      const claim = await deps.claims.claim(worker);
      return claim ? { status: 200, body: claim } : { status: 204 };
    });
  });

  router.add("POST", "/api/v1/runs/:id/heartbeat", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const body = await jsonBody(req, schemas.heartbeat);
    await idempotent(db, req, res, worker.id, async () => ({ status: 200, body: await deps.leases.heartbeat(worker, params["id"]!, body.leaseEpoch, body.usage, body.progress) }));
  });

  router.add("POST", "/api/v1/runs/:id/decisions/:decisionId/receipt", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const body = await jsonBody(req, schemas.receipt);
    await idempotent(db, req, res, worker.id, async () => {
      await deps.leases.receipt(worker, params["id"]!, params["decisionId"]!, body.leaseEpoch);
      return { status: 200, body: { ok: true } };
    });
  });

  router.add("POST", "/api/v1/runs/:id/exit", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const body = await jsonBody(req, schemas.exit);
    await idempotent(db, req, res, worker.id, async () => ({ status: 200, body: await deps.exits.exit(worker, params["id"]!, body) }));
  });

  router.add("POST", "/api/v1/runs/:id/decision-requests", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const body = await jsonBody(req, schemas.decisionRequest);
    await idempotent(db, req, res, worker.id, async () => ({ status: 201, body: { decisionId: await deps.leases.decisionRequest(worker, params["id"]!, body) } }));
  });
}
