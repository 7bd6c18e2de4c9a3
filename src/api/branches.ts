/**
 * Operator view of agent branches: `GET /api/v1/branches?repo=owner/repo`
 * lists the branches under the repository's branchPrefix, each with its task,
 * pull requests and whether it is stale (no task, no pull request, no recent
 * commit). Listing only: Orchestra never deletes a branch that may hold
 * commits no pull request has.
 */
import { HttpError, requireAdmin, type Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";
import type { StaleBranches } from "../reconcile/branches.js";
import { GitHubError } from "../github/port.js";

export function branchRoutes(
  router: Router,
  deps: { branches: Pick<StaleBranches, "list">; adminToken: string },
): void {
  router.add("GET", "/api/v1/branches", async ({ req, res, query }) => {
    requireAdmin(req, deps.adminToken);
    const repo = query.get("repo");
    if (!repo || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo))
      throw new HttpError(400, "repo must be given as ?repo=owner/repo");
    const daysText = query.get("staleDays") ?? "14";
    const staleDays = Number(daysText);
    if (!Number.isInteger(staleDays) || staleDays < 1 || staleDays > 3650)
      throw new HttpError(400, "staleDays must be an integer from 1 to 3650");
    const listed = await deps.branches.list(repo, staleDays).catch((err: unknown) => {
      if (err instanceof GitHubError)
        throw new HttpError(
          502,
          `could not list the branches of ${repo} on GitHub (${err.message}); ` +
            `${err.retryable ? "try again shortly" : "check the App's access to the repository"}`,
        );
      throw err;
    });
    if (!listed)
      throw new HttpError(404, `Orchestra does not know ${repo}: no installation has sent an event for it yet`);
    sendJson(res, 200, { repo, staleDays, ...listed, stale: listed.branches.filter((b) => b.stale).length });
  });
}
