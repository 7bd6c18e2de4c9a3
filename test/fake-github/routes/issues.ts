/** Issues, their labels and comments, repository labels, reactions. */
import {
  created,
  fail,
  noContent,
  notFound,
  ok,
  paginate,
  sortBy,
  validationFailed,
  type Reply,
  type RouteContext,
  type RouteTable,
} from "../http.js";
import { headRepoOf } from "../forks.js";
import { checkCommentBody } from "../limits.js";
import type { Comment, Issue, Reaction, Repo } from "../state.js";

/** The issue the path names: 404 when there is none, 410 Gone when it was deleted (as GitHub answers). */
export function issueOr404(ctx: RouteContext, repo: Repo): Issue {
  const number = ctx.int("issue_number");
  const issue = repo.issues.get(number);
  if (!issue) throw repo.deletedIssues.has(number) ? fail(ctx, 410, "This issue was deleted") : notFound(ctx);
  return issue;
}

function commentOr404(ctx: RouteContext, repo: Repo): Comment {
  const c = repo.comments.get(ctx.int("comment_id"));
  if (!c) throw notFound(ctx);
  return c;
}

/**
 * Label bodies come as `{labels: [...]}`, a bare array, or (set-labels) a
 * bare string; items are names or `{name}` objects.
 */
function labelNames(body: unknown): string[] {
  const raw = Array.isArray(body) ? body : typeof body === "string" ? [body] : (body as { labels?: unknown })?.labels;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : [];
  return list
    .map((l) => (typeof l === "string" ? l : typeof l === "object" && l ? (l as { name?: unknown }).name : undefined))
    .filter((n): n is string => typeof n === "string" && n.length > 0);
}

function labelsReply(ctx: RouteContext, repo: Repo, issue: Issue): Reply {
  return ok(ctx.json.issueLabels(repo, issue));
}

function matchesLabels(issue: Issue, wanted: string | null): boolean {
  if (!wanted) return true;
  const have = new Set(issue.labels.map((l) => l.toLowerCase()));
  return wanted
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .every((l) => have.has(l));
}

function addReaction(ctx: RouteContext, repo: Repo, subject: Reaction["subject"]): Reply {
  const content = String((ctx.body as { content?: unknown })?.content);
  const existing = repo.reactions.find(
    (r) =>
      r.user.toLowerCase() === ctx.actor.toLowerCase() &&
      r.content === content &&
      JSON.stringify(r.subject) === JSON.stringify(subject),
  );
  // GitHub answers 200 with the existing reaction when the same user reacts twice
  if (existing) return ok(ctx.json.reaction(existing));
  const r: Reaction = { id: ctx.state.nextId(), subject, user: ctx.actor, content, createdAt: ctx.state.now() };
  repo.reactions.push(r);
  return created(ctx.json.reaction(r));
}

function listReactions(ctx: RouteContext, list: Reaction[]): Reply {
  const content = ctx.query.get("content");
  return paginate(
    ctx,
    list.filter((r) => !content || r.content === content).map((r) => ctx.json.reaction(r)),
  );
}

function validColor(c: unknown): boolean {
  return typeof c === "string" && /^#?[0-9a-fA-F]{6}$/.test(c);
}

export const issueRoutes: RouteTable = {
  // ---- issues --------------------------------------------------------------

  "GET /repos/{owner}/{repo}/issues": (ctx) => {
    const repo = ctx.repo();
    const q = ctx.query;
    const state = q.get("state") ?? "open";
    const since = q.get("since") ? Date.parse(q.get("since")!) : null;
    const creator = q.get("creator")?.toLowerCase();
    const assignee = q.get("assignee");
    let list = [...repo.issues.values()].filter(
      (i) =>
        (state === "all" || i.state === state) &&
        matchesLabels(i, q.get("labels")) &&
        (since === null || i.updatedAt.getTime() >= since) &&
        (!creator || i.user.toLowerCase() === creator) &&
        (!assignee ||
          (assignee === "none"
            ? i.assignees.length === 0
            : assignee === "*"
              ? i.assignees.length > 0
              : i.assignees.some((a) => a.toLowerCase() === assignee.toLowerCase()))),
    );
    const sort = q.get("sort") ?? "created";
    const key =
      sort === "updated"
        ? (i: Issue) => i.updatedAt.getTime() * 1e4 + i.number
        : sort === "comments"
          ? (i: Issue) => [...repo.comments.values()].filter((c) => c.issueNumber === i.number).length
          : (i: Issue) => i.createdAt.getTime() * 1e4 + i.number;
    list = sortBy(list, key, q.get("direction"), "desc");
    return paginate(
      ctx,
      list.map((i) => ctx.json.issue(repo, i)),
    );
  },

  "POST /repos/{owner}/{repo}/issues": (ctx) => {
    const repo = ctx.repo();
    const b = ctx.body as {
      title?: unknown;
      body?: string | null;
      labels?: unknown;
      assignees?: string[];
      assignee?: string | null;
    };
    if (b.title === undefined || b.title === null || String(b.title) === "") {
      throw validationFailed(ctx, [{ resource: "Issue", code: "missing_field", field: "title" }]);
    }
    checkCommentBody(ctx, "Issue", b.body);
    const issue = ctx.state.addIssue(repo.fullName, {
      title: String(b.title),
      body: b.body ?? null,
      user: ctx.actor,
      assignees: b.assignees ?? (b.assignee ? [b.assignee] : []),
    });
    ctx.state.applyLabels(repo, issue, labelNames({ labels: b.labels }), true);
    return created(ctx.json.issue(repo, issue));
  },

  "GET /repos/{owner}/{repo}/issues/{issue_number}": (ctx) => {
    const repo = ctx.repo();
    return ok(ctx.json.issue(repo, issueOr404(ctx, repo)));
  },

  "PATCH /repos/{owner}/{repo}/issues/{issue_number}": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    const b = ctx.body as {
      title?: unknown;
      body?: string | null;
      state?: "open" | "closed";
      state_reason?: Issue["stateReason"];
      labels?: unknown;
      assignees?: string[];
      assignee?: string | null;
    };
    const pr = repo.pulls.get(issue.number);
    if (b.state === "open" && pr?.merged) {
      throw validationFailed(ctx, [
        {
          resource: "Issue",
          code: "custom",
          field: "state",
          message: "state cannot be changed. The pull request has been merged.",
        },
      ]);
    }
    if (b.state === "open" && pr && !headRepoOf(ctx.state, repo, pr).branches.has(pr.headRef)) {
      throw validationFailed(ctx, [
        {
          resource: "Issue",
          code: "custom",
          field: "state",
          message: "state cannot be changed. The head branch was deleted.",
        },
      ]);
    }
    if (b.title !== undefined && b.title !== null) issue.title = String(b.title);
    if (b.body !== undefined) issue.body = b.body;
    if (b.labels !== undefined) ctx.state.applyLabels(repo, issue, labelNames({ labels: b.labels }), true);
    if (b.assignees !== undefined) issue.assignees = [...b.assignees];
    else if (b.assignee !== undefined) issue.assignees = b.assignee ? [b.assignee] : [];
    if (b.state) ctx.state.setIssueState(issue, b.state, ctx.actor, pr ? null : (b.state_reason ?? undefined));
    else if (b.state_reason && issue.state === "closed") issue.stateReason = b.state_reason;
    issue.updatedAt = ctx.state.now();
    return ok(ctx.json.issue(repo, issue));
  },

  // ---- labels on an issue ------------------------------------------------

  "GET /repos/{owner}/{repo}/issues/{issue_number}/labels": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    return paginate(ctx, ctx.json.issueLabels(repo, issue));
  },

  "POST /repos/{owner}/{repo}/issues/{issue_number}/labels": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    const names = labelNames(ctx.body);
    if (!names.length) {
      throw validationFailed(ctx, [{ resource: "Label", code: "missing_field", field: "labels" }]);
    }
    ctx.state.applyLabels(repo, issue, names, false);
    return labelsReply(ctx, repo, issue);
  },

  "PUT /repos/{owner}/{repo}/issues/{issue_number}/labels": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    ctx.state.applyLabels(repo, issue, labelNames(ctx.body), true);
    return labelsReply(ctx, repo, issue);
  },

  "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    ctx.state.applyLabels(repo, issue, [], true);
    return noContent();
  },

  "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    const name = ctx.params.name!.toLowerCase();
    const idx = issue.labels.findIndex((l) => l.toLowerCase() === name);
    if (idx < 0) throw notFound(ctx, "Label does not exist");
    issue.labels.splice(idx, 1);
    issue.updatedAt = ctx.state.now();
    return labelsReply(ctx, repo, issue);
  },

  // ---- repository labels ---------------------------------------------------

  "GET /repos/{owner}/{repo}/labels": (ctx) => {
    const repo = ctx.repo();
    return paginate(
      ctx,
      [...repo.labels.values()].sort((a, b) => a.id - b.id).map((l) => ctx.json.label(repo, l)),
    );
  },

  "GET /repos/{owner}/{repo}/labels/{name}": (ctx) => {
    const repo = ctx.repo();
    const label = repo.labels.get(ctx.params.name!.toLowerCase());
    if (!label) throw notFound(ctx);
    return ok(ctx.json.label(repo, label));
  },

  "POST /repos/{owner}/{repo}/labels": (ctx) => {
    const repo = ctx.repo();
    const b = ctx.body as { name?: string; color?: string; description?: string };
    if (!b.name) throw validationFailed(ctx, [{ resource: "Label", code: "missing_field", field: "name" }]);
    if (repo.labels.has(b.name.toLowerCase())) {
      throw validationFailed(ctx, [{ resource: "Label", code: "already_exists", field: "name" }]);
    }
    if (b.color !== undefined && !validColor(b.color)) {
      throw validationFailed(ctx, [{ resource: "Label", code: "invalid", field: "color" }]);
    }
    const label = ctx.state.addLabel(repo.fullName, b.name, { color: b.color, description: b.description ?? null });
    return created(ctx.json.label(repo, label));
  },

  "PATCH /repos/{owner}/{repo}/labels/{name}": (ctx) => {
    const repo = ctx.repo();
    const key = ctx.params.name!.toLowerCase();
    const label = repo.labels.get(key);
    if (!label) throw notFound(ctx);
    const b = ctx.body as { new_name?: string; color?: string; description?: string | null };
    if (b.color !== undefined && !validColor(b.color)) {
      throw validationFailed(ctx, [{ resource: "Label", code: "invalid", field: "color" }]);
    }
    if (b.new_name && b.new_name.toLowerCase() !== key && repo.labels.has(b.new_name.toLowerCase())) {
      throw validationFailed(ctx, [{ resource: "Label", code: "already_exists", field: "name" }]);
    }
    if (b.new_name) {
      const old = label.name;
      repo.labels.delete(key);
      label.name = b.new_name;
      repo.labels.set(b.new_name.toLowerCase(), label);
      for (const i of repo.issues.values()) i.labels = i.labels.map((l) => (l === old ? label.name : l));
    }
    if (b.color !== undefined) label.color = b.color.replace(/^#/, "");
    if (b.description !== undefined) label.description = b.description;
    return ok(ctx.json.label(repo, label));
  },

  "DELETE /repos/{owner}/{repo}/labels/{name}": (ctx) => {
    const repo = ctx.repo();
    const key = ctx.params.name!.toLowerCase();
    if (!repo.labels.delete(key)) throw notFound(ctx);
    for (const i of repo.issues.values()) i.labels = i.labels.filter((l) => l.toLowerCase() !== key);
    return noContent();
  },

  // ---- comments ------------------------------------------------------------

  "GET /repos/{owner}/{repo}/issues/{issue_number}/comments": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    const since = ctx.query.get("since") ? Date.parse(ctx.query.get("since")!) : null;
    const list = [...repo.comments.values()]
      .filter((c) => c.issueNumber === issue.number && (since === null || c.updatedAt.getTime() >= since))
      .sort((a, b) => a.id - b.id);
    return paginate(
      ctx,
      list.map((c) => ctx.json.comment(repo, c)),
    );
  },

  "GET /repos/{owner}/{repo}/issues/comments": (ctx) => {
    const repo = ctx.repo();
    const since = ctx.query.get("since") ? Date.parse(ctx.query.get("since")!) : null;
    let list = [...repo.comments.values()].filter((c) => since === null || c.updatedAt.getTime() >= since);
    const key = ctx.query.get("sort") === "updated" ? (c: Comment) => c.updatedAt.getTime() : (c: Comment) => c.id;
    list = sortBy(list, key, ctx.query.get("direction"), "asc");
    return paginate(
      ctx,
      list.map((c) => ctx.json.comment(repo, c)),
    );
  },

  "POST /repos/{owner}/{repo}/issues/{issue_number}/comments": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    if (issue.locked) throw fail(ctx, 403, "Unable to create comment because issue is locked.");
    const body = (ctx.body as { body?: string })?.body;
    if (!body) throw validationFailed(ctx, [{ resource: "IssueComment", code: "missing_field", field: "body" }]);
    checkCommentBody(ctx, "IssueComment", body);
    const c = ctx.state.addComment(repo.fullName, issue.number, {
      body,
      user: ctx.actor,
      viaApp: ctx.auth.kind === "installation",
    });
    issue.updatedAt = ctx.state.now();
    return created(ctx.json.comment(repo, c));
  },

  "GET /repos/{owner}/{repo}/issues/comments/{comment_id}": (ctx) => {
    const repo = ctx.repo();
    return ok(ctx.json.comment(repo, commentOr404(ctx, repo)));
  },

  "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": (ctx) => {
    const repo = ctx.repo();
    const c = commentOr404(ctx, repo);
    const body = (ctx.body as { body?: string })?.body;
    if (!body) throw validationFailed(ctx, [{ resource: "IssueComment", code: "missing_field", field: "body" }]);
    checkCommentBody(ctx, "IssueComment", body);
    c.body = body;
    c.updatedAt = ctx.state.now();
    return ok(ctx.json.comment(repo, c));
  },

  "DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}": (ctx) => {
    const repo = ctx.repo();
    const c = commentOr404(ctx, repo);
    repo.comments.delete(c.id);
    return noContent();
  },

  // ---- reactions -------------------------------------------------------------

  "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": (ctx) => {
    const repo = ctx.repo();
    const c = commentOr404(ctx, repo);
    return addReaction(ctx, repo, { kind: "comment", id: c.id });
  },

  "GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": (ctx) => {
    const repo = ctx.repo();
    const c = commentOr404(ctx, repo);
    return listReactions(ctx, ctx.state.reactionsOnComment(repo.fullName, c.id));
  },

  "POST /repos/{owner}/{repo}/issues/{issue_number}/reactions": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    return addReaction(ctx, repo, { kind: "issue", number: issue.number });
  },

  "GET /repos/{owner}/{repo}/issues/{issue_number}/reactions": (ctx) => {
    const repo = ctx.repo();
    const issue = issueOr404(ctx, repo);
    return listReactions(
      ctx,
      repo.reactions.filter((r) => r.subject.kind === "issue" && r.subject.number === issue.number),
    );
  },
};
