/**
 * The operator's worker routes (admin token): register a worker, list
 * workers (never a token: only its last four characters), revoke one, rotate
 * its token. A token is in exactly one answer — the registration or rotation
 * that made it; an Idempotency-Key replay of that call gets the same worker
 * with `token: null` and says how to get a new one, so no token is ever
 * stored, not even in the idempotency table.
 */
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { jsonRequest } from "../http/body.js";
import { sendJson } from "../http/respond.js";
import { Busy } from "../apply/tasks.js";
import { schemas, type WorkerApiDeps } from "./worker-schemas.js";

const shownOnce = (id: string) =>
  `this is a replay of an earlier request with the same Idempotency-Key: ` +
  `a token is shown only once, in the first answer, and never stored; if it was lost, ` +
  `rotate it (POST /api/v1/workers/${id}/rotate, or orchestra workers rotate ${id}) for a new one`;

export function workerAdminRoutes(router: Router, deps: WorkerApiDeps): void {
  const { workers, tokens, idempotency } = deps;

  router.add("POST", "/api/v1/workers", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    const { data: body, raw } = await jsonRequest(req, schemas.register);
    await idempotency.run(req, res, "admin", raw, async () => {
      const made = await workers.register(body.name, body.repos);
      return {
        status: 201,
        body: made,
        replayBody: { id: made.id, token: null, tokenHint: made.tokenHint, message: shownOnce(made.id) },
      };
    });
  });

  router.add("GET", "/api/v1/workers", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    sendJson(res, 200, { workers: await tokens.list() });
  });

  router.add("DELETE", "/api/v1/workers/:id", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const id = params["id"]!;
    let revoked;
    try {
      revoked = await tokens.revoke(id);
    } catch (err) {
      if (!(err instanceof Busy)) throw err;
      throw new HttpError(
        409,
        `worker ${id} is revoked, but a lease of it could not be released yet (its task kept changing); ` +
          `send the revoke again to release it`,
        { reason: "busy", retryable: true },
      );
    }
    if (!revoked)
      throw new HttpError(404, `no worker ${id}; list workers with GET /api/v1/workers (orchestra workers list)`);
    res.writeHead(204, { "x-leases-released": String(revoked.released) }).end();
  });

  // Lifts a pause (too many releases or lost leases); releases before now no longer count.
  router.add("POST", "/api/v1/workers/:id/resume", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const id = params["id"]!;
    const { raw } = await jsonRequest(req, schemas.resume);
    await idempotency.run(req, res, "admin", raw, async () => {
      const before = await deps.queries.workerRow(id);
      if (!before || !(await deps.pauses.resume(id)))
        throw new HttpError(404, `no worker ${id}; list workers with GET /api/v1/workers (orchestra workers list)`);
      deps.workers.forget(id);
      return {
        status: 200,
        body: { id, name: before.name, wasPaused: deps.pauses.pauseOf(before), paused: null },
      };
    });
  });

  router.add("POST", "/api/v1/workers/:id/rotate", async ({ req, res, params }) => {
    requireAdmin(req, deps.adminToken);
    const id = params["id"]!;
    const { raw } = await jsonRequest(req, schemas.rotate);
    await idempotency.run(req, res, "admin", raw, async () => {
      const rotated = await workers.rotate(id);
      if (!rotated) {
        const worker = await deps.queries.workerRow(id);
        if (!worker)
          throw new HttpError(404, `no worker ${id}; list workers with GET /api/v1/workers (orchestra workers list)`);
        throw new HttpError(
          409,
          `worker ${id} was revoked at ${worker.revokedAt!.toISOString()}; ` +
            `a revoked worker stays revoked: register a new one (POST /api/v1/workers)`,
          { reason: "revoked" },
        );
      }
      const answer = { id, tokenHint: rotated.tokenHint, rotatedAt: rotated.rotatedAt.toISOString() };
      return {
        status: 200,
        body: { ...answer, token: rotated.token },
        replayBody: { ...answer, token: null, message: shownOnce(id) },
      };
    });
  });
}
