/** Pull requests: list/get/create/update, merge, update-branch, commits, reviews and their comments, a commit's pull requests. */
import {
  fail,
  noContent,
  notFound,
  ok,
  paginate,
  sortBy,
  validationFailed,
  type RouteContext,
  type RouteTable,
} from "../http.js";
import { pullsWithCommit, reviewCommentJson } from "../pull-reads.js";
import type { Pull, Repo } from "../state.js";

function pullOr404(ctx: RouteContext, repo: Repo): Pull {
  const pr = repo.pulls.get(ctx.int("pull_number"));
  if (!pr) throw notFound(ctx);
  return pr;
}

/** `branch` or `owner:branch`; forks are not modelled, so another owner means "no such head". */
function parseHead(repo: Repo, head: string): string | null {
  const i = head.indexOf(":");
  if (i < 0) return head;
  return head.slice(0, i).toLowerCase() === repo.owner.toLowerCase() ? head.slice(i + 1) : null;
}

export const pullRoutes: RouteTable = {
  "GET /repos/{owner}/{repo}/pulls": (ctx) => {
    const repo = ctx.repo();
    const q = ctx.query;
    const state = q.get("state") ?? "open";
    let headRef: string | null | undefined;
    const head = q.get("head");
    if (head) {
      if (!head.includes(":")) {
        // GitHub silently ignores a head filter without the owner and lists every PR
        ctx.violation(
          `pulls/list: head=${head} has no "owner:" prefix; GitHub ignores such a filter and returns all pull requests`,
        );
      } else {
        headRef = parseHead(repo, head);
      }
    }
    const base = q.get("base");
    let list = [...repo.pulls.values()].filter((p) => {
      const issue = repo.issues.get(p.number)!;
      if (state !== "all" && issue.state !== state) return false;
      if (headRef !== undefined && p.headRef !== headRef) return false;
      if (base && p.baseRef !== base) return false;
      return true;
    });
    const sort = q.get("sort") ?? "created";
    const key =
      sort === "updated"
        ? (p: Pull) => repo.issues.get(p.number)!.updatedAt.getTime() * 1e4 + p.number
        : (p: Pull) => repo.issues.get(p.number)!.createdAt.getTime() * 1e4 + p.number;
    // GitHub: desc by default when sorting by creation, asc otherwise
    list = sortBy(list, key, q.get("direction"), sort === "created" ? "desc" : "asc");
    return paginate(ctx, list.map((p) => ctx.json.pull(repo, p, false)));
  },

  "GET /repos/{owner}/{repo}/pulls/{pull_number}": (ctx) => {
    const repo = ctx.repo();
    return ok(ctx.json.pull(repo, pullOr404(ctx, repo), true));
  },

  "POST /repos/{owner}/{repo}/pulls": (ctx) => {
    const repo = ctx.repo();
    const b = ctx.body as {
      title?: string;
      head?: string;
      base?: string;
      body?: string;
      draft?: boolean;
      issue?: number;
      maintainer_can_modify?: boolean;
    };
    const errors = [];
    const headRef = b.head ? parseHead(repo, b.head) : null;
    if (!b.head) errors.push({ resource: "PullRequest", code: "missing_field" as const, field: "head" });
    else if (!headRef || !repo.branches.has(headRef)) errors.push({ resource: "PullRequest", code: "invalid" as const, field: "head" });
    if (!b.base) errors.push({ resource: "PullRequest", code: "missing_field" as const, field: "base" });
    else if (!repo.branches.has(b.base)) errors.push({ resource: "PullRequest", code: "invalid" as const, field: "base" });
    if (!b.title && b.issue === undefined) errors.push({ resource: "PullRequest", code: "missing_field" as const, field: "title" });
    if (errors.length) throw validationFailed(ctx, errors);
    const existing = [...repo.pulls.values()].find(
      (p) => p.headRef === headRef && p.baseRef === b.base && repo.issues.get(p.number)!.state === "open",
    );
    if (existing) {
      throw validationFailed(ctx, [
        { resource: "PullRequest", code: "custom", message: `A pull request already exists for ${repo.owner}:${headRef}.` },
      ]);
    }
    const cmp = ctx.state.compare(repo, repo.branches.get(b.base!)!, repo.branches.get(headRef!)!);
    if (cmp.aheadBy === 0) {
      throw validationFailed(ctx, [{ resource: "PullRequest", code: "custom", message: `No commits between ${b.base} and ${headRef}` }]);
    }
    let pr: Pull;
    if (b.issue !== undefined) {
      // converting an issue keeps its number, title and body
      const issue = repo.issues.get(b.issue);
      if (!issue || issue.isPull || issue.state !== "open") {
        throw validationFailed(ctx, [{ resource: "PullRequest", code: "invalid", field: "issue" }]);
      }
      issue.isPull = true;
      pr = {
        number: issue.number,
        id: ctx.state.nextId(),
        headRef: headRef!,
        headSha: repo.branches.get(headRef!)!,
        baseRef: b.base!,
        draft: b.draft ?? false,
        merged: false,
        mergedAt: null,
        mergedBy: null,
        mergeCommitSha: null,
        maintainerCanModify: b.maintainer_can_modify ?? false,
        conflicting: false,
        mergeableOverride: null,
        mergeStateOverride: null,
        linkedIssues: [],
      };
      repo.pulls.set(pr.number, pr);
    } else {
      pr = ctx.state.addPull(repo.fullName, {
        head: headRef!,
        base: b.base,
        title: b.title,
        body: b.body ?? null,
        user: ctx.actor,
        draft: b.draft,
      });
      pr.maintainerCanModify = b.maintainer_can_modify ?? false;
    }
    return { status: 201, body: ctx.json.pull(repo, pr, true) };
  },

  "PATCH /repos/{owner}/{repo}/pulls/{pull_number}": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    const issue = repo.issues.get(pr.number)!;
    const b = ctx.body as { title?: string; body?: string; state?: "open" | "closed"; base?: string; maintainer_can_modify?: boolean };
    if (b.base !== undefined) {
      if (!repo.branches.has(b.base)) throw validationFailed(ctx, [{ resource: "PullRequest", code: "invalid", field: "base" }]);
      pr.baseRef = b.base;
    }
    if (b.state === "open" && issue.state === "closed") {
      if (pr.merged || !repo.branches.has(pr.headRef)) {
        throw validationFailed(ctx, [
          { resource: "PullRequest", code: "custom", field: "state", message: "state cannot be changed. The head branch was deleted." },
        ]);
      }
      pr.headSha = repo.branches.get(pr.headRef)!;
    }
    if (b.title !== undefined) issue.title = b.title;
    if (b.body !== undefined) issue.body = b.body;
    if (b.maintainer_can_modify !== undefined) pr.maintainerCanModify = b.maintainer_can_modify;
    if (b.state) ctx.state.setIssueState(issue, b.state, ctx.actor, null);
    if (b.state) issue.stateReason = null;
    issue.updatedAt = ctx.state.now();
    return ok(ctx.json.pull(repo, pr, true));
  },

  "GET /repos/{owner}/{repo}/pulls/{pull_number}/merge": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    if (!pr.merged) throw notFound(ctx);
    return noContent();
  },

  "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    const issue = repo.issues.get(pr.number)!;
    const b = (ctx.body ?? {}) as { sha?: string; merge_method?: "merge" | "squash" | "rebase"; commit_title?: string };
    if (pr.merged || issue.state !== "open") throw fail(ctx, 405, "Pull Request is not mergeable");
    if (pr.draft) throw fail(ctx, 405, "Pull Request is still a draft");
    if (b.sha && b.sha !== pr.headSha) throw fail(ctx, 409, "Head branch was modified. Review and try the merge again.");
    if (ctx.state.pullMergeable(repo, pr) !== "MERGEABLE") throw fail(ctx, 405, "Pull Request is not mergeable");
    const sha = ctx.state.mergePull(repo.fullName, pr.number, {
      by: ctx.actor,
      method: b.merge_method,
      message: b.commit_title,
    });
    return ok({ sha, merged: true, message: "Pull Request successfully merged" });
  },

  "PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    const issue = repo.issues.get(pr.number)!;
    const expected = (ctx.body as { expected_head_sha?: string } | null)?.expected_head_sha;
    if (issue.state !== "open") throw fail(ctx, 422, "Pull request is closed.");
    if (expected && expected !== pr.headSha) throw fail(ctx, 422, "expected head sha didn't match current head ref.");
    if (pr.conflicting) throw fail(ctx, 422, "merge conflict between base and head");
    const baseSha = repo.branches.get(pr.baseRef);
    if (!baseSha || !repo.branches.has(pr.headRef)) throw fail(ctx, 422, "Reference does not exist");
    if (ctx.state.compare(repo, pr.headSha, baseSha).aheadBy === 0) {
      throw fail(ctx, 422, "There are no new commits on the base branch.");
    }
    const merge = ctx.state.commit(repo, [pr.headSha, baseSha], `Merge branch '${pr.baseRef}' into ${pr.headRef}`, ctx.actor);
    ctx.state.moveBranch(repo, pr.headRef, merge.sha);
    return {
      status: 202,
      body: { message: "Updating pull request branch.", url: `${ctx.json.urls.web}/${repo.fullName}/pull/${pr.number}` },
    };
  },

  "GET /repos/{owner}/{repo}/pulls/{pull_number}/commits": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    const base = pr.merged ? (repo.commits.get(pr.mergeCommitSha!)?.parents[0] ?? pr.headSha) : repo.branches.get(pr.baseRef);
    const list = ctx.state.compare(repo, base ?? pr.headSha, pr.headSha).ahead;
    return paginate(ctx, list.map((c) => ctx.json.commit(repo, c)));
  },

  "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    return paginate(
      ctx,
      repo.reviews.filter((r) => r.pullNumber === pr.number).map((r) => ctx.json.review(repo, r)),
    );
  },

  "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    const review = repo.reviews.find((r) => r.id === ctx.int("review_id") && r.pullNumber === pr.number);
    if (!review) throw notFound(ctx);
    const comments = repo.reviewComments.filter((c) => c.reviewId === review.id).sort((a, b) => a.id - b.id);
    return paginate(ctx, comments.map((c) => reviewCommentJson(ctx.json, repo, c)));
  },

  "GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls": (ctx) => {
    const repo = ctx.repo();
    // a sha (full or abbreviated) or, as GitHub allows, a branch name
    const sha = ctx.state.resolveRef(repo, ctx.params.commit_sha!);
    if (!sha) throw fail(ctx, 422, `No commit found for SHA: ${ctx.params.commit_sha}`);
    return paginate(ctx, pullsWithCommit(ctx.state, repo, sha).map((p) => ctx.json.pull(repo, p, false)));
  },
};
