/** Repository metadata, collaborator permissions and file contents. */
import { createHash } from "node:crypto";
import { fullRepoJson } from "../forks.js";
import { noContent, notFound, ok, type RouteContext, type RouteTable } from "../http.js";
import type { Repo, Role } from "../state.js";

/** The `permission` field speaks the legacy base roles only (see the endpoint's description). */
const LEGACY: Record<Role, string> = {
  admin: "admin",
  maintain: "write",
  write: "write",
  triage: "read",
  read: "read",
  none: "none",
};

const RANK: Role[] = ["none", "read", "triage", "write", "maintain", "admin"];

function flags(role: Role): Record<string, boolean> {
  const r = RANK.indexOf(role);
  return {
    pull: r >= 1,
    triage: r >= 2,
    push: r >= 3,
    maintain: r >= 4,
    admin: r >= 5,
  };
}

function blobSha(content: string): string {
  const buf = Buffer.from(content, "utf8");
  return createHash("sha1").update(`blob ${buf.length}\0`).update(buf).digest("hex");
}

/** GitHub wraps base64 content at 60 characters per line. */
function wrapBase64(content: string): string {
  const b64 = Buffer.from(content, "utf8").toString("base64");
  return (b64.match(/.{1,60}/g) ?? []).join("\n") + "\n";
}

function filesAt(ctx: RouteContext, repo: Repo): { files: Map<string, string>; ref: string } {
  const refParam = ctx.query.get("ref");
  if (!refParam) return { files: repo.files.get(repo.defaultBranch) ?? new Map(), ref: repo.defaultBranch };
  const name = refParam.replace(/^refs\/heads\//, "").replace(/^heads\//, "");
  if (repo.branches.has(name)) return { files: repo.files.get(name) ?? new Map(), ref: name };
  const sha = ctx.state.resolveRef(repo, refParam);
  if (!sha) throw notFound(ctx, `No commit found for the ref ${refParam}`);
  // a git-backed repository has the files of any commit
  if (repo.git) return { files: repo.git.files(sha), ref: refParam };
  // a sha: use the branch it heads, else the default branch's files
  const branch = [...repo.branches].find(([, s]) => s === sha)?.[0] ?? repo.defaultBranch;
  return { files: repo.files.get(branch) ?? new Map(), ref: refParam };
}

function wantsRaw(ctx: RouteContext): boolean {
  return /application\/vnd\.github(\.v3)?\.raw/.test(String(ctx.headers.accept ?? ""));
}

export const repoRoutes: RouteTable = {
  "GET /repos/{owner}/{repo}": (ctx) => ok(fullRepoJson(ctx.state, ctx.json, ctx.repo())),

  "GET /repos/{owner}/{repo}/collaborators/{username}/permission": (ctx) => {
    const repo = ctx.repo();
    const login = ctx.params.username!;
    const role = ctx.state.roleOf(repo, login);
    return ok({
      permission: LEGACY[role],
      role_name: role,
      user: { ...(ctx.json.user(login) as object), permissions: flags(role), role_name: role },
    });
  },

  "GET /repos/{owner}/{repo}/collaborators/{username}": (ctx) => {
    const repo = ctx.repo();
    const explicit = repo.permissions.get(ctx.params.username!.toLowerCase());
    if (!explicit || explicit === "none") throw notFound(ctx);
    return noContent();
  },

  "GET /repos/{owner}/{repo}/contents/{path}": (ctx) => {
    const repo = ctx.repo();
    const { files, ref } = filesAt(ctx, repo);
    const path = ctx.params.path!.replace(/^\/+|\/+$/g, "");
    const api = `${ctx.json.urls.api}/repos/${repo.fullName}`;
    const web = `${ctx.json.urls.web}/${repo.fullName}`;
    const content = files.get(path);
    if (content !== undefined) {
      if (wantsRaw(ctx))
        return { status: 200, raw: { contentType: "application/vnd.github.raw; charset=utf-8", text: content } };
      const sha = blobSha(content);
      const self = `${api}/contents/${path}?ref=${encodeURIComponent(ref)}`;
      return ok({
        type: "file",
        encoding: "base64",
        size: Buffer.byteLength(content),
        name: path.split("/").pop(),
        path,
        content: wrapBase64(content),
        sha,
        url: self,
        git_url: `${api}/git/blobs/${sha}`,
        html_url: `${web}/blob/${ref}/${path}`,
        download_url: `${ctx.json.urls.web}/raw/${repo.fullName}/${ref}/${path}`,
        _links: { self, git: `${api}/git/blobs/${sha}`, html: `${web}/blob/${ref}/${path}` },
      });
    }
    // a directory: list its immediate children
    const prefix = path ? `${path}/` : "";
    const children = new Map<string, "file" | "dir">();
    for (const p of files.keys()) {
      if (!p.startsWith(prefix)) continue;
      const rest = p.slice(prefix.length).split("/");
      children.set(rest[0]!, rest.length > 1 ? "dir" : "file");
    }
    if (!children.size) throw notFound(ctx);
    return ok(
      [...children].sort().map(([name, type]) => {
        const full = prefix + name;
        const body = files.get(full);
        const sha = body !== undefined ? blobSha(body) : createHash("sha1").update(`tree:${full}`).digest("hex");
        const self = `${api}/contents/${full}?ref=${encodeURIComponent(ref)}`;
        return {
          type,
          size: body !== undefined ? Buffer.byteLength(body) : 0,
          name,
          path: full,
          sha,
          url: self,
          git_url: `${api}/git/${type === "dir" ? "trees" : "blobs"}/${sha}`,
          html_url: `${web}/${type === "dir" ? "tree" : "blob"}/${ref}/${full}`,
          download_url: type === "file" ? `${ctx.json.urls.web}/raw/${repo.fullName}/${ref}/${full}` : null,
          _links: { self, git: `${api}/git/blobs/${sha}`, html: `${web}/blob/${ref}/${full}` },
        };
      }),
    );
  },
};
