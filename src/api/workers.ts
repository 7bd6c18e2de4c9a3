/**
 * The worker API under /api/v1: claim, heartbeat, decision receipt, exit and
 * decision request (registration and the operator's token verbs are in
 * worker-admin.ts). Bodies are validated with zod (400 names each field and
 * its limit); mutations honour Idempotency-Key (idempotency.ts).
 */
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import type { Db } from "../store/db.js";
import { bearer, HttpError, type Router } from "../http/router.js";
import { jsonRequest } from "../http/body.js";
import { sendJson } from "../http/respond.js";
import type { Worker, Workers } from "../workers/workers.js";
import type { WorkerTokens } from "../workers/tokens.js";
import type { Claims } from "../claims/claims.js";
import type { Leases } from "../claims/leases.js";
import type { Exits } from "../exits/exit.js";
import { INFRA_DEATHS } from "../machine/events.js";
import { parseCondition } from "../human/conditions.js";
import type { Idempotency } from "./idempotency.js";
import { workerAdminRoutes } from "./worker-admin.js";

/**
 * Bounds of what a worker may report. Everything reported is stored on the
 * run and some of it is quoted in comments on GitHub (the last tool calls of
 * an escalation, a question), so nothing is unbounded.
 */
export const LIMITS = {
  name: 100,
  repos: 1000,
  leaseEpoch: 100,
  branch: 255,
  lastToolCalls: 50,
  toolCall: 2000,
  question: 10_000,
  condition: 500,
  progressField: 200,
  sessionRef: 1000,
  label: 200,
} as const;

const n = (v: number) => v.toLocaleString("en-US");
/** A string of at most `max` characters, whose error names the limit. */
const text = (max: number) => z.string().max(max, `at most ${n(max)} characters`);
const repoName = text(200).regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "must be owner/repo");
const epoch = text(LIMITS.leaseEpoch).min(1, "must not be empty");
const sha = z.string().regex(/^[0-9a-f]{7,40}$/, "must be a commit sha (7 to 40 hex digits)");
/** The run's model usage so far (a running total: the latest report wins). */
const usage = z
  .object({
    inputTokens: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
    costUsd: z.number().min(0).max(1_000_000, "at most 1,000,000"),
  })
  .strict();

export const schemas = {
  register: z
    .object({
      name: text(LIMITS.name).min(1, "must not be empty"),
      repos: z
        .array(repoName)
        .max(LIMITS.repos, `at most ${n(LIMITS.repos)} repositories`)
        .optional(),
    })
    .strict(),
  rotate: z.object({}).strict(),
  claim: z.object({}).strict(),
  heartbeat: z
    .object({
      leaseEpoch: epoch,
      usage: usage.optional(),
      /** What changed since the last heartbeat; unchanged progress for limits.stallSeconds stops the lease. */
      progress: z
        .object({
          headSha: sha.optional(),
          worktree: text(LIMITS.progressField).optional(),
          step: text(LIMITS.progressField).optional(),
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
      branch: text(LIMITS.branch).min(1, "must not be empty").optional(),
      headSha: sha.optional(),
      testsPassed: z.boolean().optional(),
      dirty: z.boolean().optional(),
      turnCapHit: z.boolean().optional(),
      handoff: z.boolean().optional(),
      lastToolCalls: z
        .array(text(LIMITS.toolCall))
        .max(LIMITS.lastToolCalls, `at most ${LIMITS.lastToolCalls} items (send the last ones)`)
        .optional(),
      question: text(LIMITS.question).optional(),
      /** The run died of a run-level infrastructure failure, not the agent's doing. */
      infra: z.enum(INFRA_DEATHS).optional(),
      usage: usage.optional(),
      sessionRef: text(LIMITS.sessionRef).optional(),
      harness: text(LIMITS.label).optional(),
      model: text(LIMITS.label).optional(),
    })
    .strict(),
  decisionRequest: z
    .object({
      leaseEpoch: epoch,
      question: text(LIMITS.question).min(1, "must not be empty"),
      kind: z
        .string()
        .regex(
          /^(question|verify:[A-Za-z0-9][A-Za-z0-9._-]{0,63})$/,
          "must be question or verify:<phase-id> (a phase id of at most 64 characters)",
        )
        .optional(),
      blocks: z.enum(["run", "nothing"]).optional(),
      condition: text(LIMITS.condition)
        .refine(
          (c) => parseCondition(c) !== null,
          "must be pr-merged:<owner/repo#n or pull request URL>, issue-closed:<n> or npm-version:<package@range>",
        )
        .optional(),
    })
    .strict(),
};

export interface WorkerApiDeps {
  db: Db;
  adminToken: string;
  workers: Workers;
  tokens: WorkerTokens;
  idempotency: Idempotency;
  claims: Claims;
  leases: Leases;
  exits: Exits;
}

const REGISTER_AGAIN = "register a new worker (POST /api/v1/workers, admin token) and give it the new token";

/** The worker the bearer token names; 401 for none, an unknown token, or a revoked worker (saying so). */
async function authWorker(req: IncomingMessage, workers: Workers, opts: { fresh?: boolean } = {}): Promise<Worker> {
  const token = bearer(req);
  if (!token) throw new HttpError(401, "missing bearer token: send Authorization: Bearer <worker token>");
  const worker = await workers.byToken(token, opts);
  if (!worker)
    throw new HttpError(
      401,
      "unknown worker token: it was never issued, or it was replaced by " +
        "a rotation (orchestra workers rotate <id> shows the new one once)",
      { reason: "unknown-token" },
    );
  if (worker.revokedAt) throw revokedError(worker);
  return worker;
}

function revokedError(worker: Worker): HttpError {
  return new HttpError(
    401,
    `worker ${worker.name} (${worker.id}) was revoked at ${worker.revokedAt!.toISOString()}; ` +
      `its token no longer works and its leases were released; ${REGISTER_AGAIN}`,
    {
      reason: "revoked",
    },
  );
}

export function workerRoutes(router: Router, deps: WorkerApiDeps): void {
  const { db, workers, idempotency } = deps;
  workerAdminRoutes(router, deps);

  // A restarted worker re-attaches: its live runs, to go on heartbeating instead of losing them.
  router.add("GET", "/api/v1/workers/me/runs", async ({ req, res }) => {
    const worker = await authWorker(req, workers);
    const runs = await db.run.findMany({
      where: { workerId: worker.id, state: "live" },
      orderBy: { startedAt: "asc" },
    });
    const tasks = await db.task.findMany({ where: { id: { in: runs.map((r) => r.taskId) } } });
    const byId = new Map(tasks.map((t) => [t.id, t]));
    // Live on the task too: a run whose task moved on is not the worker's any more.
    const live = runs.filter(
      (r) => byId.get(r.taskId)?.runId === r.id && byId.get(r.taskId)?.leaseEpoch === r.leaseEpoch,
    );
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
    // A claim makes a lease: the worker is read afresh, so a token revoked or rotated on another replica cannot claim.
    const worker = await authWorker(req, workers, { fresh: true });
    const { raw } = await jsonRequest(req, schemas.claim);
    await idempotency.run(req, res, worker.id, raw, async () => {
      const claim = await deps.claims.claim(worker);
      return claim ? { status: 200, body: claim } : { status: 204 };
    });
  });

  router.add("POST", "/api/v1/runs/:id/heartbeat", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const { data: body, raw } = await jsonRequest(req, schemas.heartbeat);
    await idempotency.run(req, res, worker.id, raw, async () => ({
      status: 200,
      body: await deps.leases.heartbeat(worker, params["id"]!, body.leaseEpoch, body.usage, body.progress),
    }));
  });

  router.add("POST", "/api/v1/runs/:id/decisions/:decisionId/receipt", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const { data: body, raw } = await jsonRequest(req, schemas.receipt);
    await idempotency.run(req, res, worker.id, raw, async () => {
      await deps.leases.receipt(worker, params["id"]!, params["decisionId"]!, body.leaseEpoch);
      return { status: 200, body: { ok: true } };
    });
  });

  router.add("POST", "/api/v1/runs/:id/exit", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const { data: body, raw } = await jsonRequest(req, schemas.exit);
    await idempotency.run(req, res, worker.id, raw, async () => ({
      status: 200,
      body: await deps.exits.exit(worker, params["id"]!, body),
    }));
  });

  router.add("POST", "/api/v1/runs/:id/decision-requests", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const { data: body, raw } = await jsonRequest(req, schemas.decisionRequest);
    await idempotency.run(req, res, worker.id, raw, async () => ({
      status: 201,
      body: { decisionId: await deps.leases.decisionRequest(worker, params["id"]!, body) },
    }));
  });
}
