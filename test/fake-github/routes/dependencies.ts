/**
 * Issue dependencies: the issues an issue is blocked by. GitHub names the
 * blocker by its id (`issue_id`), not its number, and answers with the
 * blocking issue. Where GitHub's description says nothing (an unknown
 * blocker, a duplicate, a pull request) the fake answers what GitHub's other
 * issue-linking endpoints answer: 404 for what the token cannot see, 422 for
 * an edge that cannot be made.
 */
import { created, notFound, ok, paginate, validationFailed, type RouteContext, type RouteTable } from "../http.js";
import type { IssueAt } from "../dependencies.js";
import type { Repo } from "../state.js";
import { issueOr404 } from "./issues.js";

/** Whether the request's credentials can see the repository (as `ctx.repo()` decides for the path's). */
function visible(ctx: RouteContext, repo: Repo): boolean {
  if (ctx.auth.kind !== "installation") return true;
  if (repo.installationId !== ctx.auth.installationId) return false;
  return !ctx.auth.repositories || ctx.auth.repositories.includes(repo.fullName.toLowerCase());
}

/** The blocker named by id in the body or the path; 404 when the token cannot see it. */
function blockerOr404(ctx: RouteContext, id: unknown): IssueAt {
  const at = typeof id === "number" ? ctx.state.dependencies.locate(id) : undefined;
  if (!at || !visible(ctx, at.repo)) throw notFound(ctx);
  return at;
}

export const dependencyRoutes: RouteTable = {
  "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    return paginate(
      ctx,
      ctx.state.dependencies.blockersOf(issue).map((b) => ctx.json.issue(b.repo, b.issue)),
    );
  },

  "POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    const blocker = blockerOr404(ctx, (ctx.body as { issue_id?: unknown })?.issue_id);
    const refuse = (message: string) =>
      validationFailed(ctx, [{ resource: "IssueDependency", code: "custom", field: "issue_id", message }]);
    if (blocker.issue.id === issue.id) throw refuse("An issue cannot be blocked by itself");
    if (issue.isPull || blocker.issue.isPull) throw refuse("Pull requests cannot be issue dependencies");
    if (!ctx.state.dependencies.add(issue, blocker.issue)) throw refuse("Issue is already blocked by this issue");
    return {
      ...created(ctx.json.issue(blocker.repo, blocker.issue)),
      headers: {
        location: `${ctx.json.urls.api}/repos/${repo.fullName}/issues/${issue.number}/dependencies/blocked_by`,
      },
    };
  },

  "DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    const blocker = blockerOr404(ctx, ctx.int("issue_id"));
    if (!ctx.state.dependencies.remove(issue, blocker.issue)) throw notFound(ctx);
    return ok(ctx.json.issue(blocker.repo, blocker.issue));
  },
};
