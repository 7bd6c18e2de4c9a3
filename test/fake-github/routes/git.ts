/** Git refs, branches, commits and compare, over the commit graph in state. */
import { created, fail, noContent, notFound, ok, paginate, type RouteContext, type RouteTable } from "../http.js";
import type { Repo } from "../state.js";

/** `heads/x` / `tags/x` (what the refs API takes) → where it lives. */
function parseRef(ref: string): { kind: "heads" | "tags"; name: string } | null {
  const m = /^(heads|tags)\/(.+)$/.exec(ref);
  return m ? { kind: m[1] as "heads" | "tags", name: m[2]! } : null;
}

function refMap(repo: Repo, kind: "heads" | "tags"): Map<string, string> {
  return kind === "heads" ? repo.branches : repo.tags;
}

function allRefs(repo: Repo): [string, string][] {
  return [
    ...[...repo.branches].map(([n, s]): [string, string] => [`refs/heads/${n}`, s]),
    ...[...repo.tags].map(([n, s]): [string, string] => [`refs/tags/${n}`, s]),
  ].sort((a, b) => a[0].localeCompare(b[0]));
}

/** A lightweight tag moved (null: deleted); a git-backed repository's bare repository first. */
function setTag(repo: Repo, name: string, sha: string | null): void {
  repo.git?.setRef(`refs/tags/${name}`, sha);
  if (sha) repo.tags.set(name, sha);
  else repo.tags.delete(name);
}

/** compare accepts `branch`, `sha` or `owner:branch` on either side. */
function resolveSide(ctx: RouteContext, repo: Repo, side: string): string | undefined {
  const i = side.indexOf(":");
  if (i >= 0) {
    if (side.slice(0, i).toLowerCase() !== repo.owner.toLowerCase()) return undefined;
    side = side.slice(i + 1);
  }
  return ctx.state.resolveRef(repo, side);
}

export const gitRoutes: RouteTable = {
  "GET /repos/{owner}/{repo}/git/ref/{ref}": (ctx) => {
    const repo = ctx.repo();
    const parsed = parseRef(ctx.params.ref!);
    const sha = parsed && refMap(repo, parsed.kind).get(parsed.name);
    if (!parsed || !sha) throw notFound(ctx);
    return ok(ctx.json.gitRef(repo, `refs/${parsed.kind}/${parsed.name}`, sha));
  },

  "GET /repos/{owner}/{repo}/git/matching-refs/{ref}": (ctx) => {
    const repo = ctx.repo();
    const prefix = `refs/${ctx.params.ref}`;
    return ok(
      allRefs(repo)
        .filter(([n]) => n.startsWith(prefix))
        .map(([n, s]) => ctx.json.gitRef(repo, n, s)),
    );
  },

  "POST /repos/{owner}/{repo}/git/refs": (ctx) => {
    const repo = ctx.repo();
    const b = ctx.body as { ref: string; sha: string };
    const parsed = /^refs\//.test(b.ref) ? parseRef(b.ref.slice(5)) : null;
    if (!parsed) throw fail(ctx, 422, "Reference name must start with 'refs/' and have at least two slashes.");
    if (!repo.commits.has(b.sha)) throw fail(ctx, 422, "Object does not exist");
    const map = refMap(repo, parsed.kind);
    if (map.has(parsed.name)) throw fail(ctx, 422, "Reference already exists");
    if (parsed.kind === "heads") ctx.state.moveBranch(repo, parsed.name, b.sha);
    else setTag(repo, parsed.name, b.sha);
    return created(ctx.json.gitRef(repo, b.ref, b.sha));
  },

  "PATCH /repos/{owner}/{repo}/git/refs/{ref}": (ctx) => {
    const repo = ctx.repo();
    const parsed = parseRef(ctx.params.ref!);
    const b = ctx.body as { sha: string; force?: boolean };
    const map = parsed && refMap(repo, parsed.kind);
    const current = parsed && map!.get(parsed.name);
    if (!parsed || !current) throw fail(ctx, 422, "Reference does not exist");
    if (!repo.commits.has(b.sha)) throw fail(ctx, 422, "Object does not exist");
    if (!b.force && !ctx.state.ancestors(repo, b.sha).has(current))
      throw fail(ctx, 422, "Update is not a fast forward");
    if (parsed.kind === "heads") ctx.state.moveBranch(repo, parsed.name, b.sha);
    else setTag(repo, parsed.name, b.sha);
    return ok(ctx.json.gitRef(repo, `refs/${parsed.kind}/${parsed.name}`, b.sha));
  },

  "DELETE /repos/{owner}/{repo}/git/refs/{ref}": (ctx) => {
    const repo = ctx.repo();
    const parsed = parseRef(ctx.params.ref!);
    if (!parsed || !refMap(repo, parsed.kind).has(parsed.name)) throw fail(ctx, 422, "Reference does not exist");
    if (parsed.kind === "heads") ctx.state.deleteBranch(repo.fullName, parsed.name);
    else setTag(repo, parsed.name, null);
    return noContent();
  },

  "GET /repos/{owner}/{repo}/branches": (ctx) => {
    const repo = ctx.repo();
    const list = [...repo.branches]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([name, sha]) => ({
        name,
        commit: { sha, url: `${ctx.json.urls.api}/repos/${repo.fullName}/commits/${sha}` },
        protected: false,
      }));
    return paginate(ctx, list);
  },

  "GET /repos/{owner}/{repo}/branches/{branch}": (ctx) => {
    const repo = ctx.repo();
    const name = ctx.params.branch!;
    const sha = repo.branches.get(name);
    if (!sha) throw notFound(ctx, "Branch not found");
    return ok(ctx.json.branch(repo, name, sha));
  },

  "GET /repos/{owner}/{repo}/commits": (ctx) => {
    const repo = ctx.repo();
    const from = ctx.query.get("sha") ?? repo.defaultBranch;
    const head = ctx.state.resolveRef(repo, from);
    if (!head) throw notFound(ctx);
    // newest first along first parents and merges, like `git log`
    const list = [...ctx.state.ancestors(repo, head)]
      .map((s) => repo.commits.get(s)!)
      .sort((a, b) => b.date.getTime() - a.date.getTime());
    return paginate(
      ctx,
      list.map((c) => ctx.json.commit(repo, c)),
    );
  },

  "GET /repos/{owner}/{repo}/commits/{ref}": (ctx) => {
    const repo = ctx.repo();
    const sha = ctx.state.resolveRef(repo, ctx.params.ref!);
    if (!sha) throw fail(ctx, 422, `No commit found for SHA: ${ctx.params.ref}`);
    const commit = ctx.json.commit(repo, repo.commits.get(sha)!);
    return ok({ ...commit, stats: { total: 12, additions: 10, deletions: 2 }, files: [] });
  },

  "GET /repos/{owner}/{repo}/compare/{basehead}": (ctx) => {
    const repo = ctx.repo();
    const spec = ctx.params.basehead!;
    const m = /^(.+?)\.\.\.(.+)$/.exec(spec);
    if (!m) throw notFound(ctx);
    const baseSha = resolveSide(ctx, repo, m[1]!);
    const headSha = resolveSide(ctx, repo, m[2]!);
    if (!baseSha || !headSha) throw notFound(ctx);
    const cmp = ctx.state.compare(repo, baseSha, headSha);
    if (!cmp.mergeBase) throw notFound(ctx, `No common ancestor between ${m[1]} and ${m[2]}.`);
    const web = `${ctx.json.urls.web}/${repo.fullName}`;
    return ok({
      url: `${ctx.json.urls.api}/repos/${repo.fullName}/compare/${spec}`,
      html_url: `${web}/compare/${spec}`,
      permalink_url: `${web}/compare/${repo.owner}:${baseSha.slice(0, 7)}...${repo.owner}:${headSha.slice(0, 7)}`,
      diff_url: `${web}/compare/${spec}.diff`,
      patch_url: `${web}/compare/${spec}.patch`,
      base_commit: ctx.json.commit(repo, repo.commits.get(baseSha)!),
      merge_base_commit: ctx.json.commit(repo, repo.commits.get(cmp.mergeBase)!),
      status: cmp.status,
      ahead_by: cmp.aheadBy,
      behind_by: cmp.behindBy,
      total_commits: cmp.aheadBy,
      // GitHub lists at most 250 commits here
      commits: cmp.ahead.slice(0, 250).map((c) => ctx.json.commit(repo, c)),
      files: [],
    });
  },
};
