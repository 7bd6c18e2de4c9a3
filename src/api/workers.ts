/**
 * The worker API under /api/v1: claim, heartbeat, decision receipt, exit and
 * decision request (registration and the operator's token verbs are in
 * worker-admin.ts). Bodies are validated with zod (400 names each field and
 * its limit); mutations honour Idempotency-Key (idempotency.ts).
 */
import type { IncomingMessage } from "node:http";
import { BadToken, bearer, HttpError, type Router } from "../http/router.js";
import { jsonRequest } from "../http/body.js";
import { sendJson } from "../http/respond.js";
import type { Worker, Workers } from "../workers/workers.js";
import { schemas, type WorkerApiDeps } from "./worker-schemas.js";
import { repoUrls } from "../claims/claims.js";
import { replayed } from "../credentials/broker.js";
import { Admission } from "../http/admission.js";
import { CLAIM_ADMISSION } from "../config/defaults.js";

const REGISTER_AGAIN = "register a new worker (POST /api/v1/workers, admin token) and give it the new token";

/** The worker the bearer token names; 401 for none, an unknown token, or a revoked worker (saying so). */
async function authWorker(req: IncomingMessage, workers: Workers, opts: { fresh?: boolean } = {}): Promise<Worker> {
  const token = bearer(req);
  if (!token) throw new HttpError(401, "missing bearer token: send Authorization: Bearer <worker token>");
  const worker = await workers.byToken(token, opts);
  if (!worker)
    throw new BadToken(
      "unknown worker token: it was never issued, or it was replaced by " +
        "a rotation (orchestra workers rotate <id> shows the new one once)",
      "a worker token is shown once, by orchestra workers register or rotate",
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
  const { queries, workers, idempotency } = deps;
  const admission = new Admission({
    ...CLAIM_ADMISSION,
    what: "claims",
    ...(deps.onClaimShed ? { onShed: deps.onClaimShed } : {}),
  });

  // A restarted worker re-attaches: its live runs, to go on heartbeating instead of losing them.
  router.add("GET", "/api/v1/workers/me/runs", async ({ req, res }) => {
    const worker = await authWorker(req, workers);
    const { runs, tasks } = await queries.liveRunsOf(worker.id);
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
          task: { id: t.id, repo: t.repo, issue: t.issue, title: t.title, ...repoUrls(deps.claims.deps.urls, t.repo) },
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
    // Over this replica's limit the claim is refused before its Idempotency-Key is stored,
    // so the worker's retry with the same key is a first try.
    await admission.run(() =>
      idempotency.run(req, res, worker.id, raw, async () => {
        deps.pauses.assertClaimable(worker);
        const claim = await deps.claims.claim(worker);
        // A token is never stored in the clear: a replay of this answer says where to get one.
        return claim ? { status: 200, body: claim, replayBody: replayed(claim) } : { status: 204 };
      }),
    );
  });

  router.add("POST", "/api/v1/runs/:id/heartbeat", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const { data: body, raw } = await jsonRequest(req, schemas.heartbeat);
    await idempotency.run(req, res, worker.id, raw, async () => {
      const beat = await deps.leases.heartbeat(worker, params["id"]!, body.leaseEpoch, body.usage, body.progress);
      const answer = { ...beat, ...(await deps.credentials?.forHeartbeat(params["id"]!, body.renewCredentials)) };
      return { status: 200, body: answer, replayBody: replayed(answer) };
    });
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

  router.add("POST", "/api/v1/runs/:id/release", async ({ req, res, params }) => {
    const worker = await authWorker(req, workers);
    const { data: body, raw } = await jsonRequest(req, schemas.release);
    await idempotency.run(req, res, worker.id, raw, async () => ({
      status: 200,
      body: await deps.releases.release(worker, params["id"]!, body.leaseEpoch, body.reason),
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
