/**
 * The serializer's core: the URLs it points at, GitHub's timestamps and node
 * ids, and the shapes every other representation embeds (users, the App, an
 * installation, a repository in full and minimal, an author's association).
 */
import { forksOf } from "../forks.js";
import type { FakeState, Installation, Repo } from "../state.js";

export interface Urls {
  /** REST root, e.g. http://127.0.0.1:1234/api/v3 */
  api: string;
  /** web root (html_url), e.g. http://127.0.0.1:1234 */
  web: string;
}

export type Json = Record<string, unknown>;

/** GitHub timestamps have second precision. */
export function ts(d: Date | null | undefined): string | null {
  return d ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

export function nodeId(kind: string, id: number | string): string {
  return `${kind}_${Buffer.from(`0:${kind}${id}`).toString("base64url")}`;
}

export class SerializerCore {
  constructor(
    protected readonly state: FakeState,
    readonly urls: Urls,
  ) {}

  user(login: string): Json {
    const u = this.state.user(login);
    // GitHub escapes the brackets of bot logins (`name%5Bbot%5D`) in URLs
    const api = `${this.urls.api}/users/${encodeURIComponent(u.login)}`;
    return {
      login: u.login,
      id: u.id,
      node_id: nodeId(u.type === "Bot" ? "BOT" : u.type === "Organization" ? "O" : "U", u.id),
      avatar_url: `${this.urls.web}/avatars/u/${u.id}?v=4`,
      gravatar_id: "",
      url: api,
      html_url:
        u.type === "Bot" ? `${this.urls.web}/apps/${u.login.replace(/\[bot\]$/, "")}` : `${this.urls.web}/${u.login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: u.type,
      user_view_type: "public",
      site_admin: false,
    };
  }

  app(which: "self" | "github-actions" = "self"): Json {
    const a = which === "self" ? this.state.app : { ...this.state.actionsApp, clientId: "Iv1.actions" };
    const now = ts(new Date(0));
    return {
      id: a.id,
      slug: a.slug,
      node_id: nodeId("A", a.id),
      client_id: a.clientId,
      owner: this.user(a.owner),
      name: a.name,
      description: "",
      external_url: `${this.urls.web}/apps/${a.slug}`,
      html_url: `${this.urls.web}/apps/${a.slug}`,
      created_at: now,
      updated_at: now,
      permissions: which === "self" ? { ...this.state.appPermissions } : { actions: "write", checks: "write" },
      events: which === "self" ? [...this.state.appEvents] : ["check_run", "check_suite"],
      installations_count: which === "self" ? this.state.installations.size : undefined,
    };
  }

  installation(inst: Installation): Json {
    const acct = this.user(inst.account);
    return {
      id: inst.id,
      account: acct,
      repository_selection: inst.repositorySelection,
      access_tokens_url: `${this.urls.api}/app/installations/${inst.id}/access_tokens`,
      repositories_url: `${this.urls.api}/installation/repositories`,
      html_url: `${this.urls.web}/organizations/${inst.account}/settings/installations/${inst.id}`,
      app_id: this.state.app.id,
      app_slug: this.state.app.slug,
      target_id: acct.id,
      target_type: inst.accountType,
      permissions: inst.permissions,
      events: inst.events,
      created_at: ts(inst.createdAt),
      updated_at: ts(inst.createdAt),
      single_file_name: null,
      has_multiple_single_files: false,
      single_file_paths: [],
      suspended_by: null,
      suspended_at: ts(inst.suspendedAt),
    };
  }

  repo(r: Repo): Json {
    const api = `${this.urls.api}/repos/${r.fullName}`;
    const html = `${this.urls.web}/${r.fullName}`;
    const openIssues = [...r.issues.values()].filter((i) => i.state === "open").length;
    const forks = forksOf(this.state, r).length;
    return {
      id: r.id,
      node_id: nodeId("R", r.id),
      name: r.name,
      full_name: r.fullName,
      private: r.isPrivate,
      owner: this.user(r.owner),
      html_url: html,
      description: null,
      fork: r.parent !== null,
      url: api,
      archive_url: `${api}/{archive_format}{/ref}`,
      assignees_url: `${api}/assignees{/user}`,
      blobs_url: `${api}/git/blobs{/sha}`,
      branches_url: `${api}/branches{/branch}`,
      collaborators_url: `${api}/collaborators{/collaborator}`,
      comments_url: `${api}/comments{/number}`,
      commits_url: `${api}/commits{/sha}`,
      compare_url: `${api}/compare/{base}...{head}`,
      contents_url: `${api}/contents/{+path}`,
      contributors_url: `${api}/contributors`,
      deployments_url: `${api}/deployments`,
      downloads_url: `${api}/downloads`,
      events_url: `${api}/events`,
      forks_url: `${api}/forks`,
      git_commits_url: `${api}/git/commits{/sha}`,
      git_refs_url: `${api}/git/refs{/sha}`,
      git_tags_url: `${api}/git/tags{/sha}`,
      git_url: `git:${this.urls.web.replace(/^https?:/, "")}/${r.fullName}.git`,
      issue_comment_url: `${api}/issues/comments{/number}`,
      issue_events_url: `${api}/issues/events{/number}`,
      issues_url: `${api}/issues{/number}`,
      keys_url: `${api}/keys{/key_id}`,
      labels_url: `${api}/labels{/name}`,
      languages_url: `${api}/languages`,
      merges_url: `${api}/merges`,
      milestones_url: `${api}/milestones{/number}`,
      notifications_url: `${api}/notifications{?since,all,participating}`,
      pulls_url: `${api}/pulls{/number}`,
      releases_url: `${api}/releases{/id}`,
      ssh_url: `git@${new URL(this.urls.web).host}:${r.fullName}.git`,
      stargazers_url: `${api}/stargazers`,
      statuses_url: `${api}/statuses/{sha}`,
      subscribers_url: `${api}/subscribers`,
      subscription_url: `${api}/subscription`,
      tags_url: `${api}/tags`,
      teams_url: `${api}/teams`,
      trees_url: `${api}/git/trees{/sha}`,
      clone_url: `${html}.git`,
      mirror_url: null,
      hooks_url: `${api}/hooks`,
      svn_url: html,
      homepage: null,
      language: "TypeScript",
      forks_count: forks,
      forks,
      stargazers_count: 0,
      watchers_count: 0,
      watchers: 0,
      size: 0,
      default_branch: r.defaultBranch,
      open_issues_count: openIssues,
      open_issues: openIssues,
      is_template: false,
      topics: [],
      has_issues: true,
      has_projects: false,
      has_wiki: false,
      has_pages: false,
      has_downloads: true,
      has_discussions: false,
      archived: false,
      disabled: false,
      visibility: r.isPrivate ? "private" : "public",
      pushed_at: ts(r.createdAt),
      created_at: ts(r.createdAt),
      updated_at: ts(r.createdAt),
      permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
      allow_rebase_merge: true,
      allow_squash_merge: true,
      allow_merge_commit: true,
      allow_auto_merge: false,
      delete_branch_on_merge: r.deleteBranchOnMerge,
      allow_forking: true,
      web_commit_signoff_required: false,
      license: null,
      network_count: 0,
      subscribers_count: 0,
    };
  }

  /** Derived from the permission grant, as GitHub derives it from membership. */
  association(r: Repo, login: string): string {
    if (login.toLowerCase() === r.owner.toLowerCase()) return "OWNER";
    const role = r.permissions.get(login.toLowerCase());
    if (role && role !== "none" && role !== "read") return "COLLABORATOR";
    if (this.state.users.get(login.toLowerCase())?.type === "Bot") return "NONE";
    return "CONTRIBUTOR";
  }

  minimalRepo(r: Repo): Json {
    const full = this.repo(r);
    const keep = [
      "id",
      "node_id",
      "name",
      "full_name",
      "owner",
      "private",
      "html_url",
      "description",
      "fork",
      "url",
      "archive_url",
      "assignees_url",
      "blobs_url",
      "branches_url",
      "collaborators_url",
      "comments_url",
      "commits_url",
      "compare_url",
      "contents_url",
      "contributors_url",
      "deployments_url",
      "downloads_url",
      "events_url",
      "forks_url",
      "git_commits_url",
      "git_refs_url",
      "git_tags_url",
      "git_url",
      "issue_comment_url",
      "issue_events_url",
      "issues_url",
      "keys_url",
      "labels_url",
      "languages_url",
      "merges_url",
      "milestones_url",
      "notifications_url",
      "pulls_url",
      "releases_url",
      "ssh_url",
      "stargazers_url",
      "statuses_url",
      "subscribers_url",
      "subscription_url",
      "tags_url",
      "teams_url",
      "trees_url",
      "hooks_url",
    ];
    return Object.fromEntries(keep.map((k) => [k, full[k]]));
  }
}
