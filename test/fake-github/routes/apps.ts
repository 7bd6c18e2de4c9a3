/** The App's own endpoints (JWT) and installation discovery. */
import { ts } from "../json.js";
import { created, fail, noContent, notFound, ok, paginate, type RouteContext, type RouteTable } from "../http.js";
import type { Installation } from "../state.js";

function installationOr404(ctx: RouteContext, id: number): Installation {
  const inst = ctx.state.installations.get(id);
  if (!inst) throw notFound(ctx);
  return inst;
}

function byAccount(ctx: RouteContext, login: string): Installation {
  const inst = [...ctx.state.installations.values()].find((i) => i.account.toLowerCase() === login.toLowerCase());
  if (!inst) throw notFound(ctx);
  return inst;
}

export const appRoutes: RouteTable = {
  "GET /app": (ctx) => ok(ctx.json.app()),

  "GET /app/installations": (ctx) =>
    paginate(
      ctx,
      [...ctx.state.installations.values()].map((i) => ctx.json.installation(i)),
    ),

  "GET /app/installations/{installation_id}": (ctx) =>
    ok(ctx.json.installation(installationOr404(ctx, ctx.int("installation_id")))),

  "POST /app/installations/{installation_id}/access_tokens": (ctx) => {
    const inst = installationOr404(ctx, ctx.int("installation_id"));
    if (inst.suspendedAt) throw fail(ctx, 403, "This installation has been suspended");
    const body = (ctx.body ?? {}) as {
      repositories?: string[];
      repository_ids?: number[];
      permissions?: Record<string, string>;
    };
    let repositories: string[] | null = null;
    if (body.repositories?.length || body.repository_ids?.length) {
      const owned = [...ctx.state.repos.values()].filter((r) => r.installationId === inst.id);
      const picked = owned.filter(
        (r) =>
          body.repositories?.some((n) => n.toLowerCase() === r.name.toLowerCase()) ||
          body.repository_ids?.includes(r.id),
      );
      const asked = (body.repositories?.length ?? 0) + (body.repository_ids?.length ?? 0);
      if (picked.length < asked)
        throw fail(
          ctx,
          422,
          "There is at least one repository that does not exist or is not accessible to the parent installation.",
        );
      repositories = picked.map((r) => r.fullName.toLowerCase());
    }
    if (body.permissions) {
      for (const [k, v] of Object.entries(body.permissions)) {
        const granted = inst.permissions[k];
        if (!granted || (granted === "read" && v !== "read")) {
          throw fail(ctx, 422, `The permissions requested are not granted to this installation.`);
        }
      }
    }
    // Minted only once the request holds: a refused one leaves no token behind.
    const token = ctx.state.issueToken(inst.id);
    if (body.permissions) token.permissions = { ...body.permissions };
    token.repositories = repositories;
    const out: Record<string, unknown> = {
      token: token.token,
      expires_at: ts(token.expiresAt),
      permissions: token.permissions,
      repository_selection: repositories ? "selected" : "all",
    };
    if (repositories) {
      out.repositories = repositories.map((n) => ctx.json.repo(ctx.state.findRepo(n)!));
    }
    return created(out);
  },

  // Revokes the token the request authenticates with; it is refused (401) from then on.
  "DELETE /installation/token": (ctx) => {
    if (ctx.auth.kind !== "installation") throw notFound(ctx);
    ctx.state.tokens.get(ctx.auth.token)!.revokedAt = ctx.state.now();
    return noContent();
  },

  "GET /repos/{owner}/{repo}/installation": (ctx) => {
    const repo = ctx.state.findRepo(`${ctx.params.owner}/${ctx.params.repo}`);
    if (!repo || repo.installationId === null) throw notFound(ctx);
    return ok(ctx.json.installation(installationOr404(ctx, repo.installationId)));
  },

  "GET /orgs/{org}/installation": (ctx) => ok(ctx.json.installation(byAccount(ctx, ctx.params.org!))),

  "GET /users/{username}/installation": (ctx) => ok(ctx.json.installation(byAccount(ctx, ctx.params.username!))),

  "GET /installation/repositories": (ctx) => {
    if (ctx.auth.kind !== "installation") throw notFound(ctx);
    const { installationId, repositories } = ctx.auth;
    const repos = [...ctx.state.repos.values()]
      .filter((r) => r.installationId === installationId)
      .filter((r) => !repositories || repositories.includes(r.fullName.toLowerCase()))
      .sort((a, b) => a.fullName.localeCompare(b.fullName))
      .map((r) => ctx.json.repo(r));
    const inst = ctx.state.installations.get(installationId);
    return paginate(ctx, repos, (page) => ({
      total_count: repos.length,
      repository_selection: inst?.repositorySelection ?? "all",
      repositories: page,
    }));
  },
};
