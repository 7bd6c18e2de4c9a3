/**
 * REST representations, shaped like GitHub's (see the schemas and examples in
 * @octokit/openapi): every URL points back at the fake so clients that follow
 * links (pagination, `url` fields) stay on it. Also usable to build webhook
 * payloads that agree with what the API returns (`fake.json`).
 */
import type {
  CheckRun,
  CheckSuite,
  Comment,
  Commit,
  FakeState,
  Installation,
  Issue,
  Job,
  Label,
  Pull,
  Reaction,
  Repo,
  Review,
  Workflow,
  WorkflowRun,
} from "./state.js";
import { forksOf, headRepoOf } from "./forks.js";

export interface Urls {
  /** REST root, e.g. http://127.0.0.1:1234/api/v3 */
  api: string;
  /** web root (html_url), e.g. http://127.0.0.1:1234 */
  web: string;
}

type Json = Record<string, unknown>;

/** GitHub timestamps have second precision. */
export function ts(d: Date | null | undefined): string | null {
  return d ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

export function nodeId(kind: string, id: number | string): string {
  return `${kind}_${Buffer.from(`0:${kind}${id}`).toString("base64url")}`;
}

export class Serializer {
  constructor(
    private readonly state: FakeState,
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

  label(r: Repo, l: Label): Json {
    return {
      id: l.id,
      node_id: nodeId("LA", l.id),
      url: `${this.urls.api}/repos/${r.fullName}/labels/${encodeURIComponent(l.name)}`,
      name: l.name,
      color: l.color,
      default: l.default,
      description: l.description,
    };
  }

  issueLabels(r: Repo, i: Issue): Json[] {
    return i.labels
      .map((n) => r.labels.get(n.toLowerCase()))
      .filter((l): l is Label => !!l)
      .map((l) => this.label(r, l));
  }

  issue(r: Repo, i: Issue): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/issues/${i.number}`;
    const pr = r.pulls.get(i.number);
    const out: Json = {
      id: i.id,
      node_id: nodeId(i.isPull ? "PR" : "I", i.id),
      url: api,
      repository_url: `${this.urls.api}/repos/${r.fullName}`,
      labels_url: `${api}/labels{/name}`,
      comments_url: `${api}/comments`,
      events_url: `${api}/events`,
      html_url: `${this.urls.web}/${r.fullName}/${i.isPull ? "pull" : "issues"}/${i.number}`,
      number: i.number,
      state: i.state,
      state_reason: i.stateReason,
      title: i.title,
      body: i.body,
      user: this.user(i.user),
      labels: this.issueLabels(r, i),
      assignee: i.assignees[0] ? this.user(i.assignees[0]) : null,
      assignees: i.assignees.map((a) => this.user(a)),
      milestone: null,
      locked: i.locked,
      active_lock_reason: null,
      comments: [...r.comments.values()].filter((c) => c.issueNumber === i.number).length,
      closed_at: ts(i.closedAt),
      created_at: ts(i.createdAt),
      updated_at: ts(i.updatedAt),
      closed_by: i.closedBy ? this.user(i.closedBy) : null,
      author_association: this.association(r, i.user),
      type: null,
      reactions: this.reactionRollup(
        `${api}/reactions`,
        r.reactions.filter((x) => x.subject.kind === "issue" && x.subject.number === i.number),
      ),
      timeline_url: `${api}/timeline`,
      performed_via_github_app: null,
    };
    // dependencies join issues only; pull requests carry no summary, nor does anything on a host without them
    if (!i.isPull && this.state.host.dependencies) out.issue_dependencies_summary = this.state.dependencies.summary(i);
    if (pr) {
      out.draft = pr.draft;
      out.pull_request = {
        url: `${this.urls.api}/repos/${r.fullName}/pulls/${i.number}`,
        html_url: `${this.urls.web}/${r.fullName}/pull/${i.number}`,
        diff_url: `${this.urls.web}/${r.fullName}/pull/${i.number}.diff`,
        patch_url: `${this.urls.web}/${r.fullName}/pull/${i.number}.patch`,
        merged_at: ts(pr.mergedAt),
      };
    }
    return out;
  }

  comment(r: Repo, c: Comment): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/issues/comments/${c.id}`;
    return {
      id: c.id,
      node_id: nodeId("IC", c.id),
      url: api,
      html_url: `${this.urls.web}/${r.fullName}/issues/${c.issueNumber}#issuecomment-${c.id}`,
      body: c.body,
      user: this.user(c.user),
      created_at: ts(c.createdAt),
      updated_at: ts(c.updatedAt),
      issue_url: `${this.urls.api}/repos/${r.fullName}/issues/${c.issueNumber}`,
      author_association: this.association(r, c.user),
      performed_via_github_app: c.viaApp ? this.app() : null,
      reactions: this.reactionRollup(
        `${api}/reactions`,
        r.reactions.filter((x) => x.subject.kind === "comment" && x.subject.id === c.id),
      ),
    };
  }

  reaction(x: Reaction): Json {
    return {
      id: x.id,
      node_id: nodeId("REA", x.id),
      user: this.user(x.user),
      content: x.content,
      created_at: ts(x.createdAt),
    };
  }

  private reactionRollup(url: string, list: Reaction[]): Json {
    const count = (c: string): number => list.filter((x) => x.content === c).length;
    return {
      url,
      total_count: list.length,
      "+1": count("+1"),
      "-1": count("-1"),
      laugh: count("laugh"),
      hooray: count("hooray"),
      confused: count("confused"),
      heart: count("heart"),
      rocket: count("rocket"),
      eyes: count("eyes"),
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

  private prBranch(r: Repo, ref: string, sha: string): Json {
    return {
      label: `${r.owner}:${ref}`,
      ref,
      sha,
      user: this.user(r.owner),
      repo: this.repo(r),
    };
  }

  /** `full` adds what only the single-PR endpoint returns (mergeable, counts). */
  pull(r: Repo, pr: Pull, full: boolean): Json {
    const issue = r.issues.get(pr.number)!;
    const api = `${this.urls.api}/repos/${r.fullName}/pulls/${pr.number}`;
    const html = `${this.urls.web}/${r.fullName}/pull/${pr.number}`;
    const issueApi = `${this.urls.api}/repos/${r.fullName}/issues/${pr.number}`;
    const baseSha = r.branches.get(pr.baseRef) ?? pr.headSha;
    const out: Json = {
      url: api,
      id: pr.id,
      node_id: nodeId("PR", pr.id),
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issueApi,
      commits_url: `${api}/commits`,
      review_comments_url: `${api}/comments`,
      review_comment_url: `${this.urls.api}/repos/${r.fullName}/pulls/comments{/number}`,
      comments_url: `${issueApi}/comments`,
      statuses_url: `${this.urls.api}/repos/${r.fullName}/statuses/${pr.headSha}`,
      number: pr.number,
      state: issue.state,
      locked: issue.locked,
      title: issue.title,
      user: this.user(issue.user),
      body: issue.body,
      labels: this.issueLabels(r, issue),
      milestone: null,
      active_lock_reason: null,
      created_at: ts(issue.createdAt),
      updated_at: ts(issue.updatedAt),
      closed_at: ts(issue.closedAt),
      merged_at: ts(pr.mergedAt),
      merge_commit_sha: pr.mergeCommitSha,
      assignee: issue.assignees[0] ? this.user(issue.assignees[0]) : null,
      assignees: issue.assignees.map((a) => this.user(a)),
      requested_reviewers: [],
      requested_teams: [],
      // a fork's branch: label, user and repo are the fork's
      head: this.prBranch(headRepoOf(this.state, r, pr), pr.headRef, pr.headSha),
      base: this.prBranch(r, pr.baseRef, baseSha),
      _links: {
        self: { href: api },
        html: { href: html },
        issue: { href: issueApi },
        comments: { href: `${issueApi}/comments` },
        review_comments: { href: `${api}/comments` },
        review_comment: { href: `${this.urls.api}/repos/${r.fullName}/pulls/comments{/number}` },
        commits: { href: `${api}/commits` },
        statuses: { href: `${this.urls.api}/repos/${r.fullName}/statuses/${pr.headSha}` },
      },
      author_association: this.association(r, issue.user),
      auto_merge: null,
      draft: pr.draft,
    };
    if (full) {
      const m = this.state.pullMergeable(r, pr);
      const cmp = this.state.compare(r, baseSha, pr.headSha);
      Object.assign(out, {
        merged: pr.merged,
        mergeable: m === "UNKNOWN" ? null : m === "MERGEABLE",
        rebaseable: m === "UNKNOWN" ? null : m === "MERGEABLE",
        mergeable_state: this.state.pullMergeState(r, pr).toLowerCase(),
        merged_by: pr.mergedBy ? this.user(pr.mergedBy) : null,
        comments: [...r.comments.values()].filter((c) => c.issueNumber === pr.number).length,
        review_comments: 0,
        maintainer_can_modify: pr.maintainerCanModify,
        commits: cmp.aheadBy,
        additions: cmp.aheadBy * 10,
        deletions: cmp.aheadBy * 2,
        changed_files: cmp.aheadBy,
      });
    }
    return out;
  }

  review(r: Repo, v: Review): Json {
    const html = `${this.urls.web}/${r.fullName}/pull/${v.pullNumber}#pullrequestreview-${v.id}`;
    return {
      id: v.id,
      node_id: nodeId("PRR", v.id),
      user: this.user(v.user),
      body: v.body,
      state: v.state,
      html_url: html,
      pull_request_url: `${this.urls.api}/repos/${r.fullName}/pulls/${v.pullNumber}`,
      author_association: this.association(r, v.user),
      _links: {
        html: { href: html },
        pull_request: { href: `${this.urls.api}/repos/${r.fullName}/pulls/${v.pullNumber}` },
      },
      submitted_at: ts(v.submittedAt),
      commit_id: v.commitId,
    };
  }

  gitRef(r: Repo, fullRef: string, sha: string): Json {
    const short = fullRef.replace(/^refs\//, "");
    return {
      ref: fullRef,
      node_id: nodeId("REF", `${r.id}:${fullRef}`),
      url: `${this.urls.api}/repos/${r.fullName}/git/refs/${short}`,
      object: { sha, type: "commit", url: `${this.urls.api}/repos/${r.fullName}/git/commits/${sha}` },
    };
  }

  commit(r: Repo, c: Commit): Json {
    const api = `${this.urls.api}/repos/${r.fullName}`;
    const person = { name: c.author, email: `${c.author}@users.noreply.github.com`, date: ts(c.date) };
    return {
      url: `${api}/commits/${c.sha}`,
      sha: c.sha,
      node_id: nodeId("C", c.sha),
      html_url: `${this.urls.web}/${r.fullName}/commit/${c.sha}`,
      comments_url: `${api}/commits/${c.sha}/comments`,
      commit: {
        url: `${api}/git/commits/${c.sha}`,
        author: person,
        committer: person,
        message: c.message,
        comment_count: 0,
        tree: { sha: c.tree, url: `${api}/git/trees/${c.tree}` },
        verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
      },
      author: this.user(c.author),
      committer: this.user(c.author),
      parents: c.parents.map((p) => ({
        sha: p,
        url: `${api}/commits/${p}`,
        html_url: `${this.urls.web}/${r.fullName}/commit/${p}`,
      })),
    };
  }

  branch(r: Repo, name: string, sha: string): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/branches/${name}`;
    return {
      name,
      commit: this.commit(r, r.commits.get(sha)!),
      _links: { self: api, html: `${this.urls.web}/${r.fullName}/tree/${name}` },
      protected: false,
      protection: { enabled: false, required_status_checks: { enforcement_level: "off", contexts: [], checks: [] } },
      protection_url: `${api}/protection`,
    };
  }

  checkRun(r: Repo, c: CheckRun): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/check-runs/${c.id}`;
    const job = r.jobs.get(c.id);
    const html = job
      ? `${this.urls.web}/${r.fullName}/actions/runs/${job.runId}/job/${job.id}`
      : `${this.urls.web}/${r.fullName}/runs/${c.id}`;
    return {
      id: c.id,
      head_sha: c.headSha,
      node_id: nodeId("CR", c.id),
      external_id: c.externalId ?? (job ? String(job.id) : ""),
      url: api,
      html_url: html,
      details_url: c.detailsUrl ?? html,
      status: c.status,
      conclusion: c.conclusion,
      started_at: ts(c.startedAt),
      completed_at: ts(c.completedAt),
      output: {
        title: c.output.title,
        summary: c.output.summary,
        text: c.output.text,
        annotations_count: c.output.annotationsCount,
        annotations_url: `${api}/annotations`,
      },
      name: c.name,
      check_suite: { id: c.suiteId },
      app: this.app(c.app),
      pull_requests: this.pullsForSuite(r, r.checkSuites.get(c.suiteId)),
    };
  }

  checkSuite(r: Repo, s: CheckSuite): Json {
    const { status, conclusion } = this.state.suiteStatus(r, s);
    const head = r.commits.get(s.headSha);
    return {
      id: s.id,
      node_id: nodeId("CS", s.id),
      // GitHub: null when the suite's head branch is in a fork
      head_branch: s.headRepo ? null : s.headBranch,
      head_sha: s.headSha,
      status,
      conclusion,
      url: `${this.urls.api}/repos/${r.fullName}/check-suites/${s.id}`,
      before: head?.parents[0] ?? "0000000000000000000000000000000000000000",
      after: s.headSha,
      pull_requests: this.pullsForSuite(r, s),
      app: this.app(s.app),
      repository: this.minimalRepo(r),
      created_at: ts(s.createdAt),
      updated_at: ts(s.updatedAt),
      head_commit: head ? this.simpleCommit(head) : null,
      latest_check_runs_count: this.state.latestCheckRuns(r, s.headSha).filter((c) => c.suiteId === s.id).length,
      check_runs_url: `${this.urls.api}/repos/${r.fullName}/check-suites/${s.id}/check-runs`,
      rerequestable: true,
      runs_rerequestable: true,
    };
  }

  /**
   * The pull requests GitHub matches to a check suite (and to its check runs
   * and workflow run): the open ones of this repository whose head branch is
   * the suite's (the sha may differ after later pushes), in a minimal shape;
   * none for a suite of a fork's branch, whatever its sha.
   */
  private pullsForSuite(r: Repo, suite: CheckSuite | undefined): Json[] {
    if (!suite || suite.headRepo || !suite.headBranch) return [];
    return [...r.pulls.values()]
      .filter((p) => p.headRef === suite.headBranch && !p.headRepo && r.issues.get(p.number)?.state === "open")
      .map((p) => ({
        id: p.id,
        number: p.number,
        url: `${this.urls.api}/repos/${r.fullName}/pulls/${p.number}`,
        head: {
          ref: p.headRef,
          sha: p.headSha,
          repo: { id: r.id, url: `${this.urls.api}/repos/${r.fullName}`, name: r.name },
        },
        base: {
          ref: p.baseRef,
          sha: r.branches.get(p.baseRef) ?? "",
          repo: { id: r.id, url: `${this.urls.api}/repos/${r.fullName}`, name: r.name },
        },
      }));
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

  simpleCommit(c: Commit): Json {
    const person = { name: c.author, email: `${c.author}@users.noreply.github.com` };
    return { id: c.sha, tree_id: c.tree, message: c.message, timestamp: ts(c.date), author: person, committer: person };
  }

  workflow(r: Repo, w: Workflow): Json {
    return {
      id: w.id,
      node_id: nodeId("W", w.id),
      name: w.name,
      path: w.path,
      state: w.state,
      created_at: ts(w.createdAt),
      updated_at: ts(w.createdAt),
      url: `${this.urls.api}/repos/${r.fullName}/actions/workflows/${w.id}`,
      html_url: `${this.urls.web}/${r.fullName}/blob/${r.defaultBranch}/${w.path}`,
      badge_url: `${this.urls.web}/${r.fullName}/workflows/${encodeURIComponent(w.name)}/badge.svg`,
    };
  }

  workflowRun(r: Repo, run: WorkflowRun): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/actions/runs/${run.id}`;
    const wf = r.workflows.get(run.workflowId);
    const head = r.commits.get(run.headSha);
    return {
      id: run.id,
      name: run.name,
      node_id: nodeId("WFR", run.id),
      head_branch: run.headBranch,
      head_sha: run.headSha,
      path: wf?.path ?? "",
      display_title: run.displayTitle,
      run_number: run.runNumber,
      event: run.event,
      status: run.status,
      conclusion: run.conclusion,
      workflow_id: run.workflowId,
      check_suite_id: run.checkSuiteId,
      check_suite_node_id: nodeId("CS", run.checkSuiteId),
      url: api,
      html_url: `${this.urls.web}/${r.fullName}/actions/runs/${run.id}`,
      pull_requests: this.pullsForSuite(r, r.checkSuites.get(run.checkSuiteId)),
      created_at: ts(run.createdAt),
      updated_at: ts(run.updatedAt),
      actor: this.user(run.actor),
      triggering_actor: this.user(run.actor),
      run_attempt: run.runAttempt,
      referenced_workflows: [],
      run_started_at: ts(run.runStartedAt),
      jobs_url: `${api}/jobs`,
      logs_url: `${api}/logs`,
      check_suite_url: `${this.urls.api}/repos/${r.fullName}/check-suites/${run.checkSuiteId}`,
      artifacts_url: `${api}/artifacts`,
      cancel_url: `${api}/cancel`,
      rerun_url: `${api}/rerun`,
      previous_attempt_url: run.runAttempt > 1 ? `${api}/attempts/${run.runAttempt - 1}` : null,
      workflow_url: `${this.urls.api}/repos/${r.fullName}/actions/workflows/${run.workflowId}`,
      head_commit: head ? this.simpleCommit(head) : null,
      repository: this.minimalRepo(r),
      head_repository: this.minimalRepo(run.headRepo ? this.state.repo(run.headRepo) : r),
    };
  }

  job(r: Repo, j: Job): Json {
    const run = r.workflowRuns.get(j.runId)!;
    const check = r.checkRuns.get(j.id)!;
    return {
      id: j.id,
      run_id: j.runId,
      run_url: `${this.urls.api}/repos/${r.fullName}/actions/runs/${j.runId}`,
      run_attempt: j.runAttempt,
      node_id: nodeId("CR", j.id),
      head_sha: run.headSha,
      url: `${this.urls.api}/repos/${r.fullName}/actions/jobs/${j.id}`,
      html_url: `${this.urls.web}/${r.fullName}/actions/runs/${j.runId}/job/${j.id}`,
      status: check.status,
      conclusion: check.conclusion,
      created_at: ts(check.startedAt),
      started_at: ts(check.startedAt),
      completed_at: ts(check.completedAt),
      name: j.name,
      steps: j.steps.map((s) => ({
        name: s.name,
        status: s.status,
        conclusion: s.conclusion,
        number: s.number,
        started_at: ts(check.startedAt),
        completed_at: ts(check.completedAt),
      })),
      check_run_url: `${this.urls.api}/repos/${r.fullName}/check-runs/${j.id}`,
      labels: j.labels,
      runner_id: j.runnerName ? 2 : null,
      runner_name: j.runnerName,
      runner_group_id: j.runnerName ? 2 : null,
      runner_group_name: j.runnerName ? "GitHub Actions" : null,
      workflow_name: run.name,
      head_branch: run.headBranch,
    };
  }
}
