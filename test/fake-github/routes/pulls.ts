/**
 * Pull requests: list/get/create/update, merge, update-branch, commits,
 * reviews and their comments, a commit's pull requests. A head is
 * `owner:branch`, the owner naming this repository or a fork in its network
 * (see forks.ts).
 */
import { checkCommentBody } from "../limits.js";
import {
  fail,
  noContent,
  notFound,
  ok,
  paginate,
  validationFailed,
  type RouteContext,
  type RouteTable,
} from "../http.js";
import { isConflict } from "../git/host.js";
import { headMatches, headRepoOf, parseHead, shareCommits } from "../forks.js";
import { pullsWithCommit, reviewCommentJson } from "../pull-reads.js";
import type { Pull, Repo } from "../state.js";

function pullOr404(ctx: RouteContext, repo: Repo): Pull {
  const pr = repo.pulls.get(ctx.int("pull_number"));
  if (!pr) throw notFound(ctx);
  return pr;
}

export const pullRoutes: RouteTable = {
  "GET /repos/{owner}/{repo}/pulls": (ctx) => {
    const repo = ctx.repo();
    const q = ctx.query;
    const state = q.get("state") ?? "open";
    // `user:ref-name`: the owner of the head's repository (this one or a fork) and the branch
    let headFilter: { owner: string; ref: string } | undefined;
    const head = q.get("head");
    if (head) {
      const i = head.indexOf(":");
      if (i < 0) {
        // GitHub silently ignores a head filter without the owner and lists every PR
        ctx.violation(
          `pulls/list: head=${head} has no "owner:" prefix; GitHub ignores such a filter and returns all pull requests`,
        );
      } else {
        headFilter = { owner: head.slice(0, i), ref: head.slice(i + 1) };
      }
    }
    const base = q.get("base");
    let list = [...repo.pulls.values()].filter((p) => {
      const issue = repo.issues.get(p.number)!;
      if (state !== "all" && issue.state !== state) return false;
      if (headFilter && !headMatches(ctx.state, repo, p, headFilter.owner, headFilter.ref)) return false;
      if (base && p.baseRef !== base) return false;
      return true;
    });
    const sort = q.get("sort") ?? "created";
    const at = (p: Pull) => {
      const issue = repo.issues.get(p.number)!;
      return (sort === "updated" ? issue.updatedAt : issue.createdAt).getTime();
    };
    // GitHub: desc by default when sorting by creation, asc otherwise; ties in creation order (by number)
    const dir = (q.get("direction") ?? (sort === "created" ? "desc" : "asc")) === "asc" ? 1 : -1;
    list = list.sort((a, b) => (at(a) - at(b) || a.number - b.number) * dir);
    return paginate(
      ctx,
      list.map((p) => ctx.json.pull(repo, p, false)),
    );
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
    checkCommentBody(ctx, "PullRequest", b.body);
    const errors = [];
    const head = b.head ? parseHead(ctx.state, repo, b.head) : null;
    if (!b.head) errors.push({ resource: "PullRequest", code: "missing_field" as const, field: "head" });
    else if (!head || !head.repo.branches.has(head.ref))
      errors.push({ resource: "PullRequest", code: "invalid" as const, field: "head" });
    if (!b.base) errors.push({ resource: "PullRequest", code: "missing_field" as const, field: "base" });
    else if (!repo.branches.has(b.base))
      errors.push({ resource: "PullRequest", code: "invalid" as const, field: "base" });
    if (!b.title && b.issue === undefined)
      errors.push({ resource: "PullRequest", code: "missing_field" as const, field: "title" });
    if (errors.length) throw validationFailed(ctx, errors);
    const { repo: headRepo, ref: headRef } = head!;
    const existing = [...repo.pulls.values()].find(
      (p) =>
        p.headRef === headRef &&
        headRepoOf(ctx.state, repo, p) === headRepo &&
        p.baseRef === b.base &&
        repo.issues.get(p.number)!.state === "open",
    );
    if (existing) {
      throw validationFailed(ctx, [
        {
          resource: "PullRequest",
          code: "custom",
          message: `A pull request already exists for ${headRepo.owner}:${headRef}.`,
        },
      ]);
    }
    const headSha = headRepo.branches.get(headRef)!;
    // a fork's head commits become readable in the base repository, as on GitHub
    if (headRepo !== repo) shareCommits(headRepo, repo, headSha);
    const cmp = ctx.state.compare(repo, repo.branches.get(b.base!)!, headSha);
    if (cmp.aheadBy === 0) {
      throw validationFailed(ctx, [
        {
          resource: "PullRequest",
          code: "custom",
          message: `No commits between ${b.base} and ${headRepo === repo ? headRef : `${headRepo.owner}:${headRef}`}`,
        },
      ]);
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
        headRef,
        ...(headRepo !== repo ? { headRepo: headRepo.fullName } : {}),
        headSha,
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
      repo.git?.setRef(`refs/pull/${pr.number}/head`, pr.headSha);
    } else {
      pr = ctx.state.addPull(repo.fullName, {
        head: headRef,
        headRepo: headRepo.fullName,
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
    const b = ctx.body as {
      title?: string;
      body?: string;
      state?: "open" | "closed";
      base?: string;
      maintainer_can_modify?: boolean;
    };
    if (b.base !== undefined) {
      if (!repo.branches.has(b.base))
        throw validationFailed(ctx, [{ resource: "PullRequest", code: "invalid", field: "base" }]);
      pr.baseRef = b.base;
    }
    if (b.state === "open" && issue.state === "closed") {
      const headRepo = headRepoOf(ctx.state, repo, pr);
      if (pr.merged || !headRepo.branches.has(pr.headRef)) {
        throw validationFailed(ctx, [
          {
            resource: "PullRequest",
            code: "custom",
            field: "state",
            message: "state cannot be changed. The head branch was deleted.",
          },
        ]);
      }
      pr.headSha = headRepo.branches.get(pr.headRef)!;
      if (headRepo !== repo) shareCommits(headRepo, repo, pr.headSha);
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
    if (b.sha && b.sha !== pr.headSha)
      throw fail(ctx, 409, "Head branch was modified. Review and try the merge again.");
    if (ctx.state.pullMergeable(repo, pr) !== "MERGEABLE") throw fail(ctx, 405, "Pull Request is not mergeable");
    let sha: string;
    try {
      sha = ctx.state.mergePull(repo.fullName, pr.number, {
        by: ctx.actor,
        method: b.merge_method,
        message: b.commit_title,
      });
    } catch (e) {
      // a git-backed repository's merge that git could not make (a rebase that stops on a conflict)
      if (isConflict(e)) throw fail(ctx, 405, "Pull Request is not mergeable");
      throw e;
    }
    return ok({ sha, merged: true, message: "Pull Request successfully merged" });
  },

  "PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    const issue = repo.issues.get(pr.number)!;
    const expected = (ctx.body as { expected_head_sha?: string } | null)?.expected_head_sha;
    if (issue.state !== "open") throw fail(ctx, 422, "Pull request is closed.");
    if (expected && expected !== pr.headSha) throw fail(ctx, 422, "expected head sha didn't match current head ref.");
    if (ctx.state.pullConflicting(repo, pr)) throw fail(ctx, 422, "merge conflict between base and head");
    // a fork's branch: the merge commit is pushed there, which only "allow edits from maintainers" permits
    const headRepo = headRepoOf(ctx.state, repo, pr);
    if (headRepo !== repo && !pr.maintainerCanModify)
      throw fail(ctx, 422, "user doesn't have permission to update head repository");
    const baseSha = repo.branches.get(pr.baseRef);
    if (!baseSha || !headRepo.branches.has(pr.headRef)) throw fail(ctx, 422, "Reference does not exist");
    if (ctx.state.compare(repo, pr.headSha, baseSha).aheadBy === 0) {
      throw fail(ctx, 422, "There are no new commits on the base branch.");
    }
    if (headRepo !== repo) shareCommits(repo, headRepo, baseSha);
    const message = `Merge branch '${pr.baseRef}' into ${pr.headRef}`;
    const merge = headRepo.git
      ? ctx.state.git.mergeCommit(headRepo, headRepo.git, "merge", pr.headSha, baseSha, message, ctx.actor)
      : ctx.state.commit(headRepo, [pr.headSha, baseSha], message, ctx.actor);
    ctx.state.moveBranch(headRepo, pr.headRef, merge.sha);
    return {
      status: 202,
      body: {
        message: "Updating pull request branch.",
        url: `${ctx.json.urls.web}/${repo.fullName}/pull/${pr.number}`,
      },
    };
  },

  "GET /repos/{owner}/{repo}/pulls/{pull_number}/commits": (ctx) => {
    const repo = ctx.repo();
    const pr = pullOr404(ctx, repo);
    const base = pr.merged
      ? (repo.commits.get(pr.mergeCommitSha!)?.parents[0] ?? pr.headSha)
      : repo.branches.get(pr.baseRef);
    const list = ctx.state.compare(repo, base ?? pr.headSha, pr.headSha).ahead;
    return paginate(
      ctx,
      list.map((c) => ctx.json.commit(repo, c)),
    );
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
    return paginate(
      ctx,
      comments.map((c) => reviewCommentJson(ctx.json, repo, c)),
    );
  },

  "GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls": (ctx) => {
    const repo = ctx.repo();
    // a sha (full or abbreviated) or, as GitHub allows, a branch name
    const sha = ctx.state.resolveRef(repo, ctx.params.commit_sha!);
    if (!sha) throw fail(ctx, 422, `No commit found for SHA: ${ctx.params.commit_sha}`);
    return paginate(
      ctx,
      pullsWithCommit(ctx.state, repo, sha).map((p) => ctx.json.pull(repo, p, false)),
    );
  },
};
