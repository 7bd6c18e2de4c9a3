/**
 * What GitHub derives about pull requests for reading them: the pull
 * requests a commit belongs to (`commits/{sha}/pulls`), a review's inline
 * comments, and the review decision GraphQL reports.
 */
import { nodeId, ts, type Serializer } from "./json.js";
import type { FakeState, Pull, Repo } from "./state.js";

/** An inline comment of a review (`pulls/{n}/reviews/{id}/comments`). */
export interface ReviewComment {
  id: number;
  reviewId: number;
  pullNumber: number;
  path: string;
  /** the line in the PR's current diff; null once the comment is outdated */
  line: number | null;
  /** the line where the comment was made */
  originalLine: number;
  body: string;
  user: string;
  commitId: string;
  createdAt: Date;
}

/** A review's inline comment as a test arranges it; `line: null` is an outdated comment. */
export interface NewReviewComment {
  path: string;
  line: number | null;
  body: string;
  /** where an outdated comment was made (default: 1) */
  originalLine?: number;
}

export type ReviewDecision = "APPROVED" | "CHANGES_REQUESTED" | "REVIEW_REQUIRED";

/**
 * GraphQL's `reviewDecision`: each reviewer's latest approving or
 * changes-requesting review counts (a dismissed one withdraws it, a comment
 * changes nothing); changes requested by anyone win over approvals. With no
 * such review it is REVIEW_REQUIRED where the base requires reviews
 * (`state.requireReviews`), else null.
 */
export function reviewDecision(repo: Repo, pr: Pull): ReviewDecision | null {
  const latest = new Map<string, string>();
  for (const r of repo.reviews) {
    if (r.pullNumber !== pr.number || r.state === "COMMENTED" || r.state === "PENDING") continue;
    latest.set(r.user.toLowerCase(), r.state);
  }
  const states = [...latest.values()];
  if (states.includes("CHANGES_REQUESTED")) return "CHANGES_REQUESTED";
  const required = repo.reviewsRequired.has(pr.baseRef);
  if (states.includes("APPROVED")) return "APPROVED";
  return required ? "REVIEW_REQUIRED" : null;
}

/** The commits a pull request brings: merged, those its merge brought to the base; else those its head has over the base. */
function commitsOf(state: FakeState, repo: Repo, pr: Pull): Set<string> {
  const head = state.ancestors(repo, pr.headSha);
  let base: string | undefined;
  if (pr.merged && pr.mergeCommitSha) {
    head.add(pr.mergeCommitSha);
    base = repo.commits.get(pr.mergeCommitSha)?.parents[0];
  } else {
    base = repo.branches.get(pr.baseRef);
  }
  if (base) for (const s of state.ancestors(repo, base)) head.delete(s);
  return head;
}

/**
 * `GET commits/{sha}/pulls`, as GitHub describes it: for a commit on the
 * default branch, the merged pull request that brought it there; for any
 * other commit, every pull request whose commits include it (open, merged or
 * closed). Pull requests from forks into this repository count too (their
 * head commits are in this repository, see forks.ts).
 */
export function pullsWithCommit(state: FakeState, repo: Repo, sha: string): Pull[] {
  const defaultHead = repo.branches.get(repo.defaultBranch);
  const onDefault = defaultHead !== undefined && state.ancestors(repo, defaultHead).has(sha);
  return [...repo.pulls.values()]
    .filter((pr) => (!onDefault || pr.merged) && commitsOf(state, repo, pr).has(sha))
    .sort((a, b) => a.number - b.number);
}

/** A review comment in REST's `review-comment` shape. */
export function reviewCommentJson(json: Serializer, repo: Repo, c: ReviewComment): Record<string, unknown> {
  const api = `${json.urls.api}/repos/${repo.fullName}/pulls`;
  const html = `${json.urls.web}/${repo.fullName}/pull/${c.pullNumber}#discussion_r${c.id}`;
  return {
    url: `${api}/comments/${c.id}`,
    pull_request_review_id: c.reviewId,
    id: c.id,
    node_id: nodeId("PRRC", c.id),
    diff_hunk: `@@ -${c.originalLine},1 +${c.originalLine},1 @@`,
    path: c.path,
    position: c.line,
    original_position: c.originalLine,
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    user: json.user(c.user),
    body: c.body,
    created_at: ts(c.createdAt),
    updated_at: ts(c.createdAt),
    html_url: html,
    pull_request_url: `${api}/${c.pullNumber}`,
    author_association: json.association(repo, c.user),
    _links: {
      self: { href: `${api}/comments/${c.id}` },
      html: { href: html },
      pull_request: { href: `${api}/${c.pullNumber}` },
    },
    start_line: null,
    original_start_line: null,
    start_side: null,
    // GitHub sends null for the line of an outdated comment
    line: c.line,
    original_line: c.originalLine,
    side: "RIGHT",
    subject_type: "line",
  };
}
