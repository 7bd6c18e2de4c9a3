/**
 * An in-memory GitHub port for unit tests: no server, no octokit, answers in
 * the port's own terms. It keeps the state the port's methods read and write
 * (repositories with a commit graph and branches, issues with labels,
 * comments and reactions, pull requests, check runs, workflows and their
 * runs, permissions, config files), so a write is seen by a later read: a
 * label added is in the next `issueLabels`, a comment created is in the next
 * `listComments`, a check run created is in the next `checkRunsForRef`.
 *
 * Every call of a port method is recorded (`calls`), and a test can make a
 * method throw (`fail`, `failNext`), typically a GitHubError built by
 * `gitHubError` the way the octokit adapter builds its own. Where GitHub
 * itself refuses (a missing issue, a duplicate pull request, an unknown
 * workflow) the fake throws a GitHubError as the adapter would; what the
 * fake does not model (an unknown repository, GraphQL without a handler)
 * throws a plain Error naming the method, never a plausible wrong answer.
 *
 * The object `satisfies GitHub`: a method added to the port does not compile
 * here until the fake has it too.
 */
import { createHash } from "node:crypto";
import { toGitHubError } from "../../src/github/errors.js";
import { logTail } from "../../src/github/mappers.js";
import { compareVersions, gapOf } from "../../src/github/hosts.js";
import {
  GitHubError,
  type BlockerInfo,
  type BranchInfo,
  type BranchListing,
  type CheckRunInfo,
  type CommentInfo,
  type Comparison,
  type GitHub,
  type IssueInfo,
  type LabelledIssue,
  type NewCheckRun,
  type Permission,
  type PullInfo,
  type PullMergeability,
  type Reaction,
  type RepoRef,
  type ReviewCommentInfo,
  type WorkflowRunInfo,
} from "../../src/github/port.js";

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
function refusal(method: PortMethod, status: number, message: string): GitHubError {
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

function assertThrowable(method: PortMethod, e: Error): void {
  if (e instanceof GitHubError && ABSORBED[method]?.(e))
    throw new Error(
      `memoryGitHub.fail: ${method} answers GitHub's ${e.status} itself (null, false or success) and never throws it; ` +
        `make the thing absent in the fake instead`,
    );
}

// ---- seeds and records ------------------------------------------------------------

type LabelEvent = LabelledIssue["labelledBy"][number];
type SubIssue = LabelledIssue["subIssues"][number];

export interface IssueSeed {
  number?: number;
  title?: string;
  body?: string;
  state?: "open" | "closed";
  labels?: string[];
  /** Default: "octocat". */
  author?: string;
  /** Who added the seeded labels (default: the author, a User, at the fake's now). */
  labelledBy?: { actor: string; actorType?: LabelEvent["actorType"] };
  blockedBy?: BlockerInfo[];
  subIssues?: SubIssue[];
}

export interface PullSeed {
  /** The head branch; created from the base with one commit when it is not there (and the head is not a fork). */
  head: string;
  /** Default: the repository's default branch. */
  base?: string;
  title?: string;
  body?: string;
  author?: string;
  /** `owner/repo` of a fork's head; its commit is kept in this repository, as GitHub keeps refs/pull/N/head. */
  headRepo?: string;
  draft?: boolean;
  mergeable?: PullMergeability["mergeable"];
  reviewDecision?: string | null;
  labels?: string[];
  /** Issues it closes besides those its body names with a closing keyword ("Closes #7"). */
  closes?: number[];
}

export interface WorkflowSeed {
  /** The workflow's `run-name:`; `${{ inputs.x }}` is replaced by the dispatch's input. Default: the file's name. */
  runName?: string;
  /** Has an `on: workflow_dispatch` trigger (default true); GitHub answers 422 on a dispatch otherwise. */
  dispatchable?: boolean;
  /** Newer GitHub answers a dispatch with its run's id (default true); older GitHub answers nothing. */
  returnsRunId?: boolean;
}

export interface RepoSeed {
  /** Default: "main". */
  defaultBranch?: string;
  deletesMergedBranches?: boolean;
  /** Listed by installationRepos (default true). */
  installed?: boolean;
  /** Branches made at the default branch's head. */
  branches?: string[];
  issues?: IssueSeed[];
  pulls?: PullSeed[];
  permissions?: Record<string, Permission>;
  /** Config files by path, already parsed (what readConfig answers). */
  configs?: Record<string, unknown>;
  /** Workflows by file name (`agent.yml`). */
  workflows?: Record<string, WorkflowSeed>;
}

export interface MemoryGitHubInit {
  /** The App's bot login: the author of what the port writes. Default: "orchestra[bot]". */
  app?: string;
  /** The fake's clock. Default: the wall clock. */
  now?: () => Date;
  repos?: Record<string, RepoSeed>;
  /**
   * The host's release as GET /meta answers it: a GitHub Enterprise Server
   * version ("3.17.4"), or null for api.github.com and GHEC (the default).
   * A GHES before 3.19 answers GitHub's 404 to `blockedBy`, as it has no
   * issue dependencies.
   */
  ghes?: string | null;
}

export interface MemoryCall {
  method: PortMethod;
  /** The arguments as they were when called (a copy). */
  args: unknown[];
  /** What the call threw, injected or GitHub's own refusal. */
  error?: unknown;
}

export interface FailOptions {
  /** How many calls throw it (default 1; Infinity for every call until `clearFailures`). */
  times?: number;
  /** The call takes effect and then throws, as when GitHub acted but the answer was lost (a 502 after a write). */
  applied?: boolean;
}

export interface StoredComment extends CommentInfo {
  /** `owner/repo` and number of the issue it is on. */
  repo: string;
  issue: number;
  createdAt: Date;
  reactions: Array<{ content: Reaction; user: string }>;
}

export interface StoredWorkflowRun extends WorkflowRunInfo {
  workflow: string;
  event: string;
  headSha: string;
  headBranch: string | null;
  conclusion: string | null;
  inputs: Record<string, string>;
  checkSuiteId: number;
  /** Times its failed jobs were run again. */
  reruns: number;
}

interface IssueRec {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  author: string;
  isPullRequest: boolean;
  deleted: boolean;
  labels: string[];
  labelEvents: LabelEvent[];
  blockedBy: BlockerInfo[];
  subIssues: SubIssue[];
}

interface PullRec {
  number: number;
  headRef: string;
  headSha: string;
  headRepo: string;
  baseRef: string;
  merged: boolean;
  mergeCommitSha: string | null;
  isDraft: boolean;
  mergeable: PullMergeability["mergeable"];
  reviewDecision: string | null;
  closes: number[];
}

interface CheckRunRec extends Omit<CheckRunInfo, "pullRequests"> {
  /** Who created it: only the App may update its own check runs. */
  by: "app" | "actions" | "other";
}

interface RepoRec {
  fullName: string;
  defaultBranch: string;
  deletesMergedBranches: boolean;
  installed: boolean;
  commits: Map<string, { parents: string[]; date: Date }>;
  branches: Map<string, string>;
  issues: Map<number, IssueRec>;
  pulls: Map<number, PullRec>;
  nextNumber: number;
  /** The repository's labels, lower-cased name → name (GitHub's labels are case-insensitive). */
  labels: Map<string, string>;
  checkRuns: Map<number, CheckRunRec>;
  /** The App's check suite of each commit. */
  appSuites: Map<string, number>;
  suites: Set<number>;
  workflows: Map<string, Required<WorkflowSeed>>;
  workflowRuns: Map<number, StoredWorkflowRun>;
  logs: Map<number, string>;
  reviews: Map<string, ReviewCommentInfo[]>;
  permissions: Map<string, Permission>;
  configs: Map<string, unknown>;
  rerequested: number[];
}

/** GitHub's closing keywords in a pull request's body: `Closes #7`, `fixes #8`, `Resolved #9`. */
const CLOSING = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)\b/gi;
const FAILED = new Set(["failure", "cancelled", "timed_out", "startup_failure", "action_required"]);
const GREEN = new Set(["success", "neutral", "skipped"]);
const WEB = "https://github.com";

export type MemoryGitHub = ReturnType<typeof memoryGitHub>;

export function memoryGitHub(init: MemoryGitHubInit = {}) {
  const app = init.app ?? "orchestra[bot]";
  const now = init.now ?? (() => new Date());
  const ghes = init.ghes ?? null;
  const repos = new Map<string, RepoRec>();
  const comments = new Map<number, StoredComment>();
  const calls: MemoryCall[] = [];
  /** Installation tokens GitHub still accepts (revokeToken answers "unknown" for any other). */
  const liveTokens = new Set<string>();
  const failures = new Map<PortMethod, Array<{ error: Error | (() => Error); left: number; applied: boolean }>>();
  let nextId = 1000;
  let nextSha = 0;

  // ---- lookups ----

  const fullName = (r: RepoRef) => `${r.owner}/${r.repo}`;
  function repoOf(method: string, name: string): RepoRec {
    const repo = repos.get(name);
    if (!repo)
      throw new Error(`memoryGitHub.${method}: no repository ${name} in the fake (seed it in repos, or addRepo)`);
    return repo;
  }
  const repo = (method: PortMethod, r: RepoRef) => repoOf(method, fullName(r));

  /** The issue (or pull request) for a port call: GitHub's 404 for none, 410 for a deleted one. */
  function issueFor(method: PortMethod, rec: RepoRec, number: number): IssueRec {
    const issue = rec.issues.get(number);
    if (!issue) throw refusal(method, 404, "Not Found");
    if (issue.deleted) throw refusal(method, 410, "This issue was deleted");
    return issue;
  }
  function seeded<T>(method: string, map: Map<number, T>, number: number, what: string): T {
    const found = map.get(number);
    if (!found) throw new Error(`memoryGitHub.${method}: no ${what} #${number}`);
    return found;
  }

  /** A branch name or a commit's sha → the sha; null when neither. */
  function resolve(rec: RepoRec, ref: string): string | null {
    const name = ref.replace(/^refs\/heads\//, "");
    return rec.branches.get(name) ?? (rec.commits.has(ref) ? ref : null);
  }
  function ancestors(rec: RepoRec, sha: string): Set<string> {
    const seen = new Set<string>();
    const todo = [sha];
    while (todo.length) {
      const s = todo.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      todo.push(...(rec.commits.get(s)?.parents ?? []));
    }
    return seen;
  }
  function comparison(rec: RepoRec, baseSha: string, headSha: string): Comparison {
    const ofBase = ancestors(rec, baseSha);
    const ofHead = ancestors(rec, headSha);
    const aheadBy = [...ofHead].filter((s) => !ofBase.has(s)).length;
    const behindBy = [...ofBase].filter((s) => !ofHead.has(s)).length;
    const status =
      aheadBy === 0 && behindBy === 0 ? "identical" : behindBy === 0 ? "ahead" : aheadBy === 0 ? "behind" : "diverged";
    return { status, aheadBy, behindBy, headSha };
  }
  function newCommit(rec: RepoRec, parents: string[], sha?: string): string {
    const id = sha ?? createHash("sha1").update(`${rec.fullName}:${nextSha++}`).digest("hex");
    if (rec.commits.has(id)) throw new Error(`memoryGitHub: commit ${id} is already in ${rec.fullName}`);
    rec.commits.set(id, { parents, date: now() });
    return id;
  }

  // ---- views in the port's types ----

  function issueInfo(i: IssueRec): IssueInfo {
    return {
      number: i.number,
      title: i.title,
      body: i.body,
      state: i.state,
      labels: [...i.labels],
      author: i.author,
      isPullRequest: i.isPullRequest,
    };
  }
  function closesOf(rec: RepoRec, p: PullRec): number[] {
    const body = rec.issues.get(p.number)?.body ?? "";
    return [...new Set([...p.closes, ...[...body.matchAll(CLOSING)].map((m) => Number(m[1]))])];
  }
  function pullInfo(rec: RepoRec, p: PullRec): PullInfo {
    const i = rec.issues.get(p.number)!;
    return {
      number: p.number,
      title: i.title,
      body: i.body,
      state: i.state,
      merged: p.merged,
      mergeCommitSha: p.merged ? p.mergeCommitSha : null,
      headRef: p.headRef,
      headSha: p.headSha,
      headRepo: p.headRepo,
      baseRef: p.baseRef,
      url: `${WEB}/${rec.fullName}/pull/${p.number}`,
      author: i.author,
    };
  }
  const commentInfo = (c: StoredComment): CommentInfo => ({ id: c.id, body: c.body, author: c.author, url: c.url });
  /** GitHub matches a suite to open PRs of its branch; here, to the repository's open PRs on its sha. */
  const checkRunInfo = (rec: RepoRec, { by: _by, ...c }: CheckRunRec): CheckRunInfo => ({
    ...c,
    output: { ...c.output },
    pullRequests: [...rec.pulls.values()]
      .filter(
        (p) => p.headSha === c.headSha && p.headRepo === rec.fullName && rec.issues.get(p.number)?.state === "open",
      )
      .map((p) => p.number),
  });
  /** The latest run of each name on a commit: what a rollup and a merge state look at. */
  function latestRuns(rec: RepoRec, sha: string): CheckRunRec[] {
    const byName = new Map<string, CheckRunRec>();
    for (const c of rec.checkRuns.values()) if (c.headSha === sha) byName.set(c.name, c);
    return [...byName.values()];
  }
  function rollup(rec: RepoRec, sha: string): string | null {
    const runs = latestRuns(rec, sha);
    if (!runs.length) return null;
    if (runs.some((c) => c.conclusion !== null && !GREEN.has(c.conclusion))) return "FAILURE";
    return runs.some((c) => c.status !== "completed") ? "PENDING" : "SUCCESS";
  }
  function mergeState(rec: RepoRec, p: PullRec): string {
    if (p.mergeable === "UNKNOWN") return "UNKNOWN";
    if (p.mergeable === "CONFLICTING") return "DIRTY";
    if (p.isDraft) return "DRAFT";
    const baseSha = rec.branches.get(p.baseRef);
    if (baseSha && comparison(rec, p.headSha, baseSha).aheadBy > 0) return "BEHIND";
    const checks = rollup(rec, p.headSha);
    return checks === "FAILURE" || checks === "PENDING" ? "UNSTABLE" : "CLEAN";
  }

  // ---- writes shared by the port and the seeding helpers ----

  function repoLabel(rec: RepoRec, label: string): string {
    const known = rec.labels.get(label.toLowerCase());
    if (known) return known;
    rec.labels.set(label.toLowerCase(), label);
    return label;
  }
  function addLabelsTo(
    rec: RepoRec,
    issue: IssueRec,
    labels: string[],
    actor: string,
    actorType: LabelEvent["actorType"],
  ) {
    for (const l of labels) {
      const name = repoLabel(rec, l);
      if (issue.labels.some((x) => x.toLowerCase() === name.toLowerCase())) continue;
      issue.labels.push(name);
      issue.labelEvents.push({ label: name, actor, actorType, at: now().toISOString() });
    }
  }
  function openIssue(rec: RepoRec, seed: IssueSeed, isPullRequest: boolean): IssueRec {
    const number = seed.number ?? rec.nextNumber;
    if (rec.issues.has(number)) throw new Error(`memoryGitHub: #${number} is already in ${rec.fullName}`);
    rec.nextNumber = Math.max(rec.nextNumber, number + 1);
    const author = seed.author ?? "octocat";
    const issue: IssueRec = {
      number,
      title: seed.title ?? `Issue ${number}`,
      body: seed.body ?? "",
      state: seed.state ?? "open",
      author,
      isPullRequest,
      deleted: false,
      labels: [],
      labelEvents: [],
      blockedBy: [...(seed.blockedBy ?? [])],
      subIssues: [...(seed.subIssues ?? [])],
    };
    rec.issues.set(number, issue);
    addLabelsTo(
      rec,
      issue,
      seed.labels ?? [],
      seed.labelledBy?.actor ?? author,
      seed.labelledBy?.actorType ?? ((seed.labelledBy?.actor ?? author).endsWith("[bot]") ? "Bot" : "User"),
    );
    return issue;
  }
  function addComment(rec: RepoRec, issue: IssueRec, body: string, author: string, at = now()): StoredComment {
    const id = nextId++;
    const c: StoredComment = {
      id,
      repo: rec.fullName,
      issue: issue.number,
      body,
      author,
      url: `${WEB}/${rec.fullName}/issues/${issue.number}#issuecomment-${id}`,
      createdAt: at,
      reactions: [],
    };
    comments.set(id, c);
    return c;
  }
  /** Moves a branch to a new commit; its open pull requests follow their head. */
  function commitOn(rec: RepoRec, branch: string, opts: { sha?: string; from?: string } = {}): string {
    const parent = rec.branches.get(branch) ?? resolve(rec, opts.from ?? rec.defaultBranch);
    if (!parent) throw new Error(`memoryGitHub.commit: no branch or commit ${opts.from} in ${rec.fullName}`);
    const sha = newCommit(rec, [parent], opts.sha);
    rec.branches.set(branch, sha);
    for (const p of rec.pulls.values())
      if (p.headRef === branch && p.headRepo === rec.fullName && rec.issues.get(p.number)?.state === "open")
        p.headSha = sha;
    return sha;
  }
  function openPull(rec: RepoRec, seed: PullSeed, author: string): PullRec {
    const base = seed.base ?? rec.defaultBranch;
    const baseSha = rec.branches.get(base);
    if (!baseSha) throw new Error(`memoryGitHub.addPull: no base branch ${base} in ${rec.fullName}`);
    const headRepo = seed.headRepo ?? rec.fullName;
    const headSha =
      headRepo !== rec.fullName
        ? newCommit(rec, [baseSha])
        : (rec.branches.get(seed.head) ?? commitOn(rec, seed.head, { from: base }));
    const issue = openIssue(
      rec,
      { title: seed.title ?? `Pull ${seed.head}`, body: seed.body ?? "", author, labels: seed.labels ?? [] },
      true,
    );
    const pull: PullRec = {
      number: issue.number,
      headRef: seed.head,
      headSha,
      headRepo,
      baseRef: base,
      merged: false,
      mergeCommitSha: null,
      isDraft: seed.draft ?? false,
      mergeable: seed.mergeable ?? "MERGEABLE",
      reviewDecision: seed.reviewDecision ?? null,
      closes: [...(seed.closes ?? [])],
    };
    rec.pulls.set(pull.number, pull);
    return pull;
  }
  function deleteBranchOf(rec: RepoRec, branch: string): void {
    rec.branches.delete(branch);
    // GitHub closes the open pull requests whose head branch is deleted.
    for (const p of rec.pulls.values()) {
      const issue = rec.issues.get(p.number)!;
      if (p.headRef === branch && p.headRepo === rec.fullName && issue.state === "open") issue.state = "closed";
    }
  }
  function addRepo(name: string, seed: RepoSeed = {}): void {
    if (!/^[^/\s]+\/[^/\s]+$/.test(name)) throw new Error(`memoryGitHub.addRepo: ${name} is not owner/repo`);
    if (repos.has(name)) throw new Error(`memoryGitHub.addRepo: ${name} is already in the fake`);
    const rec: RepoRec = {
      fullName: name,
      defaultBranch: seed.defaultBranch ?? "main",
      deletesMergedBranches: seed.deletesMergedBranches ?? false,
      installed: seed.installed ?? true,
      commits: new Map(),
      branches: new Map(),
      issues: new Map(),
      pulls: new Map(),
      nextNumber: 1,
      labels: new Map(),
      checkRuns: new Map(),
      appSuites: new Map(),
      suites: new Set(),
      workflows: new Map(),
      workflowRuns: new Map(),
      logs: new Map(),
      reviews: new Map(),
      permissions: new Map(Object.entries(seed.permissions ?? {})),
      configs: new Map(Object.entries(seed.configs ?? {})),
      rerequested: [],
    };
    repos.set(name, rec);
    rec.branches.set(rec.defaultBranch, newCommit(rec, []));
    for (const b of seed.branches ?? []) rec.branches.set(b, rec.branches.get(rec.defaultBranch)!);
    for (const [file, w] of Object.entries(seed.workflows ?? {}))
      rec.workflows.set(file, {
        runName: w.runName ?? file.replace(/\.ya?ml$/, ""),
        dispatchable: w.dispatchable ?? true,
        returnsRunId: w.returnsRunId ?? true,
      });
    for (const i of seed.issues ?? []) openIssue(rec, i, false);
    for (const p of seed.pulls ?? []) openPull(rec, p, p.author ?? "octocat");
  }
  for (const [name, seed] of Object.entries(init.repos ?? {})) addRepo(name, seed);

  // ---- recording and injected failures ----

  function takeFailure(method: PortMethod): { error: Error; applied: boolean } | null {
    const queue = failures.get(method);
    const next = queue?.[0];
    if (!queue || !next) return null;
    if (--next.left <= 0) queue.shift();
    const error = typeof next.error === "function" ? next.error() : next.error;
    assertThrowable(method, error);
    return { error, applied: next.applied };
  }

  async function call<R>(method: PortMethod, args: unknown[], body: () => R | Promise<R>): Promise<R> {
    let copy: unknown[];
    try {
      copy = structuredClone(args);
    } catch {
      copy = [...args];
    }
    const record: MemoryCall = { method, args: copy };
    calls.push(record);
    const injected = takeFailure(method);
    // Answer asynchronously, as a request would.
    await Promise.resolve();
    try {
      if (injected && !injected.applied) throw injected.error;
      const result = await body();
      if (injected) throw injected.error;
      return result;
    } catch (e) {
      record.error = e;
      throw e;
    }
  }

  /** The next `times` calls of `method` (default 1) throw `error` (or what `error()` makes, each time). */
  function fail(method: PortMethod, error: Error | (() => Error), opts: FailOptions = {}): void {
    const times = opts.times ?? 1;
    if (!(times >= 1) || (!Number.isInteger(times) && times !== Infinity))
      throw new Error(`memoryGitHub.fail: times must be a positive integer or Infinity, not ${times}`);
    if (!Object.hasOwn(OPERATIONS, method))
      throw new Error(`memoryGitHub.fail: ${String(method)} is not a method of the port`);
    if (typeof error !== "function") assertThrowable(method, error);
    const queue = failures.get(method) ?? [];
    queue.push({ error, left: times, applied: opts.applied ?? false });
    failures.set(method, queue);
  }

  // ---- the port ----

  const port = {
    getIssue: (r, number) =>
      call("getIssue", [r, number], () => {
        const i = repo("getIssue", r).issues.get(number);
        return i && !i.deleted ? issueInfo(i) : null;
      }),
    createIssue: (r, issue) =>
      call("createIssue", [r, issue], () =>
        issueInfo(openIssue(repo("createIssue", r), { title: issue.title, body: issue.body, author: app }, false)),
      ),
    updateIssueBody: (r, number, body) =>
      call("updateIssueBody", [r, number, body], () => {
        const i = repo("updateIssueBody", r).issues.get(number);
        if (!i || i.deleted) return null;
        i.body = body;
        return issueInfo(i);
      }),
    issuesCreatedBy: (r, creator, opts = {}) =>
      call("issuesCreatedBy", [r, creator, opts], () => {
        const state = opts.state ?? "all";
        // Pages of GitHub's issue list hold pull requests too; the port drops them after.
        return [...repo("issuesCreatedBy", r).issues.values()]
          .filter((i) => !i.deleted && i.author === creator && (state === "all" || i.state === state))
          .sort((a, b) => b.number - a.number)
          .slice(0, (opts.pages ?? 5) * 100)
          .filter((i) => !i.isPullRequest)
          .map(issueInfo);
      }),
    issueLabels: (r, number) =>
      call("issueLabels", [r, number], () => {
        const i = repo("issueLabels", r).issues.get(number);
        return i && !i.deleted ? [...i.labels] : null;
      }),
    addLabels: (r, number, labels) =>
      call("addLabels", [r, number, labels], () => {
        const rec = repo("addLabels", r);
        const issue = issueFor("addLabels", rec, number);
        addLabelsTo(rec, issue, labels, app, "Bot");
        return [...issue.labels];
      }),
    removeLabel: (r, number, label) =>
      call("removeLabel", [r, number, label], () => {
        // GitHub's 404 (no such label on the issue, or no issue) is success to the port.
        const i = repo("removeLabel", r).issues.get(number);
        if (!i || i.deleted || !i.labels.some((l) => l.toLowerCase() === label.toLowerCase())) return null;
        i.labels = i.labels.filter((l) => l.toLowerCase() !== label.toLowerCase());
        return [...i.labels];
      }),
    createComment: (r, number, body) =>
      call("createComment", [r, number, body], () => {
        const rec = repo("createComment", r);
        return commentInfo(addComment(rec, issueFor("createComment", rec, number), body, app));
      }),
    listComments: (r, number, opts = {}) =>
      call("listComments", [r, number, opts], () => {
        const rec = repo("listComments", r);
        issueFor("listComments", rec, number);
        const since = opts.since;
        // One page, oldest first, as the adapter asks for it.
        return [...comments.values()]
          .filter((c) => c.repo === rec.fullName && c.issue === number)
          .filter((c) => !since || c.createdAt.getTime() >= since.getTime())
          .slice(0, opts.perPage ?? 100)
          .map(commentInfo);
      }),
    addReaction: (r, commentId, content) =>
      call("addReaction", [r, commentId, content], () => {
        const rec = repo("addReaction", r);
        const c = comments.get(commentId);
        if (!c || c.repo !== rec.fullName) throw refusal("addReaction", 404, "Not Found");
        // The same reaction by the same user again is GitHub's 200 with the existing one.
        if (!c.reactions.some((x) => x.content === content && x.user === app)) c.reactions.push({ content, user: app });
      }),
    blockedBy: (r, issue) =>
      call("blockedBy", [r, issue], () => {
        const rec = repo("blockedBy", r);
        const found = issueFor("blockedBy", rec, issue);
        if (ghes && compareVersions(ghes, gapOf("issue-dependencies").ghesSince) < 0)
          throw refusal("blockedBy", 404, "Not Found");
        return found.blockedBy.map((b) => ({ ...b }));
      }),
    hostVersion: () => call("hostVersion", [], () => ({ ghes })),

    getPull: (r, number) =>
      call("getPull", [r, number], () => {
        const rec = repo("getPull", r);
        const p = rec.pulls.get(number);
        return p ? pullInfo(rec, p) : null;
      }),
    pullsForBranch: (r, branch, state = "all") =>
      call("pullsForBranch", [r, branch, state], () => {
        const rec = repo("pullsForBranch", r);
        return [...rec.pulls.values()]
          .filter((p) => p.headRef === branch && p.headRepo === rec.fullName)
          .map((p) => pullInfo(rec, p))
          .filter((p) => state === "all" || p.state === state)
          .sort((a, b) => b.number - a.number);
      }),
    createPull: (r, pr) =>
      call("createPull", [r, pr], () => {
        const rec = repo("createPull", r);
        if (pr.head.includes(":"))
          throw new Error("memoryGitHub.createPull: a head in another repository (owner:branch) is not modelled");
        const head = rec.branches.get(pr.head);
        const base = rec.branches.get(pr.base);
        if (!head) throw refusal("createPull", 422, `Validation Failed: head ${pr.head} invalid`);
        if (!base) throw refusal("createPull", 422, `Validation Failed: base ${pr.base} invalid`);
        const open = [...rec.pulls.values()].find(
          (p) => p.headRef === pr.head && p.baseRef === pr.base && rec.issues.get(p.number)?.state === "open",
        );
        if (open) throw refusal("createPull", 422, `A pull request already exists for ${r.owner}:${pr.head}.`);
        if (comparison(rec, base, head).aheadBy === 0)
          throw refusal("createPull", 422, `No commits between ${pr.base} and ${pr.head}`);
        return pullInfo(rec, openPull(rec, { ...pr }, app));
      }),
    updatePullBranch: (r, number, expectedHeadSha) =>
      call("updatePullBranch", [r, number, expectedHeadSha], () => {
        const rec = repo("updatePullBranch", r);
        const p = rec.pulls.get(number);
        if (!p) throw refusal("updatePullBranch", 404, "Not Found");
        if (rec.issues.get(number)?.state !== "open")
          throw refusal("updatePullBranch", 422, "Pull request is not open");
        if (expectedHeadSha && expectedHeadSha !== p.headSha)
          throw refusal("updatePullBranch", 422, "expected head sha didn't match current head ref.");
        if (p.headRepo !== rec.fullName)
          throw new Error("memoryGitHub.updatePullBranch: updating a fork's branch is not modelled");
        const baseSha = rec.branches.get(p.baseRef);
        if (!baseSha) throw refusal("updatePullBranch", 422, `No base branch ${p.baseRef}`);
        if (comparison(rec, p.headSha, baseSha).aheadBy === 0)
          throw refusal("updatePullBranch", 422, "There are no new commits on the base branch.");
        if (p.mergeable === "CONFLICTING")
          throw refusal("updatePullBranch", 422, "merge conflict between base and head");
        const merge = newCommit(rec, [p.headSha, baseSha]);
        rec.branches.set(p.headRef, merge);
        p.headSha = merge;
      }),

    defaultBranch: (r) => call("defaultBranch", [r], () => repo("defaultBranch", r).defaultBranch),
    mergedBranch: (r, branch) =>
      call("mergedBranch", [r, branch], () => {
        const rec = repo("mergedBranch", r);
        const sha = rec.branches.get(branch);
        if (sha === undefined) return null;
        const open = [...rec.pulls.values()].find(
          (p) => p.headRef === branch && p.headRepo === rec.fullName && pullInfo(rec, p).state === "open",
        );
        return { sha, deletesMergedBranches: rec.deletesMergedBranches, openPull: open?.number ?? null };
      }),
    branchesWithPrefix: (r, prefix) =>
      call("branchesWithPrefix", [r, prefix], () => {
        const rec = repo("branchesWithPrefix", r);
        return [...rec.branches.entries()]
          .filter(([name]) => name.startsWith(prefix))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([name, sha]): BranchListing => ({
            name,
            sha,
            committedAt: rec.commits.get(sha)?.date ?? null,
            pullRequests: [...rec.pulls.values()].filter((p) => p.headRef === name && p.headRepo === rec.fullName)
              .length,
          }));
      }),
    getBranch: (r, branch) =>
      call("getBranch", [r, branch], (): BranchInfo | null => {
        const sha = repo("getBranch", r).branches.get(branch);
        return sha ? { name: branch, sha } : null;
      }),
    deleteBranch: (r, branch) =>
      call("deleteBranch", [r, branch], () => {
        const rec = repo("deleteBranch", r);
        if (!rec.branches.has(branch)) return false;
        if (branch === rec.defaultBranch)
          throw new Error(
            `memoryGitHub.deleteBranch: ${branch} is the default branch of ${rec.fullName}; not modelled`,
          );
        deleteBranchOf(rec, branch);
        return true;
      }),
    compare: (r, base, head) =>
      call("compare", [r, base, head], () => {
        const rec = repo("compare", r);
        const b = resolve(rec, base);
        const h = resolve(rec, head);
        return b && h ? comparison(rec, b, h) : null;
      }),

    pullsForCommit: (r, sha) =>
      call("pullsForCommit", [r, sha], () => {
        const rec = repo("pullsForCommit", r);
        return [...rec.pulls.values()].filter((p) => p.headSha === sha).map((p) => pullInfo(rec, p));
      }),
    reviewComments: (r, pull, reviewId) =>
      call("reviewComments", [r, pull, reviewId], () => {
        const found = repo("reviewComments", r).reviews.get(`${pull}:${reviewId}`);
        if (!found) throw refusal("reviewComments", 404, "Not Found");
        return found.map((c) => ({ ...c }));
      }),
    issuesLabelled: (r, labels) =>
      call("issuesLabelled", [r, labels], () => {
        const rec = repo("issuesLabelled", r);
        const wanted = new Set(labels.map((l) => l.toLowerCase()));
        return [...rec.issues.values()]
          .filter((i) => !i.deleted && !i.isPullRequest && i.labels.some((l) => wanted.has(l.toLowerCase())))
          .map((i): LabelledIssue => {
            // The query reads the last 20 labelling events; the last adder of each label asked for is kept.
            const last = new Map<string, LabelEvent>();
            for (const e of i.labelEvents.slice(-20))
              if (wanted.has(e.label.toLowerCase())) last.set(e.label.toLowerCase(), { ...e });
            return {
              number: i.number,
              state: i.state,
              isPullRequest: false,
              title: i.title,
              body: i.body,
              labels: [...i.labels],
              labelledBy: [...last.values()],
              subIssues: i.subIssues.slice(0, 50).map((s) => ({ ...s })),
              subIssuesTotal: i.subIssues.length,
            };
          });
      }),
    installationRepos: () =>
      call("installationRepos", [], () => [...repos.values()].filter((x) => x.installed).map((x) => x.fullName)),
    openPullsInto: (r, base) =>
      call("openPullsInto", [r, base], () => {
        const rec = repo("openPullsInto", r);
        return [...rec.pulls.values()]
          .filter((p) => p.baseRef === base && rec.issues.get(p.number)?.state === "open")
          .map((p): PullMergeability => ({
            number: p.number,
            headRef: p.headRef,
            headSha: p.headSha,
            headRepo: p.headRepo,
            baseRef: p.baseRef,
            baseSha: rec.branches.get(p.baseRef) ?? "",
            isDraft: p.isDraft,
            mergeable: p.mergeable,
            mergeState: mergeState(rec, p),
            reviewDecision: p.reviewDecision,
            checks: rollup(rec, p.headSha),
          }));
      }),

    checkRunsForRef: (r, ref, _opts?: { all?: boolean }) =>
      call("checkRunsForRef", [r, ref], () => {
        const rec = repo("checkRunsForRef", r);
        const sha = resolve(rec, ref);
        if (!sha) throw refusal("checkRunsForRef", 422, `No commit found for SHA: ${ref}`);
        return [...rec.checkRuns.values()].filter((c) => c.headSha === sha).map((c) => checkRunInfo(rec, c));
      }),
    jobLogTail: (r, jobId, lines) =>
      call("jobLogTail", [r, jobId, lines], () => {
        const log = repo("jobLogTail", r).logs.get(jobId);
        return log === undefined ? null : logTail(log, lines);
      }),
    createCheckRun: (r, run) =>
      call("createCheckRun", [r, run], () => {
        const rec = repo("createCheckRun", r);
        if (!rec.commits.has(run.headSha))
          throw refusal("createCheckRun", 422, `No commit found for SHA: ${run.headSha}`);
        let suite = rec.appSuites.get(run.headSha);
        if (suite === undefined) {
          suite = nextId++;
          rec.appSuites.set(run.headSha, suite);
          rec.suites.add(suite);
        }
        const id = nextId++;
        rec.checkRuns.set(id, {
          id,
          name: run.name,
          headSha: run.headSha,
          status: run.status,
          conclusion: run.conclusion ?? null,
          output: { title: run.title, summary: run.summary },
          checkSuiteId: suite,
          workflowRunId: null,
          by: "app",
        });
        return id;
      }),
    updateCheckRun: (r, checkRunId, run) =>
      call("updateCheckRun", [r, checkRunId, run], () => {
        const c = repo("updateCheckRun", r).checkRuns.get(checkRunId);
        if (!c) throw refusal("updateCheckRun", 404, "Not Found");
        if (c.by !== "app") throw refusal("updateCheckRun", 403, "Resource not accessible by integration");
        c.status = run.status;
        if (run.conclusion) c.conclusion = run.conclusion;
        c.output = { ...c.output, title: run.title, summary: run.summary };
      }),
    rerequestCheckSuite: (r, checkSuiteId) =>
      call("rerequestCheckSuite", [r, checkSuiteId], () => {
        const rec = repo("rerequestCheckSuite", r);
        if (!rec.suites.has(checkSuiteId)) throw refusal("rerequestCheckSuite", 404, "Not Found");
        rec.rerequested.push(checkSuiteId);
      }),
    rerunFailedJobs: (r, workflowRunId) =>
      call("rerunFailedJobs", [r, workflowRunId], () => {
        const rec = repo("rerunFailedJobs", r);
        const run = rec.workflowRuns.get(workflowRunId);
        if (!run) throw refusal("rerunFailedJobs", 404, "Not Found");
        if (run.status !== "completed") throw refusal("rerunFailedJobs", 403, "This workflow is already running");
        // The failed jobs are queued again (in place: the fake keeps one attempt of each job).
        for (const c of rec.checkRuns.values()) {
          if (c.workflowRunId !== workflowRunId || !c.conclusion || !FAILED.has(c.conclusion)) continue;
          c.status = "queued";
          c.conclusion = null;
        }
        run.status = "queued";
        run.conclusion = null;
        run.reruns++;
      }),
    dispatchWorkflow: (r, workflow, ref, inputs) =>
      call("dispatchWorkflow", [r, workflow, ref, inputs], () => {
        const rec = repo("dispatchWorkflow", r);
        const wf = rec.workflows.get(workflow);
        if (!wf) throw refusal("dispatchWorkflow", 404, "Not Found");
        if (!wf.dispatchable)
          throw refusal("dispatchWorkflow", 422, "Workflow does not have 'workflow_dispatch' trigger");
        const branch = ref.replace(/^refs\/heads\//, "");
        const headSha = rec.branches.get(branch);
        if (!headSha) throw refusal("dispatchWorkflow", 422, `No ref found for: ${ref}`);
        const id = nextId++;
        const suite = nextId++;
        rec.suites.add(suite);
        rec.workflowRuns.set(id, {
          id,
          workflow,
          displayTitle: wf.runName.replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_m, k: string) => inputs[k] ?? ""),
          status: "queued",
          conclusion: null,
          createdAt: now().toISOString(),
          event: "workflow_dispatch",
          headSha,
          headBranch: branch,
          inputs: { ...inputs },
          checkSuiteId: suite,
          reruns: 0,
        });
        return { workflowRunId: wf.returnsRunId ? id : null };
      }),
    dispatchedRuns: (r, workflow, since) =>
      call("dispatchedRuns", [r, workflow, since], () => {
        const rec = repo("dispatchedRuns", r);
        if (!rec.workflows.has(workflow)) throw refusal("dispatchedRuns", 404, "Not Found");
        return [...rec.workflowRuns.values()]
          .filter((w) => w.workflow === workflow && w.event === "workflow_dispatch")
          .filter((w) => Date.parse(w.createdAt) >= since.getTime())
          .sort((a, b) => b.id - a.id)
          .map((w): WorkflowRunInfo => ({
            id: w.id,
            displayTitle: w.displayTitle,
            status: w.status,
            createdAt: w.createdAt,
          }));
      }),

    permission: (r, username) =>
      call("permission", [r, username], () => repo("permission", r).permissions.get(username) ?? "none"),

    readConfig: (r, path) =>
      call("readConfig", [r, path], () => {
        // The repository's file, else the one in the owner's `.github` repository (when the fake has it).
        const own = repo("readConfig", r).configs;
        if (own.has(path)) return structuredClone(own.get(path));
        const org = repos.get(`${r.owner}/.github`)?.configs;
        return org?.has(path) ? structuredClone(org.get(path)) : null;
      }),

    revokeToken: (token) =>
      call("revokeToken", [token], () => {
        if (!liveTokens.has(token)) return "unknown" as const;
        liveTokens.delete(token);
        return "revoked" as const;
      }),
  } satisfies GitHub;

  // ---- the test's controls ----

  return {
    ...port,

    /** Every port call, in order. */
    calls,
    /** The calls of one method. */
    callsTo: (method: PortMethod) => calls.filter((c) => c.method === method),

    fail,
    /** The next call of `method` throws `error`. */
    failNext: (method: PortMethod, error: Error | (() => Error), opts: Omit<FailOptions, "times"> = {}): void =>
      fail(method, error, { ...opts, times: 1 }),
    /** How many more calls of `method` will throw an injected error. */
    failuresLeft: (method: PortMethod) => (failures.get(method) ?? []).reduce((n, f) => n + f.left, 0),
    clearFailures(): void {
      failures.clear();
    },

    // ---- arranging GitHub's state (not recorded as calls) ----

    addRepo,
    /** GitHub accepts this installation token (until revokeToken). */
    addToken(token: string): void {
      liveTokens.add(token);
    },
    tokenLive: (token: string) => liveTokens.has(token),
    /** An issue opened by someone (default "octocat"). */
    addIssue(repoName: string, seed: IssueSeed = {}): IssueInfo {
      return issueInfo(openIssue(repoOf("addIssue", repoName), seed, false));
    },
    /** The issue is deleted: GitHub answers 410 for it from now on. */
    deleteIssue(repoName: string, number: number): void {
      seeded("deleteIssue", repoOf("deleteIssue", repoName).issues, number, "issue").deleted = true;
    },
    setIssueState(repoName: string, number: number, state: "open" | "closed"): void {
      seeded("setIssueState", repoOf("setIssueState", repoName).issues, number, "issue").state = state;
    },
    /** Someone other than the App adds labels (a User by default). */
    label(
      repoName: string,
      number: number,
      labels: string[],
      by: { actor: string; actorType?: LabelEvent["actorType"] },
    ): void {
      const rec = repoOf("label", repoName);
      addLabelsTo(rec, seeded("label", rec.issues, number, "issue"), labels, by.actor, by.actorType ?? "User");
    },
    /** A comment by someone (default "octocat"). */
    addComment(repoName: string, number: number, body: string, opts: { author?: string; at?: Date } = {}): CommentInfo {
      const rec = repoOf("addComment", repoName);
      return commentInfo(
        addComment(rec, seeded("addComment", rec.issues, number, "issue"), body, opts.author ?? "octocat", opts.at),
      );
    },
    setBlockedBy(repoName: string, number: number, blockers: BlockerInfo[]): void {
      seeded("setBlockedBy", repoOf("setBlockedBy", repoName).issues, number, "issue").blockedBy = [...blockers];
    },
    /**
     * A new commit on `branch` (made from `from`, default the default branch, when it is not there yet); answers
     * its sha (`sha` to choose it). Open pull requests from the branch follow.
     */
    commit(repoName: string, branch: string, opts: { sha?: string; from?: string } = {}): string {
      return commitOn(repoOf("commit", repoName), branch, opts);
    },
    /** A pull request opened by someone (default "octocat"). */
    addPull(repoName: string, seed: PullSeed): PullInfo {
      const rec = repoOf("addPull", repoName);
      return pullInfo(rec, openPull(rec, seed, seed.author ?? "octocat"));
    },
    /**
     * Merges an open pull request as GitHub does: a merge commit on the base, the pull request closed and merged,
     * the issues it closes closed when the base is the default branch, its head deleted when the repository
     * deletes merged branches.
     */
    mergePull(repoName: string, number: number): PullInfo {
      const rec = repoOf("mergePull", repoName);
      const p = seeded("mergePull", rec.pulls, number, "pull request");
      const issue = rec.issues.get(number)!;
      if (issue.state !== "open") throw new Error(`memoryGitHub.mergePull: #${number} is not open`);
      const merge = newCommit(rec, [rec.branches.get(p.baseRef)!, p.headSha]);
      rec.branches.set(p.baseRef, merge);
      issue.state = "closed";
      p.merged = true;
      p.mergeCommitSha = merge;
      if (p.baseRef === rec.defaultBranch)
        for (const n of closesOf(rec, p)) {
          const closed = rec.issues.get(n);
          if (closed && !closed.isPullRequest) closed.state = "closed";
        }
      if (rec.deletesMergedBranches && p.headRepo === rec.fullName) deleteBranchOf(rec, p.headRef);
      return pullInfo(rec, p);
    },
    /** A check run made by another App (the App's own are made through the port). */
    addCheckRun(
      repoName: string,
      seed: Pick<NewCheckRun, "name" | "headSha"> & { status?: string; conclusion?: string | null; summary?: string },
    ): CheckRunInfo {
      const rec = repoOf("addCheckRun", repoName);
      if (!rec.commits.has(seed.headSha)) throw new Error(`memoryGitHub.addCheckRun: no commit ${seed.headSha}`);
      const id = nextId++;
      const suite = nextId++;
      rec.suites.add(suite);
      const c: CheckRunRec = {
        id,
        name: seed.name,
        headSha: seed.headSha,
        status: seed.status ?? (seed.conclusion ? "completed" : "queued"),
        conclusion: seed.conclusion ?? null,
        output: seed.summary === undefined ? {} : { summary: seed.summary },
        checkSuiteId: suite,
        workflowRunId: null,
        by: "other",
      };
      rec.checkRuns.set(id, c);
      return checkRunInfo(rec, c);
    },
    /**
     * A workflow run (completed unless `status` says otherwise) whose jobs are check runs with the same ids, as
     * GitHub links them; a job's `log` is what jobLogTail reads.
     */
    addWorkflowRun(
      repoName: string,
      seed: {
        workflow: string;
        /** Default: the default branch. */
        branch?: string;
        event?: string;
        status?: string;
        displayTitle?: string;
        jobs: Array<{ name: string; status?: string; conclusion?: string | null; summary?: string; log?: string }>;
      },
    ): { run: StoredWorkflowRun; jobs: CheckRunInfo[] } {
      const rec = repoOf("addWorkflowRun", repoName);
      const branch = seed.branch ?? rec.defaultBranch;
      const headSha = rec.branches.get(branch);
      if (!headSha) throw new Error(`memoryGitHub.addWorkflowRun: no branch ${branch} in ${repoName}`);
      const id = nextId++;
      const suite = nextId++;
      rec.suites.add(suite);
      const jobs = seed.jobs.map((j): CheckRunRec => {
        const job: CheckRunRec = {
          id: nextId++,
          name: j.name,
          headSha,
          status: j.status ?? "completed",
          conclusion: (j.status ?? "completed") === "completed" ? (j.conclusion ?? "success") : null,
          output: j.summary === undefined ? {} : { summary: j.summary },
          checkSuiteId: suite,
          workflowRunId: id,
          by: "actions",
        };
        rec.checkRuns.set(job.id, job);
        if (j.log !== undefined) rec.logs.set(job.id, j.log);
        return job;
      });
      const status = seed.status ?? "completed";
      const run: StoredWorkflowRun = {
        id,
        workflow: seed.workflow,
        displayTitle: seed.displayTitle ?? seed.workflow.replace(/\.ya?ml$/, ""),
        status,
        conclusion:
          status !== "completed"
            ? null
            : jobs.some((j) => j.conclusion && FAILED.has(j.conclusion))
              ? "failure"
              : "success",
        createdAt: now().toISOString(),
        event: seed.event ?? "push",
        headSha,
        headBranch: branch,
        inputs: {},
        checkSuiteId: suite,
        reruns: 0,
      };
      rec.workflowRuns.set(id, run);
      return { run: { ...run }, jobs: jobs.map((j) => checkRunInfo(rec, j)) };
    },
    addReviewComments(repoName: string, pull: number, reviewId: number, list: ReviewCommentInfo[]): void {
      const rec = repoOf("addReviewComments", repoName);
      seeded("addReviewComments", rec.pulls, pull, "pull request");
      rec.reviews.set(`${pull}:${reviewId}`, [...(rec.reviews.get(`${pull}:${reviewId}`) ?? []), ...list]);
    },
    setPermission(repoName: string, user: string, permission: Permission): void {
      repoOf("setPermission", repoName).permissions.set(user, permission);
    },
    setConfig(repoName: string, path: string, config: unknown): void {
      repoOf("setConfig", repoName).configs.set(path, config);
    },

    // ---- reading GitHub's state (not recorded as calls) ----

    /** The issue as GitHub has it; undefined when there is none or it was deleted. */
    issue(repoName: string, number: number): IssueInfo | undefined {
      const i = repoOf("issue", repoName).issues.get(number);
      return i && !i.deleted ? issueInfo(i) : undefined;
    },
    pull(repoName: string, number: number): PullInfo | undefined {
      const rec = repoOf("pull", repoName);
      const p = rec.pulls.get(number);
      return p ? pullInfo(rec, p) : undefined;
    },
    branch(repoName: string, name: string): string | undefined {
      return repoOf("branch", repoName).branches.get(name);
    },
    /** The comments on an issue, oldest first, with when they were made and their reactions. */
    comments(repoName: string, number: number): StoredComment[] {
      const name = repoOf("comments", repoName).fullName;
      return [...comments.values()]
        .filter((c) => c.repo === name && c.issue === number)
        .map((c) => ({ ...c, reactions: c.reactions.map((x) => ({ ...x })) }));
    },
    /** Every check run of the repository, oldest first (or those on one commit). */
    checkRuns(repoName: string, headSha?: string): CheckRunInfo[] {
      const rec = repoOf("checkRuns", repoName);
      return [...rec.checkRuns.values()]
        .filter((c) => headSha === undefined || c.headSha === headSha)
        .map((c) => checkRunInfo(rec, c));
    },
    workflowRuns(repoName: string): StoredWorkflowRun[] {
      return [...repoOf("workflowRuns", repoName).workflowRuns.values()].map((w) => ({
        ...w,
        inputs: { ...w.inputs },
      }));
    },
    /** The check suites rerequested, in order. */
    rerequestedSuites(repoName: string): number[] {
      return [...repoOf("rerequestedSuites", repoName).rerequested];
    },
  };
}
