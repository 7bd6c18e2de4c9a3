/**
 * The memory port's failures: the operation each method names, GitHubErrors
 * of each kind made by the adapter's own mapping, and which failures a method
 * answers itself rather than throwing.
 */
import { toGitHubError } from "../../../src/github/errors.js";
import { GitHubError, type GitHub } from "../../../src/github/port.js";

export type PortMethod = keyof GitHub;

/** The operation each method names in its GitHubError, as the octokit adapter names it. */
export const OPERATIONS: Readonly<Record<PortMethod, string>> = {
  getIssue: "get issue",
  createIssue: "create issue",
  updateIssueBody: "update issue",
  issuesCreatedBy: "list issues",
  issueLabels: "list issue labels",
  addLabels: "add labels",
  removeLabel: "remove label",
  findLabels: "get label",
  swapLabels: "swap labels",
  createComment: "create comment",
  listComments: "list comments",
  addReaction: "add reaction",
  blockedBy: "list blocked-by dependencies",
  hostVersion: "get meta",
  getPull: "get pull request",
  pullsForBranch: "list pull requests",
  createPull: "create pull request",
  updatePullBranch: "update pull request branch",
  defaultBranch: "get repository",
  mergedBranch: "merged branch",
  branchesWithPrefix: "branches",
  getBranch: "get branch ref",
  deleteBranch: "delete branch",
  compare: "compare commits",
  pullsForCommit: "list pull requests for commit",
  reviewComments: "list review comments",
  issuesLabelled: "issues by label",
  installationRepos: "list installation repositories",
  openPullsInto: "open pull requests into base",
  checkRunsForRef: "list check runs",
  jobLogTail: "download job logs",
  createCheckRun: "create check run",
  updateCheckRun: "update check run",
  rerequestCheckSuite: "rerequest check suite",
  rerunFailedJobs: "rerun failed jobs",
  dispatchWorkflow: "dispatch workflow",
  dispatchedRuns: "list workflow runs",
  permission: "get collaborator permission",
  readConfig: "read config",
  revokeToken: "revoke installation token",
};

// ---- GitHub's failures -------------------------------------------------------

export type GitHubErrorKind =
  | "rate-limited"
  | "quota-exhausted"
  | "server-error"
  | "network"
  | "not-found"
  | "gone"
  | "forbidden"
  | "validation"
  | "token";

interface OctokitLikeError {
  status?: number;
  message: string;
  code?: string;
  request?: { url: string };
  response?: { headers: Record<string, string>; data: { message: string } };
}

function octokitError(
  status: number | undefined,
  message: string,
  headers: Record<string, string> = {},
  extra: Partial<OctokitLikeError> = {},
): OctokitLikeError {
  return {
    ...(status === undefined ? {} : { status, response: { headers, data: { message } } }),
    message,
    ...extra,
  };
}

/**
 * A GitHubError of a kind, for `method`, made by the adapter's own mapping
 * (toGitHubError) from the failure octokit would report: so its status,
 * retryable, retryAfterMs, mayHaveSent and tokenFailure are what the real
 * port would throw.
 */
export function gitHubError(
  kind: GitHubErrorKind,
  method: PortMethod,
  opts: { retryAfterMs?: number; message?: string } = {},
): GitHubError {
  const operation = OPERATIONS[method];
  const wait = opts.retryAfterMs ?? 60_000;
  const failure = ((): OctokitLikeError => {
    switch (kind) {
      case "rate-limited":
        return octokitError(403, opts.message ?? "You have exceeded a secondary rate limit.", {
          "retry-after": String(Math.ceil(wait / 1000)),
        });
      case "quota-exhausted": {
        const now = Date.now();
        return octokitError(403, opts.message ?? "API rate limit exceeded for installation.", {
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset": String((now + wait) / 1000),
          date: new Date(now).toUTCString(),
        });
      }
      case "server-error":
        return octokitError(502, opts.message ?? "Bad Gateway");
      case "network":
        return octokitError(undefined, opts.message ?? "socket hang up", {}, { code: "ECONNRESET" });
      case "not-found":
        return octokitError(404, opts.message ?? "Not Found");
      case "gone":
        return octokitError(410, opts.message ?? "This issue was deleted");
      case "forbidden":
        return octokitError(403, opts.message ?? "Resource not accessible by integration");
      case "validation":
        return octokitError(422, opts.message ?? "Validation Failed");
      case "token":
        return octokitError(
          403,
          opts.message ?? "This installation has been suspended",
          {},
          { request: { url: "https://api.github.com/app/installations/1/access_tokens" } },
        );
    }
  })();
  return toGitHubError(operation, failure);
}

/** GitHub's own refusal of a call (a 404, 410 or 422 the fake answers), as the adapter maps it. */
export function refusal(method: PortMethod, status: number, message: string): GitHubError {
  return toGitHubError(OPERATIONS[method], octokitError(status, message));
}

/**
 * Failures the port answers instead of throwing (null, false or success):
 * injecting one of these would make the fake throw what the real port never
 * does, so the fake refuses it; make the thing absent in the fake instead.
 */
const ABSORBED: Partial<Record<PortMethod, (e: GitHubError) => boolean>> = {
  getIssue: (e) => e.status === 404 || e.status === 410,
  updateIssueBody: (e) => e.status === 404 || e.status === 410,
  issueLabels: (e) => e.status === 404,
  removeLabel: (e) => e.status === 404,
  getPull: (e) => e.status === 404,
  getBranch: (e) => e.status === 404,
  compare: (e) => e.status === 404,
  jobLogTail: (e) => e.status === 404 || e.status === 410,
  deleteBranch: (e) => (e.status === 404 || e.status === 422) && /does not exist|not found/i.test(e.message),
};

export function assertThrowable(method: PortMethod, e: Error): void {
  if (e instanceof GitHubError && ABSORBED[method]?.(e))
    throw new Error(
      `memoryGitHub.fail: ${method} answers GitHub's ${e.status} itself (null, false or success) and never throws it; ` +
        `make the thing absent in the fake instead`,
    );
}
