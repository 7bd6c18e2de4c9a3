/**
 * The GitHub port on Probot's octokit. This file, its issue half
 * (octokit-issues.ts), its checks and Actions half (octokit-actions.ts) and
 * its token half (octokit-tokens.ts) are the only ones that call octokit:
 * capability code receives a `GitHub`. Its GraphQL operations are in
 * queries.ts; mappers.ts turns GitHub's answers into the port's types.
 */
import type { ProbotOctokit } from "probot";
import {
  GitHubError,
  type BranchListing,
  type GitHub,
  type LabelledIssue,
  type Permission,
  type PullMergeability,
  type RepoRef,
} from "./port.js";
import { call, maybe } from "./errors.js";
import { toLabelledIssue, toMergeability, toPull, toReviewComment, type RawPull } from "./mappers.js";
import { issueMethods, type CallOptions } from "./octokit-issues.js";
import { tokenMethods } from "./octokit-tokens.js";
import { actionsMethods } from "./octokit-actions.js";
import {
  BRANCHES,
  ISSUES_LABELLED,
  MERGED_BRANCH,
  OPEN_PULLS_INTO,
  type BranchesQuery,
  type IssuesLabelledQuery,
  type MergedBranchQuery,
  type OpenPullsIntoQuery,
} from "./queries.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

export interface AdapterOptions {
  /** Each call gives up after this long (default 30 s): an effect never hangs on a silent connection. */
  timeoutMs?: number;
}

export function octokitGitHub(octokit: Octokit, opts: AdapterOptions = {}): GitHub {
  const rest = octokit.rest;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  // Reads may be retried by Probot's retry plugin; a write never is (a POST
  // whose answer was lost must be checked before it is sent again).
  const read = (): CallOptions => ({ request: { signal: AbortSignal.timeout(timeoutMs) } });
  const write = (): CallOptions => ({ request: { retries: 0, signal: AbortSignal.timeout(timeoutMs) } });
  return {
    ...issueMethods(octokit, read, write),
    ...tokenMethods(octokit, write),
    ...actionsMethods(octokit, read, write),
    async getPull(r, number) {
      const res = await maybe("get pull request", () => rest.pulls.get({ ...r, pull_number: number, ...read() }));
      return res ? toPull(res.data) : null;
    },
    async pullsForBranch(r, branch, state = "all") {
      const { data } = await call("list pull requests", () =>
        rest.pulls.list({ ...r, head: `${r.owner}:${branch}`, state, per_page: 100, ...read() }),
      );
      return (data as RawPull[]).map(toPull);
    },
    async pullsForCommit(r, sha) {
      const items = await call("list pull requests for commit", () =>
        octokit.paginate(rest.repos.listPullRequestsAssociatedWithCommit, {
          ...r,
          commit_sha: sha,
          per_page: 100,
          ...read(),
        }),
      );
      return (items as RawPull[]).map(toPull);
    },
    async reviewComments(r, pull, reviewId) {
      const items = await call("list review comments", () =>
        octokit.paginate(rest.pulls.listCommentsForReview, {
          ...r,
          pull_number: pull,
          review_id: reviewId,
          per_page: 100,
          ...read(),
        }),
      );
      return items.map(toReviewComment);
    },
    async installationRepos() {
      const items = await call("list installation repositories", () =>
        octokit.paginate(rest.apps.listReposAccessibleToInstallation, { per_page: 100, ...read() }),
      );
      return (items as unknown as Array<{ full_name: string }>).map((x) => x.full_name);
    },
    async issuesLabelled(r, labels) {
      const out: LabelledIssue[] = [];
      let cursor: string | null = null;
      for (;;) {
        const after: string | null = cursor;
        const data: IssuesLabelledQuery = await call("issues by label", () =>
          octokit.graphql<IssuesLabelledQuery>(ISSUES_LABELLED, {
            owner: r.owner,
            repo: r.repo,
            labels,
            cursor: after,
            ...read(),
          }),
        );
        if (!data.repository)
          throw new GitHubError(
            "issues by label",
            undefined,
            `no repository ${r.owner}/${r.repo} in the answer`,
            false,
          );
        const page = data.repository.issues;
        for (const n of page.nodes ?? []) if (n) out.push(toLabelledIssue(n, labels));
        if (!page.pageInfo.hasNextPage) return out;
        if (!page.pageInfo.endCursor || page.pageInfo.endCursor === after)
          throw new GitHubError("issues by label", undefined, "a next page without a new cursor", false);
        cursor = page.pageInfo.endCursor;
      }
    },
    async openPullsInto(r, base) {
      const out: PullMergeability[] = [];
      let cursor: string | null = null;
      for (;;) {
        const after: string | null = cursor;
        const data: OpenPullsIntoQuery = await call("open pull requests into base", () =>
          octokit.graphql<OpenPullsIntoQuery>(OPEN_PULLS_INTO, {
            owner: r.owner,
            repo: r.repo,
            base,
            cursor: after,
            ...read(),
          }),
        );
        if (!data.repository)
          throw new GitHubError(
            "open pull requests into base",
            undefined,
            `no repository ${r.owner}/${r.repo} in the answer`,
            false,
          );
        const page = data.repository.pullRequests;
        for (const n of page.nodes ?? []) if (n) out.push(toMergeability(n));
        if (!page.pageInfo.hasNextPage) return out;
        if (!page.pageInfo.endCursor || page.pageInfo.endCursor === after) {
          throw new GitHubError("open pull requests into base", undefined, "a next page without a new cursor", false);
        }
        cursor = page.pageInfo.endCursor;
      }
    },
    async createPull(r, pr) {
      const { data } = await call("create pull request", () => rest.pulls.create({ ...r, ...pr, ...write() }));
      return toPull(data);
    },
    async updatePullBranch(r, number, expectedHeadSha) {
      await call("update pull request branch", () =>
        rest.pulls.updateBranch({
          ...r,
          pull_number: number,
          ...(expectedHeadSha ? { expected_head_sha: expectedHeadSha } : {}),
          ...write(),
        }),
      );
    },
    async defaultBranch(r) {
      const { data } = await call("get repository", () => rest.repos.get({ ...r, ...read() }));
      return data.default_branch;
    },
    async mergedBranch(r, branch) {
      const data = await call("merged branch", () =>
        octokit.graphql<MergedBranchQuery>(MERGED_BRANCH, {
          owner: r.owner,
          repo: r.repo,
          ref: `refs/heads/${branch}`,
          ...read(),
        }),
      );
      if (!data.repository)
        throw new GitHubError("merged branch", undefined, `no repository ${r.owner}/${r.repo} in the answer`, false);
      const ref = data.repository.ref;
      if (!ref?.target) return null;
      return {
        sha: ref.target.oid,
        deletesMergedBranches: data.repository.deleteBranchOnMerge,
        openPull: ref.associatedPullRequests.nodes?.find((n) => n !== null)?.number ?? null,
      };
    },
    async branchesWithPrefix(r, prefix) {
      const out: BranchListing[] = [];
      let cursor: string | null = null;
      for (;;) {
        const after: string | null = cursor;
        const data: BranchesQuery = await call("branches", () =>
          octokit.graphql<BranchesQuery>(BRANCHES, {
            owner: r.owner,
            repo: r.repo,
            ...(prefix ? { filter: prefix } : {}),
            cursor: after,
            ...read(),
          }),
        );
        const page = data.repository?.refs;
        if (!page)
          throw new GitHubError("branches", undefined, `no repository ${r.owner}/${r.repo} in the answer`, false);
        for (const n of page.nodes ?? []) {
          if (!n?.target || !n.name.startsWith(prefix)) continue;
          out.push({
            name: n.name,
            sha: n.target.oid,
            committedAt: n.target.committedDate ? new Date(n.target.committedDate) : null,
            pullRequests: n.associatedPullRequests.totalCount,
          });
        }
        if (!page.pageInfo.hasNextPage) return out;
        if (!page.pageInfo.endCursor || page.pageInfo.endCursor === after)
          throw new GitHubError("branches", undefined, "a next page without a new cursor", false);
        cursor = page.pageInfo.endCursor;
      }
    },
    async getBranch(r, branch) {
      const res = await maybe("get branch ref", () => rest.git.getRef({ ...r, ref: `heads/${branch}`, ...read() }));
      return res ? { name: branch, sha: res.data.object.sha } : null;
    },
    async deleteBranch(r, branch) {
      try {
        await call("delete branch", () => rest.git.deleteRef({ ...r, ref: `heads/${branch}`, ...write() }));
        return true;
      } catch (e) {
        // 422 "Reference does not exist": already gone.
        if (
          e instanceof GitHubError &&
          (e.status === 422 || e.status === 404) &&
          /does not exist|not found/i.test(e.message)
        )
          return false;
        throw e;
      }
    },
    async compare(r, base, head) {
      const res = await maybe("compare commits", () =>
        rest.repos.compareCommitsWithBasehead({ ...r, basehead: `${base}...${head}`, per_page: 1, ...read() }),
      );
      if (!res) return null;
      const d = res.data;
      const headSha = d.commits.length > 0 ? d.commits[d.commits.length - 1]!.sha : d.merge_base_commit.sha;
      return { status: d.status, aheadBy: d.ahead_by, behindBy: d.behind_by, headSha };
    },
    async permission(r, username) {
      const { data } = await call("get collaborator permission", () =>
        rest.repos.getCollaboratorPermissionLevel({ ...r, username, ...read() }),
      );
      const role = toPermission((data as { role_name?: string }).role_name);
      // A custom role's name is not a level; GitHub reports its base level in `permission`.
      return role === "none" ? toPermission(data.permission) : role;
    },
    async readConfig(r, path) {
      const { config, files } = await call("read config", () => octokit.config.get({ ...r, path }));
      return files.some((f) => f.config !== null) ? config : null;
    },
  };
}

/** Custom repository roles are reduced to the base level GitHub reports beside them. */
export function toPermission(role: string | undefined): Permission {
  switch (role) {
    case "admin":
    case "maintain":
    case "write":
    case "triage":
    case "read":
      return role;
    default:
      return "none";
  }
}

export type { RepoRef };

/** The App's bot login (`<slug>[bot]`), from the App-level (JWT) client. */
export async function appBotLogin(octokit: Octokit): Promise<string> {
  const { data } = await call("get app", () => octokit.rest.apps.getAuthenticated());
  if (!data) throw new GitHubError("get app", undefined, "no app in the answer", true);
  return `${data.slug}[bot]`;
}
