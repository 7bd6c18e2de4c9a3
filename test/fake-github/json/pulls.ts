/** Pull requests and their reviews, as GitHub's REST API shapes them. */
import { headRepoOf } from "../forks.js";
import type { Pull, Repo, Review } from "../state.js";
import { nodeId, ts, type Json } from "./core.js";
import { GitJson } from "./git.js";

export class PullJson extends GitJson {
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
}
