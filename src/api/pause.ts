/**
 * The operator's pause (admin token): the whole service, or one repository.
 * While paused nothing new is claimed or dispatched there; classification,
 * label reconciliation and decision expiry go on.
 *
 *   POST /api/v1/pause {repo?: "owner/repo", paused?: true, reason?, by?}
 *   GET  /api/v1/pause
 */
import { z } from "zod";
import { requireAdmin, type Router } from "../http/router.js";
import { jsonBody } from "../http/body.js";
import { sendJson } from "../http/respond.js";
import { EVERYWHERE, type RepoGates } from "../gates/repos.js";

const body = z
  .object({
    repo: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "must be owner/repo")
      .optional(),
    paused: z.boolean().default(true),
    reason: z.string().min(1).max(500).optional(),
    by: z.string().min(1).max(100).optional(),
  })
  .strict();

export function pauseRoutes(router: Router, deps: { gates: RepoGates; adminToken: string }): void {
  const list = async () =>
    (await deps.gates.pauses()).map((p) => ({
      scope: p.scope === EVERYWHERE ? "all" : p.scope,
      reason: p.reason,
      by: p.by,
      at: p.at.toISOString(),
    }));

  router.add("GET", "/api/v1/pause", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    sendJson(res, 200, { paused: await list() });
  });

  router.add("POST", "/api/v1/pause", async ({ req, res }) => {
    requireAdmin(req, deps.adminToken);
    const b = await jsonBody(req, body);
    const scope = b.repo ?? EVERYWHERE;
    const changed = b.paused
      ? (await deps.gates.pause(scope, b.reason ?? "paused by an operator", b.by ?? "operator"), true)
      : await deps.gates.resume(scope);
    sendJson(res, 200, { scope: b.repo ?? "all", paused: b.paused, changed, all: await list() });
  });
}
