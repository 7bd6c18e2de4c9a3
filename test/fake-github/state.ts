/**
 * The fake's world: installations, repositories and everything in them, plus
 * helpers to arrange fixtures. Routes read and write this state directly, and
 * tests may too (`fake.state`), so keep invariants inside these methods rather
 * than in the routes.
 *
 * Git is modelled as a commit graph (sha → parents) with branches pointing
 * into it, so `compare`, "behind base" and "commits ahead" fall out of the
 * same data the refs API changes.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Description } from "./openapi.js";
import { Dependencies, type IssueAt } from "./dependencies.js";
import { createFork, crossHead, headRepoOf, pullsFromBranch, shareCommits } from "./forks.js";
import { GitHost, type GitOptions } from "./git/host.js";
import type { GitRepo } from "./git/repository.js";
import { reviewDecision, type NewReviewComment, type ReviewComment } from "./pull-reads.js";
import { HookDeliveries } from "./routes/hooks.js";
import { SubIssues } from "./sub-issues.js";

export type Role = "admin" | "maintain" | "write" | "triage" | "read" | "none";
export type CheckStatus = "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
export type CheckConclusion =
  | "success"
  | "failure"
  | "neutral"
  | "cancelled"
  | "skipped"
  | "timed_out"
  | "action_required"
  | "startup_failure"
  | "stale";
export type Mergeable = "MERGEABLE" | "CONFLICTING" | "UNKNOWN";
export type MergeStateStatus =
  "BEHIND" | "BLOCKED" | "CLEAN" | "DIRTY" | "DRAFT" | "HAS_HOOKS" | "UNKNOWN" | "UNSTABLE";

export interface User {
  login: string;
  id: number;
  type: "User" | "Bot" | "Organization";
}

export interface Installation {
  id: number;
  account: string;
  accountType: "Organization" | "User";
  permissions: Record<string, string>;
  events: string[];
  repositorySelection: "all" | "selected";
  createdAt: Date;
  suspendedAt: Date | null;
}

export interface AccessToken {
  token: string;
  installationId: number;
  /** What GitHub answers as expires_at: an hour after it was minted, on the fake's clock. */
  expiresAt: Date;
  /**
   * When GitHub stops accepting it, on the real clock. The App's installation
   * tokens are cached by Octokit, which times its cache on the real clock
   * whatever the rig's clock says: a rig clock moved forward an hour must not
   * expire a token Octokit still rightly holds.
   */
  validUntilMs: number;
  /** what the token may do: the installation's, or fewer when it was minted with `permissions` */
  permissions: Record<string, string>;
  /** lower-case full names when the token was narrowed to some repositories */
  repositories: string[] | null;
  /** set by `DELETE /installation/token`: GitHub answers 401 to the token from then on */
  revokedAt?: Date | null;
}

export interface Label {
  id: number;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export interface Issue {
  number: number;
  id: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  stateReason: "completed" | "not_planned" | "reopened" | "duplicate" | null;
  user: string;
  /** label names as applied (canonical case from the repo label) */
  labels: string[];
  assignees: string[];
  locked: boolean;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  closedBy: string | null;
  /** true when this issue number is a pull request */
  isPull: boolean;
}

/** A label added to an issue or pull request (GraphQL's `LabeledEvent` on its timeline). */
export interface LabelEvent {
  id: number;
  issueNumber: number;
  /** the repository label's id (its current name is the event's label name, as after a rename on GitHub) */
  labelId: number;
  /** the name it had when added, should the label be deleted since */
  labelName: string;
  /** who added it */
  actor: string;
  createdAt: Date;
}

export interface Comment {
  id: number;
  issueNumber: number;
  body: string;
  user: string;
  createdAt: Date;
  updatedAt: Date;
  /** authored through the App's installation token */
  viaApp: boolean;
}

export interface Reaction {
  id: number;
  subject: { kind: "comment"; id: number } | { kind: "issue"; number: number };
  user: string;
  content: string;
  createdAt: Date;
}

export interface Pull {
  number: number;
  id: number;
  headRef: string;
  /** a cross-repository pull request: the fork (full name) whose branch `headRef` is; absent when the head is in this repository */
  headRepo?: string;
  /** live while the head branch exists; frozen when it is deleted */
  headSha: string;
  baseRef: string;
  draft: boolean;
  merged: boolean;
  mergedAt: Date | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  maintainerCanModify: boolean;
  /** the head cannot merge cleanly into the base */
  conflicting: boolean;
  /** force the GraphQL/REST mergeability answer (e.g. UNKNOWN while GitHub computes it) */
  mergeableOverride: Mergeable | null;
  mergeStateOverride: MergeStateStatus | null;
  /** issues linked by hand (closing keywords in the body are parsed on the fly) */
  linkedIssues: number[];
}

export interface Review {
  id: number;
  pullNumber: number;
  user: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";
  body: string;
  commitId: string;
  submittedAt: Date;
}

export interface Commit {
  sha: string;
  parents: string[];
  message: string;
  author: string;
  date: Date;
  tree: string;
}

export interface CheckSuite {
  id: number;
  headSha: string;
  headBranch: string | null;
  /** the fork whose branch the suite ran on (a fork pull request's workflow runs); null for this repository's */
  headRepo: string | null;
  app: AppKey;
  createdAt: Date;
  updatedAt: Date;
  /** set when GitHub Actions owns the suite */
  workflowRunId: number | null;
  rerequested: number;
}

export interface CheckRun {
  id: number;
  suiteId: number;
  headSha: string;
  name: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  startedAt: Date;
  completedAt: Date | null;
  output: { title: string | null; summary: string | null; text: string | null; annotationsCount: number };
  detailsUrl: string | null;
  externalId: string | null;
  app: AppKey;
  rerequested: number;
}

/** "self" is the App under test; "github-actions" owns workflow jobs. */
export type AppKey = "self" | "github-actions";

export interface WorkflowInput {
  required?: boolean;
  default?: string;
  type?: "string" | "boolean" | "number" | "choice" | "environment";
  options?: string[];
}

export interface Workflow {
  id: number;
  name: string;
  path: string;
  state: "active" | "disabled_manually";
  /** has an `on: workflow_dispatch` trigger (422 on dispatch otherwise) */
  dispatchable: boolean;
  /** declared workflow_dispatch inputs; null accepts anything */
  inputs: Record<string, WorkflowInput> | null;
  /** queue a workflow run when dispatched, as GitHub does */
  createRunOnDispatch: boolean;
  /** the workflow's `run-name:`, its `${{ inputs.X }}` filled from a dispatch's inputs; null: the workflow's name */
  runName: string | null;
  /** a dispatch asking for `return_run_details` gets the run's id (false: 204, as GitHub did before) */
  returnsRunDetails: boolean;
  createdAt: Date;
}

export interface WorkflowRun {
  id: number;
  workflowId: number;
  name: string;
  displayTitle: string;
  headBranch: string | null;
  headSha: string;
  /** the fork whose branch the run is for (a fork pull request's `pull_request` run); null for this repository's */
  headRepo: string | null;
  event: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  runNumber: number;
  runAttempt: number;
  actor: string;
  createdAt: Date;
  updatedAt: Date;
  runStartedAt: Date;
  checkSuiteId: number;
}

export interface Job {
  /** equal to the id of the job's check run, as on GitHub */
  id: number;
  runId: number;
  runAttempt: number;
  name: string;
  steps: { name: string; status: CheckStatus; conclusion: CheckConclusion | null; number: number }[];
  labels: string[];
  runnerName: string | null;
}

export interface Dispatch {
  repo: string;
  workflowId: number;
  workflowPath: string;
  ref: string;
  inputs: Record<string, unknown>;
  runId: number | null;
  at: Date;
}

export interface Rerun {
  repo: string;
  kind: "run" | "failed-jobs" | "job" | "check-run" | "check-suite";
  id: number;
  at: Date;
}

export class Repo {
  readonly labels = new Map<string, Label>();
  readonly issues = new Map<number, Issue>();
  /** numbers of issues deleted (GitHub answers 410 Gone for them; see FakeState.deleteIssue) */
  readonly deletedIssues = new Set<number>();
  readonly pulls = new Map<number, Pull>();
  readonly comments = new Map<number, Comment>();
  readonly reactions: Reaction[] = [];
  /** every label added to an issue or pull request, in order (see FakeState.applyLabels) */
  readonly labelEvents: LabelEvent[] = [];
  readonly reviews: Review[] = [];
  readonly reviewComments: ReviewComment[] = [];
  /** base branches whose pull requests need an approving review (see FakeState.requireReviews) */
  readonly reviewsRequired = new Set<string>();
  readonly commits = new Map<string, Commit>();
  readonly branches = new Map<string, string>();
  readonly tags = new Map<string, string>();
  /** branch name → path → content */
  readonly files = new Map<string, Map<string, string>>();
  readonly permissions = new Map<string, Role>();
  readonly checkSuites = new Map<number, CheckSuite>();
  readonly checkRuns = new Map<number, CheckRun>();
  readonly workflows = new Map<number, Workflow>();
  readonly workflowRuns = new Map<number, WorkflowRun>();
  readonly jobs = new Map<number, Job>();
  /** job id → its log's text; null when the log has expired (see FakeState.setJobLog) */
  readonly jobLogs = new Map<number, string | null>();
  lastNumber = 0;
  /** GitHub's "Automatically delete head branches": a merge deletes the pull request's branch */
  deleteBranchOnMerge = false;
  /** set when the repository is backed by a real bare repository (see git/host.ts): git is then the truth */
  git: GitRepo | null = null;
  /** set on a fork: the repository it was forked from (see forks.ts) */
  parent: Repo | null = null;

  constructor(
    readonly id: number,
    readonly owner: string,
    readonly name: string,
    public defaultBranch: string,
    public installationId: number | null,
    public isPrivate: boolean,
    readonly createdAt: Date,
  ) {}

  get fullName(): string {
    return `${this.owner}/${this.name}`;
  }
}

export interface AppIdentity {
  id: number;
  slug: string;
  name: string;
  owner: string;
  clientId: string;
}

const ACTIONS_APP = { id: 15368, slug: "github-actions", name: "GitHub Actions", owner: "github" };

/**
 * What the App asks for and an installation grants unless a test says
 * otherwise: exactly app.yml's default_permissions and default_events
 * (test/cli/doctor-compare.test.ts holds the two together).
 */
export const DEFAULT_PERMISSIONS: Readonly<Record<string, string>> = {
  metadata: "read",
  issues: "write",
  pull_requests: "write",
  contents: "write",
  checks: "write",
  actions: "write",
};

export const DEFAULT_EVENTS: readonly string[] = [
  "issues",
  "issue_comment",
  "sub_issues",
  "issue_dependencies",
  "pull_request",
  "pull_request_review",
  "check_run",
  "check_suite",
  "workflow_run",
  "workflow_job",
  "push",
];

const CONCLUSION_RANK: CheckConclusion[] = [
  "action_required",
  "startup_failure",
  "failure",
  "timed_out",
  "cancelled",
  "stale",
  "neutral",
  "skipped",
  "success",
];

/** `fixes #12`, `Closes owner/repo#12` — GitHub's closing keywords. */
const CLOSING_RE = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:([\w.-]+\/[\w.-]+))?#(\d+)\b/gi;

export interface FakeHost {
  description: Description;
  installedVersion: string | null;
  dependencies: boolean;
}

export class FakeState {
  readonly users = new Map<string, User>();
  readonly installations = new Map<number, Installation>();
  readonly tokens = new Map<string, AccessToken>();
  readonly repos = new Map<string, Repo>();
  /** every accepted workflow dispatch, in order */
  readonly dispatches: Dispatch[] = [];
  /** every accepted rerun / rerequest, in order */
  readonly reruns: Rerun[] = [];
  /** issue dependencies ("blocked by"), across repositories */
  readonly dependencies = new Dependencies(() => this.repos.values());
  /** the App's webhook deliveries, one item per attempt (routes/hooks.ts) */
  readonly hookDeliveries = new HookDeliveries(() => this.now());
  /** sub-issues (parent → children), across repositories */
  readonly subIssues = new SubIssues(() => this.repos.values());
  /** git-backed repositories, served over smart HTTP, and the pushes they received (git/host.ts) */
  readonly git: GitHost = new GitHost(this);
  /** replace to freeze or move time */
  clock: () => Date = () => new Date();
  /** what the App itself asks for (`GET /app`); an installation keeps what it accepted, which may lag behind */
  /**
   * The host this fake plays (startFakeGitHub's `host`): which description it
   * answers from, the release GET /meta states (null on api.github.com and
   * GHEC), and whether it has issue dependencies (their route is in its
   * description; without them issues carry no `issue_dependencies_summary`).
   */
  host: FakeHost = { description: "api.github.com", installedVersion: null, dependencies: true };
  appPermissions: Record<string, string> = { ...DEFAULT_PERMISSIONS };
  appEvents: string[] = [...DEFAULT_EVENTS];
  private seq = 1_000_000;
  private shaSeq = 0;

  constructor(readonly app: AppIdentity) {
    this.user(this.botLogin, "Bot");
    this.user(`${ACTIONS_APP.slug}[bot]`, "Bot");
  }

  get botLogin(): string {
    return `${this.app.slug}[bot]`;
  }

  get actionsApp(): typeof ACTIONS_APP {
    return ACTIONS_APP;
  }

  now(): Date {
    return this.clock();
  }

  nextId(): number {
    return ++this.seq;
  }

  newSha(seed = ""): string {
    return createHash("sha1")
      .update(`${++this.shaSeq}:${seed}:${randomBytes(4).toString("hex")}`)
      .digest("hex");
  }

  // ---- users and installations -------------------------------------------

  /** Get or create a user; logins are case-insensitive as on GitHub. */
  user(login: string, type?: User["type"]): User {
    const key = login.toLowerCase();
    let u = this.users.get(key);
    if (!u) {
      const t = type ?? (login.endsWith("[bot]") ? "Bot" : "User");
      u = { login, id: this.nextId(), type: t };
      this.users.set(key, u);
    } else if (type && u.type !== type) {
      u.type = type;
    }
    return u;
  }

  addInstallation(
    id: number,
    account: string,
    opts: { accountType?: Installation["accountType"]; permissions?: Record<string, string>; events?: string[] } = {},
  ): Installation {
    const inst: Installation = {
      id,
      account,
      accountType: opts.accountType ?? "Organization",
      permissions: { ...DEFAULT_PERMISSIONS, ...opts.permissions },
      events: [...(opts.events ?? DEFAULT_EVENTS)],
      repositorySelection: "all",
      createdAt: this.now(),
      suspendedAt: null,
    };
    this.user(account, inst.accountType);
    this.installations.set(id, inst);
    return inst;
  }

  issueToken(installationId: number, ttlMs = 60 * 60 * 1000): AccessToken {
    const inst = this.installations.get(installationId);
    const token: AccessToken = {
      token: `ghs_${randomBytes(18).toString("base64url")}`,
      installationId,
      expiresAt: new Date(this.now().getTime() + ttlMs),
      validUntilMs: Date.now() + ttlMs,
      permissions: { ...(inst?.permissions ?? DEFAULT_PERMISSIONS) },
      repositories: null,
      revokedAt: null,
    };
    this.tokens.set(token.token, token);
    return token;
  }

  /** GitHub still accepts the token: issued, not expired (real clock, as Octokit caches it), not revoked. */
  tokenLive(token: string): boolean {
    const t = this.tokens.get(token);
    return Boolean(t && !t.revokedAt && t.validUntilMs > Date.now());
  }

  /** Make every issued installation token invalid (the App must fetch a new one). */
  expireTokens(): void {
    const past = new Date(this.now().getTime() - 1000);
    for (const t of this.tokens.values()) {
      t.expiresAt = past;
      t.validUntilMs = 0;
    }
  }

  // ---- repositories -------------------------------------------------------

  addRepo(
    fullName: string,
    opts: {
      defaultBranch?: string;
      installationId?: number;
      private?: boolean;
      id?: number;
      /** back it by a real bare repository, cloneable and pushable over HTTP (see git/host.ts) */
      git?: boolean | GitOptions;
    } = {},
  ): Repo {
    const [owner, name] = splitRepo(fullName);
    let installationId = opts.installationId ?? null;
    if (installationId === null) {
      const mine = [...this.installations.values()].filter((i) => i.account.toLowerCase() === owner.toLowerCase());
      if (mine.length === 1) installationId = mine[0]!.id;
    } else if (!this.installations.has(installationId)) {
      this.addInstallation(installationId, owner);
    }
    const repo = new Repo(
      opts.id ?? this.nextId(),
      owner,
      name,
      opts.defaultBranch ?? "main",
      installationId,
      opts.private ?? true,
      this.now(),
    );
    this.user(owner);
    this.repos.set(fullName.toLowerCase(), repo);
    const root = this.commit(repo, [], "Initial commit", owner);
    repo.branches.set(repo.defaultBranch, root.sha);
    if (opts.git) this.git.enable(repo, opts.git === true ? {} : opts.git);
    return repo;
  }

  /**
   * Fork `sourceRepo` into `forkOwner/<name>`: a repository of its own
   * (`fork: true`, its own issue numbers) that starts with the source's
   * commits and branches. Pull requests from it are opened in the parent:
   * `addPull(parent, { head, headRepo: fork })`.
   */
  addFork(sourceRepo: string, forkOwner: string): Repo {
    if (this.repo(sourceRepo).git) throw new Error(`fake GitHub: forks of a git-backed repository are not modelled`);
    return createFork(this, sourceRepo, forkOwner);
  }

  findRepo(fullName: string): Repo | undefined {
    return this.repos.get(fullName.toLowerCase());
  }

  repo(fullName: string): Repo {
    const r = this.findRepo(fullName);
    if (!r) throw new Error(`fake GitHub: no repository ${fullName} (addRepo it first)`);
    return r;
  }

  setPermission(repoName: string, username: string, role: Role): void {
    this.user(username);
    this.repo(repoName).permissions.set(username.toLowerCase(), role);
  }

  /**
   * The role GitHub would report. The owner of a user-owned repository is
   * admin; anyone else without a grant can read a public repository and has
   * no access to a private one.
   */
  roleOf(repo: Repo, username: string): Role {
    const explicit = repo.permissions.get(username.toLowerCase());
    if (explicit) return explicit;
    const owner = this.users.get(repo.owner.toLowerCase());
    if (owner?.type === "User" && owner.login.toLowerCase() === username.toLowerCase()) return "admin";
    return repo.isPrivate ? "none" : "read";
  }

  setFile(repoName: string, path: string, content: string, opts: { branch?: string } = {}): void {
    const repo = this.repo(repoName);
    if (repo.git) throw gitOwnsFiles(repo);
    const branch = opts.branch ?? repo.defaultBranch;
    let files = repo.files.get(branch);
    if (!files) repo.files.set(branch, (files = new Map()));
    files.set(path.replace(/^\/+/, ""), content);
  }

  deleteFile(repoName: string, path: string, opts: { branch?: string } = {}): void {
    const repo = this.repo(repoName);
    if (repo.git) throw gitOwnsFiles(repo);
    repo.files.get(opts.branch ?? repo.defaultBranch)?.delete(path.replace(/^\/+/, ""));
  }

  // ---- labels, issues, comments -------------------------------------------

  addLabel(repoName: string, name: string, opts: { color?: string; description?: string | null } = {}): Label {
    const repo = this.repo(repoName);
    const existing = repo.labels.get(name.toLowerCase());
    if (existing) return existing;
    const label: Label = {
      id: this.nextId(),
      name,
      color: (opts.color ?? "ededed").replace(/^#/, ""),
      description: opts.description ?? null,
      default: false,
    };
    repo.labels.set(name.toLowerCase(), label);
    return label;
  }

  /**
   * Label names resolve case-insensitively to the repo label; missing ones are
   * created. Each label the issue did not carry before is a labeled event by
   * `by`: by default the App's bot, the actor of every REST write (the routes
   * authenticate installation tokens only).
   */
  applyLabels(
    repo: Repo,
    issue: Issue,
    names: string[],
    replace: boolean,
    by: string = this.botLogin,
    at: Date = this.now(),
  ): void {
    const before = new Set(issue.labels.map((n) => n.toLowerCase()));
    const next = replace ? [] : [...issue.labels];
    for (const raw of names) {
      const label = this.addLabel(repo.fullName, raw);
      if (!next.some((n) => n.toLowerCase() === label.name.toLowerCase())) next.push(label.name);
    }
    const actor = this.user(by).login;
    for (const name of next) {
      if (before.has(name.toLowerCase())) continue;
      const label = repo.labels.get(name.toLowerCase())!;
      repo.labelEvents.push({
        id: this.nextId(),
        issueNumber: issue.number,
        labelId: label.id,
        labelName: label.name,
        actor,
        createdAt: at,
      });
    }
    issue.labels = next;
    issue.updatedAt = this.now();
  }

  /** Adds `label` to an issue (or pull request) as `by`, recording who added it and when; no event when it is already there. */
  labelIssue(repoName: string, number: number, label: string, by: string): Issue {
    const issue = this.issue(repoName, number);
    this.applyLabels(this.repo(repoName), issue, [label], false, by);
    return issue;
  }

  /** The labels added to an issue or pull request, oldest first: who added each and when. */
  labelEventsOf(repoName: string, number: number): LabelEvent[] {
    return this.repo(repoName).labelEvents.filter((e) => e.issueNumber === number);
  }

  addIssue(
    repoName: string,
    opts: {
      number?: number;
      title?: string;
      body?: string | null;
      labels?: string[];
      state?: "open" | "closed";
      user?: string;
      assignees?: string[];
      createdAt?: Date;
      /** who added `labels` (default: the author), at `createdAt` */
      labelledBy?: string;
    } = {},
  ): Issue {
    const repo = this.repo(repoName);
    const number = this.takeNumber(repo, opts.number);
    const at = opts.createdAt ?? this.now();
    const issue: Issue = {
      number,
      id: this.nextId(),
      title: opts.title ?? `Issue ${number}`,
      body: opts.body ?? null,
      state: opts.state ?? "open",
      stateReason: opts.state === "closed" ? "completed" : null,
      user: this.user(opts.user ?? "octocat").login,
      labels: [],
      assignees: opts.assignees ?? [],
      locked: false,
      createdAt: at,
      updatedAt: at,
      closedAt: opts.state === "closed" ? at : null,
      closedBy: null,
      isPull: false,
    };
    repo.issues.set(number, issue);
    this.applyLabels(repo, issue, opts.labels ?? [], true, opts.labelledBy ?? issue.user, at);
    issue.updatedAt = at;
    return issue;
  }

  /**
   * Deletes an issue as a repository admin can (GitHub's `deleteIssue`
   * mutation; REST has no delete): it leaves every listing, and REST answers
   * 410 Gone for its number from then on. Its comments and reactions go with it.
   */
  deleteIssue(repoName: string, number: number): Issue {
    const repo = this.repo(repoName);
    const issue = this.issue(repoName, number);
    if (issue.isPull) throw new Error("fake GitHub: pull requests cannot be deleted");
    repo.issues.delete(number);
    repo.deletedIssues.add(number);
    for (const [id, c] of repo.comments) if (c.issueNumber === number) repo.comments.delete(id);
    return issue;
  }

  issue(repoName: string, number: number): Issue {
    const i = this.repo(repoName).issues.get(number);
    if (!i) throw new Error(`fake GitHub: no issue ${repoName}#${number}`);
    return i;
  }

  /** The label names currently on an issue or pull request. */
  labelsOf(repoName: string, number: number): string[] {
    return [...this.issue(repoName, number).labels];
  }

  setIssueState(issue: Issue, state: "open" | "closed", by: string | null, reason?: Issue["stateReason"]): void {
    if (issue.state === state) {
      if (reason !== undefined && state === "closed") issue.stateReason = reason;
      return;
    }
    const now = this.now();
    issue.state = state;
    issue.updatedAt = now;
    if (state === "closed") {
      issue.closedAt = now;
      issue.closedBy = by;
      // null is a real value here: closed pull requests carry no reason
      issue.stateReason = reason === undefined ? "completed" : reason;
    } else {
      issue.closedAt = null;
      issue.closedBy = null;
      issue.stateReason = "reopened";
    }
  }

  closeIssue(repoName: string, number: number, reason: Issue["stateReason"] = "completed"): void {
    this.setIssueState(this.issue(repoName, number), "closed", null, reason);
  }

  /**
   * Mark `repoName#number` as blocked by `blockerRepo#blockerNumber`
   * (GitHub's issue dependencies); the blocker may be in another repository.
   * Idempotent. Pull requests cannot take part, as on GitHub.
   */
  block(repoName: string, number: number, blockerRepo: string, blockerNumber: number): void {
    const [blocked, blocking] = this.dependencyPair(repoName, number, blockerRepo, blockerNumber);
    this.dependencies.add(blocked, blocking);
  }

  /** Remove a "blocked by" edge; false when there was none. */
  unblock(repoName: string, number: number, blockerRepo: string, blockerNumber: number): boolean {
    const [blocked, blocking] = this.dependencyPair(repoName, number, blockerRepo, blockerNumber);
    return this.dependencies.remove(blocked, blocking);
  }

  /** The issues `repoName#number` is blocked by, open or closed, oldest edge first. */
  blockersOf(repoName: string, number: number): IssueAt[] {
    return this.dependencies.blockersOf(this.issue(repoName, number));
  }

  /**
   * Make `childRepo#child` a sub-issue of `repoName#parent` (GitHub's
   * sub-issues; the child may live in another repository). Idempotent. An
   * issue has one parent at most, a parent 100 sub-issues; pull requests
   * cannot take part.
   */
  addSubIssue(repoName: string, parent: number, childRepo: string, child: number): void {
    this.subIssues.add(this.issue(repoName, parent), this.issue(childRepo, child));
  }

  /** The sub-issues of `repoName#number`, open or closed, in the order they were added. */
  subIssuesOf(repoName: string, number: number): IssueAt[] {
    return this.subIssues.childrenOf(this.issue(repoName, number));
  }

  private dependencyPair(repoName: string, number: number, blockerRepo: string, blockerNumber: number): [Issue, Issue] {
    const blocked = this.issue(repoName, number);
    const blocking = this.issue(blockerRepo, blockerNumber);
    if (blocked.isPull || blocking.isPull) throw new Error("fake GitHub: pull requests cannot be issue dependencies");
    return [blocked, blocking];
  }

  addComment(
    repoName: string,
    number: number,
    opts: { body: string; user?: string; createdAt?: Date; viaApp?: boolean },
  ): Comment {
    const repo = this.repo(repoName);
    this.issue(repoName, number);
    const at = opts.createdAt ?? this.now();
    const c: Comment = {
      id: this.nextId(),
      issueNumber: number,
      body: opts.body,
      user: this.user(opts.user ?? "octocat").login,
      createdAt: at,
      updatedAt: at,
      viaApp: opts.viaApp ?? false,
    };
    repo.comments.set(c.id, c);
    return c;
  }

  commentsOn(repoName: string, number: number): Comment[] {
    return [...this.repo(repoName).comments.values()].filter((c) => c.issueNumber === number);
  }

  reactionsOnComment(repoName: string, commentId: number): Reaction[] {
    return this.repo(repoName).reactions.filter((r) => r.subject.kind === "comment" && r.subject.id === commentId);
  }

  private takeNumber(repo: Repo, wanted?: number): number {
    if (wanted !== undefined) {
      if (repo.issues.has(wanted)) throw new Error(`fake GitHub: ${repo.fullName}#${wanted} already exists`);
      repo.lastNumber = Math.max(repo.lastNumber, wanted);
      return wanted;
    }
    return ++repo.lastNumber;
  }

  // ---- git -----------------------------------------------------------------

  commit(repo: Repo, parents: string[], message: string, author = "octocat", sha?: string): Commit {
    if (repo.git) {
      if (sha) throw new Error(`fake GitHub: ${repo.fullName} is git-backed; git chooses its shas`);
      return this.git.commit(repo, repo.git, parents, message, author);
    }
    const c: Commit = {
      sha: sha ?? this.newSha(`${repo.fullName}:${message}`),
      parents,
      message,
      author: this.user(author).login,
      date: this.now(),
      tree: this.newSha("tree"),
    };
    repo.commits.set(c.sha, c);
    return c;
  }

  /**
   * Create a branch `aheadBy` commits ahead of `from` (default: the default
   * branch). `headSha` names the last commit.
   */
  addBranch(
    repoName: string,
    name: string,
    opts: { from?: string; aheadBy?: number; headSha?: string; author?: string } = {},
  ): string {
    const repo = this.repo(repoName);
    const start = this.resolveRef(repo, opts.from ?? repo.defaultBranch);
    if (!start) throw new Error(`fake GitHub: cannot branch ${name} from ${opts.from}`);
    let head = start;
    const n = opts.aheadBy ?? 0;
    for (let i = 1; i <= n; i++) {
      head = this.commit(repo, [head], `${name}: commit ${i}`, opts.author, i === n ? opts.headSha : undefined).sha;
    }
    if (n === 0 && opts.headSha && opts.headSha !== start) {
      throw new Error("fake GitHub: headSha needs aheadBy >= 1 (or omit it)");
    }
    this.moveBranch(repo, name, head);
    return head;
  }

  /** Push `count` new commits onto a branch (e.g. to move a PR's base). */
  addCommits(repoName: string, branch: string, count = 1, opts: { headSha?: string; author?: string } = {}): string {
    const repo = this.repo(repoName);
    let head = repo.branches.get(branch);
    if (!head) throw new Error(`fake GitHub: no branch ${branch} in ${repoName}`);
    for (let i = 1; i <= count; i++) {
      head = this.commit(
        repo,
        [head],
        `${branch}: new commit`,
        opts.author,
        i === count ? opts.headSha : undefined,
      ).sha;
    }
    this.moveBranch(repo, branch, head);
    return head;
  }

  /**
   * Point a branch at a sha; open pull requests from that branch follow it,
   * those into other repositories of the network too (never a pull request
   * from a same-named branch of another repository).
   */
  moveBranch(repo: Repo, branch: string, sha: string): void {
    if (repo.git) {
      repo.git.setRef(`refs/heads/${branch}`, sha);
      repo.files.set(branch, repo.git.files(sha));
    }
    repo.branches.set(branch, sha);
    for (const { repo: into, pr } of pullsFromBranch(this, repo, branch)) {
      if (into !== repo) shareCommits(repo, into, sha);
      pr.headSha = sha;
      into.git?.setRef(`refs/pull/${pr.number}/head`, sha);
    }
  }

  /**
   * Delete a branch. As on GitHub, open pull requests whose head it was are
   * closed.
   */
  deleteBranch(repoName: string, name: string): boolean {
    const repo = this.repo(repoName);
    if (!repo.branches.delete(name)) return false;
    repo.git?.setRef(`refs/heads/${name}`, null);
    if (repo.git) repo.files.delete(name);
    for (const { repo: into, pr } of pullsFromBranch(this, repo, name)) {
      if (!pr.merged) this.setIssueState(into.issues.get(pr.number)!, "closed", null, null);
    }
    return true;
  }

  /** branch name, `heads/x`, `refs/heads/x`, `tags/x`, a full or abbreviated sha. */
  resolveRef(repo: Repo, ref: string): string | undefined {
    const r = ref.replace(/^refs\//, "");
    if (r.startsWith("heads/") && repo.branches.has(r.slice(6))) return repo.branches.get(r.slice(6));
    if (r.startsWith("tags/") && repo.tags.has(r.slice(5))) return repo.tags.get(r.slice(5));
    if (repo.branches.has(r)) return repo.branches.get(r);
    if (repo.tags.has(r)) return repo.tags.get(r);
    if (/^[0-9a-f]{7,40}$/i.test(r)) {
      if (repo.commits.has(r)) return r;
      const matches = [...repo.commits.keys()].filter((s) => s.startsWith(r.toLowerCase()));
      if (matches.length === 1) return matches[0];
    }
    return undefined;
  }

  /** Commits reachable from `sha`, `sha` first. */
  ancestors(repo: Repo, sha: string): Set<string> {
    const seen = new Set<string>();
    const stack = [sha];
    while (stack.length) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      for (const p of repo.commits.get(s)?.parents ?? []) stack.push(p);
    }
    return seen;
  }

  compare(
    repo: Repo,
    baseSha: string,
    headSha: string,
  ): { aheadBy: number; behindBy: number; mergeBase: string | null; ahead: Commit[]; status: string } {
    const a = this.ancestors(repo, baseSha);
    const b = this.ancestors(repo, headSha);
    const ahead = [...b].filter((s) => !a.has(s));
    const behind = [...a].filter((s) => !b.has(s));
    // the merge base is the common ancestor closest to head (first found walking from head)
    let mergeBase: string | null = null;
    const queue = [headSha];
    const seen = new Set<string>();
    while (queue.length && !mergeBase) {
      const s = queue.shift()!;
      if (seen.has(s)) continue;
      seen.add(s);
      if (a.has(s)) mergeBase = s;
      else queue.push(...(repo.commits.get(s)?.parents ?? []));
    }
    // creation order is a topological order (parents exist before children): oldest first, as GitHub lists them
    const index = new Map([...repo.commits.keys()].map((k, i) => [k, i]));
    const commits = ahead.map((s) => repo.commits.get(s)!).sort((x, y) => index.get(x.sha)! - index.get(y.sha)!);
    const status =
      ahead.length && behind.length ? "diverged" : ahead.length ? "ahead" : behind.length ? "behind" : "identical";
    return { aheadBy: ahead.length, behindBy: behind.length, mergeBase, ahead: commits, status };
  }

  // ---- pull requests -----------------------------------------------------

  /**
   * A pull request into `repoName`. `head` is a branch of it, created one
   * commit ahead of the base when missing; with `headRepo` (a fork in its
   * network, see addFork) it is that fork's branch, which must exist.
   */
  addPull(
    repoName: string,
    opts: {
      head: string;
      headRepo?: string;
      base?: string;
      title?: string;
      body?: string | null;
      user?: string;
      draft?: boolean;
      number?: number;
      labels?: string[];
      conflicting?: boolean;
      state?: "open" | "closed";
    },
  ): Pull {
    const repo = this.repo(repoName);
    const base = opts.base ?? repo.defaultBranch;
    if (!repo.branches.has(base)) throw new Error(`fake GitHub: no base branch ${base}`);
    const headRepo = opts.headRepo ? crossHead(this, repo, opts.headRepo, opts.head) : repo;
    if (!headRepo.branches.has(opts.head)) this.addBranch(repoName, opts.head, { from: base, aheadBy: 1 });
    const issue = this.addIssue(repoName, {
      number: opts.number,
      title: opts.title ?? `Pull request from ${opts.head}`,
      body: opts.body ?? null,
      user: opts.user,
      labels: opts.labels,
      state: opts.state,
    });
    issue.isPull = true;
    issue.stateReason = null;
    const pr: Pull = {
      number: issue.number,
      id: this.nextId(),
      headRef: opts.head,
      ...(headRepo !== repo ? { headRepo: headRepo.fullName } : {}),
      headSha: headRepo.branches.get(opts.head)!,
      baseRef: base,
      draft: opts.draft ?? false,
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      maintainerCanModify: false,
      conflicting: opts.conflicting ?? false,
      mergeableOverride: null,
      mergeStateOverride: null,
      linkedIssues: [],
    };
    repo.pulls.set(pr.number, pr);
    // GitHub keeps each pull request's head as refs/pull/N/head (fetchable, as actions/checkout does)
    repo.git?.setRef(`refs/pull/${pr.number}/head`, pr.headSha);
    return pr;
  }

  pull(repoName: string, number: number): Pull {
    const p = this.repo(repoName).pulls.get(number);
    if (!p) throw new Error(`fake GitHub: no pull request ${repoName}#${number}`);
    return p;
  }

  setPullConflicting(repoName: string, number: number, conflicting = true): void {
    this.pull(repoName, number).conflicting = conflicting;
  }

  addReview(
    repoName: string,
    pullNumber: number,
    opts: { user: string; state: Review["state"]; body?: string; commitId?: string; comments?: NewReviewComment[] },
  ): Review {
    const repo = this.repo(repoName);
    const pr = this.pull(repoName, pullNumber);
    const r: Review = {
      id: this.nextId(),
      pullNumber,
      user: this.user(opts.user).login,
      state: opts.state,
      body: opts.body ?? "",
      commitId: opts.commitId ?? pr.headSha,
      submittedAt: this.now(),
    };
    repo.reviews.push(r);
    for (const c of opts.comments ?? []) {
      repo.reviewComments.push({
        id: this.nextId(),
        reviewId: r.id,
        pullNumber,
        path: c.path,
        line: c.line,
        originalLine: c.line ?? c.originalLine ?? 1,
        body: c.body,
        user: r.user,
        commitId: r.commitId,
        createdAt: r.submittedAt,
      });
    }
    return r;
  }

  /** Pull requests into `branch` need an approving review (branch protection): reviewDecision REVIEW_REQUIRED, merge state BLOCKED. */
  requireReviews(repoName: string, branch: string, required = true): void {
    const repo = this.repo(repoName);
    if (required) repo.reviewsRequired.add(branch);
    else repo.reviewsRequired.delete(branch);
  }

  /** Link a PR to an issue it closes (GitHub's "Development" sidebar). */
  linkPullToIssue(repoName: string, pullNumber: number, issueNumber: number): void {
    const pr = this.pull(repoName, pullNumber);
    if (!pr.linkedIssues.includes(issueNumber)) pr.linkedIssues.push(issueNumber);
  }

  /**
   * Issues this PR closes when merged: closing keywords in its body, plus
   * manual links. `#n` names an issue of the repository the PR is opened
   * into, also when its head is a fork's branch.
   */
  closingIssues(repo: Repo, pr: Pull): number[] {
    const out = new Set(pr.linkedIssues);
    // GitHub only honours closing keywords for PRs into the default branch
    if (pr.baseRef === repo.defaultBranch) {
      const body = repo.issues.get(pr.number)?.body ?? "";
      for (const m of body.matchAll(CLOSING_RE)) {
        if (m[1] && m[1].toLowerCase() !== repo.fullName.toLowerCase()) continue;
        const n = Number(m[2]);
        const target = repo.issues.get(n);
        if (target && !target.isPull) out.add(n);
      }
    }
    return [...out];
  }

  /** PRs that would close this issue (GraphQL `closedByPullRequestsReferences`). */
  closingPulls(repo: Repo, issueNumber: number): Pull[] {
    return [...repo.pulls.values()].filter((pr) => this.closingIssues(repo, pr).includes(issueNumber));
  }

  /**
   * Merge a PR: a merge commit (or squash commit) on the base, the PR closed
   * as merged, and issues it references with closing keywords closed when the
   * base is the default branch.
   */
  mergePull(
    repoName: string,
    number: number,
    opts: { by?: string; method?: "merge" | "squash" | "rebase"; message?: string } = {},
  ): string {
    const repo = this.repo(repoName);
    const pr = this.pull(repoName, number);
    const issue = repo.issues.get(number)!;
    if (pr.merged) throw new Error(`fake GitHub: ${repoName}#${number} is already merged`);
    const baseSha = repo.branches.get(pr.baseRef);
    if (!baseSha) throw new Error(`fake GitHub: base branch ${pr.baseRef} is gone`);
    const method = opts.method ?? "merge";
    const parents = method === "merge" ? [baseSha, pr.headSha] : [baseSha];
    const message =
      opts.message ?? `Merge pull request #${number} from ${headRepoOf(this, repo, pr).owner}/${pr.headRef}`;
    const by = this.user(opts.by ?? repo.owner).login;
    const c = repo.git
      ? this.git.mergeCommit(repo, repo.git, method, baseSha, pr.headSha, message, by)
      : this.commit(repo, parents, message, by);
    this.moveBranch(repo, pr.baseRef, c.sha);
    const now = this.now();
    pr.merged = true;
    pr.mergedAt = now;
    pr.mergedBy = by;
    pr.mergeCommitSha = c.sha;
    this.setIssueState(issue, "closed", by, null);
    issue.stateReason = null;
    if (repo.deleteBranchOnMerge && headRepoOf(this, repo, pr) === repo && repo.branches.get(pr.headRef) === pr.headSha)
      repo.branches.delete(pr.headRef);
    if (pr.baseRef === repo.defaultBranch) {
      for (const n of this.closingIssues(repo, pr)) {
        const target = repo.issues.get(n);
        if (target && target.state === "open") this.setIssueState(target, "closed", by, "completed");
      }
    }
    return c.sha;
  }

  pullMergeable(repo: Repo, pr: Pull): Mergeable {
    const issue = repo.issues.get(pr.number);
    if (pr.mergeableOverride) return pr.mergeableOverride;
    if (pr.merged || issue?.state === "closed") return "UNKNOWN";
    return this.pullConflicting(repo, pr) ? "CONFLICTING" : "MERGEABLE";
  }

  /** The head cannot merge cleanly into the base: as a test set it, or as git finds it for a git-backed repository. */
  pullConflicting(repo: Repo, pr: Pull): boolean {
    const baseSha = repo.branches.get(pr.baseRef);
    if (pr.conflicting || !repo.git || !baseSha) return pr.conflicting;
    return repo.git.conflictsBetween(baseSha, pr.headSha) !== null;
  }

  pullMergeState(repo: Repo, pr: Pull): MergeStateStatus {
    if (pr.mergeStateOverride) return pr.mergeStateOverride;
    const m = this.pullMergeable(repo, pr);
    if (m === "UNKNOWN") return "UNKNOWN";
    if (m === "CONFLICTING") return "DIRTY";
    if (pr.draft) return "DRAFT";
    const baseSha = repo.branches.get(pr.baseRef);
    if (baseSha && this.compare(repo, pr.headSha, baseSha).aheadBy > 0) return "BEHIND";
    if (repo.reviewsRequired.has(pr.baseRef) && reviewDecision(repo, pr) !== "APPROVED") return "BLOCKED";
    const runs = this.latestCheckRuns(repo, pr.headSha);
    if (runs.some((r) => r.status !== "completed")) return "UNSTABLE";
    if (runs.some((r) => r.conclusion && !["success", "neutral", "skipped"].includes(r.conclusion))) return "UNSTABLE";
    return "CLEAN";
  }

  // ---- checks ------------------------------------------------------------

  ensureSuite(repo: Repo, headSha: string, app: AppKey, headBranch?: string | null): CheckSuite {
    for (const s of repo.checkSuites.values()) {
      if (s.headSha === headSha && s.app === app && s.workflowRunId === null) return s;
    }
    return this.newSuite(repo, headSha, app, headBranch ?? this.branchAt(repo, headSha));
  }

  private newSuite(
    repo: Repo,
    headSha: string,
    app: AppKey,
    headBranch: string | null,
    headRepo: string | null = null,
  ): CheckSuite {
    const now = this.now();
    const s: CheckSuite = {
      id: this.nextId(),
      headSha,
      headBranch,
      headRepo,
      app,
      createdAt: now,
      updatedAt: now,
      workflowRunId: null,
      rerequested: 0,
    };
    repo.checkSuites.set(s.id, s);
    return s;
  }

  addCheckRun(
    repoName: string,
    opts: {
      headSha: string;
      name: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion | null;
      output?: { title?: string | null; summary?: string | null; text?: string | null };
      app?: AppKey;
      detailsUrl?: string | null;
      externalId?: string | null;
      suiteId?: number;
      id?: number;
      startedAt?: Date;
    },
  ): CheckRun {
    const repo = this.repo(repoName);
    const app = opts.app ?? "github-actions";
    const suite = opts.suiteId ? repo.checkSuites.get(opts.suiteId)! : this.ensureSuite(repo, opts.headSha, app);
    const status = opts.status ?? (opts.conclusion === null ? "queued" : "completed");
    const now = this.now();
    const run: CheckRun = {
      id: opts.id ?? this.nextId(),
      suiteId: suite.id,
      headSha: opts.headSha,
      name: opts.name,
      status,
      conclusion: status === "completed" ? (opts.conclusion ?? "success") : null,
      startedAt: opts.startedAt ?? now,
      completedAt: status === "completed" ? now : null,
      output: {
        title: opts.output?.title ?? null,
        summary: opts.output?.summary ?? null,
        text: opts.output?.text ?? null,
        annotationsCount: 0,
      },
      detailsUrl: opts.detailsUrl ?? null,
      externalId: opts.externalId ?? null,
      app,
      rerequested: 0,
    };
    repo.checkRuns.set(run.id, run);
    suite.updatedAt = now;
    return run;
  }

  updateCheckRun(
    repoName: string,
    id: number,
    patch: Partial<Pick<CheckRun, "status" | "conclusion" | "name" | "detailsUrl">> & {
      output?: { title?: string | null; summary?: string | null; text?: string | null };
    },
  ): CheckRun {
    const run = this.repo(repoName).checkRuns.get(id);
    if (!run) throw new Error(`fake GitHub: no check run ${id}`);
    if (patch.name !== undefined) run.name = patch.name;
    if (patch.detailsUrl !== undefined) run.detailsUrl = patch.detailsUrl;
    if (patch.output) Object.assign(run.output, stripUndefined(patch.output));
    if (patch.conclusion) {
      run.conclusion = patch.conclusion;
      run.status = "completed";
    }
    if (patch.status) run.status = patch.status;
    if (run.status === "completed") {
      run.conclusion ??= "success";
      run.completedAt ??= this.now();
    } else {
      run.conclusion = null;
      run.completedAt = null;
    }
    return run;
  }

  checkRunsFor(repo: Repo, headSha: string): CheckRun[] {
    return [...repo.checkRuns.values()].filter((r) => r.headSha === headSha);
  }

  /** The newest run per (app, name) — GitHub's `filter=latest`. */
  latestCheckRuns(repo: Repo, headSha: string): CheckRun[] {
    const latest = new Map<string, CheckRun>();
    for (const r of this.checkRunsFor(repo, headSha)) {
      const key = `${r.app}\u0000${r.name}`;
      const prev = latest.get(key);
      if (!prev || r.id > prev.id) latest.set(key, r);
    }
    return [...latest.values()].sort((a, b) => a.id - b.id);
  }

  suiteStatus(repo: Repo, suite: CheckSuite): { status: CheckStatus; conclusion: CheckConclusion | null } {
    const runs = this.latestCheckRuns(repo, suite.headSha).filter((r) => r.suiteId === suite.id);
    if (suite.workflowRunId !== null) {
      const wr = repo.workflowRuns.get(suite.workflowRunId);
      if (wr) return { status: wr.status, conclusion: wr.conclusion };
    }
    if (!runs.length) return { status: "queued", conclusion: null };
    if (runs.some((r) => r.status !== "completed")) {
      return { status: runs.some((r) => r.status === "in_progress") ? "in_progress" : "queued", conclusion: null };
    }
    const conclusions = runs.map((r) => r.conclusion!);
    const worst = CONCLUSION_RANK.find((c) => conclusions.includes(c)) ?? "success";
    return { status: "completed", conclusion: worst };
  }

  // ---- actions -----------------------------------------------------------

  addWorkflow(
    repoName: string,
    opts: {
      id?: number;
      path: string;
      name?: string;
      dispatchable?: boolean;
      inputs?: Record<string, WorkflowInput> | null;
      createRunOnDispatch?: boolean;
      runName?: string | null;
      returnsRunDetails?: boolean;
      state?: Workflow["state"];
    },
  ): Workflow {
    const repo = this.repo(repoName);
    const path = opts.path.includes("/") ? opts.path : `.github/workflows/${opts.path}`;
    const wf: Workflow = {
      id: opts.id ?? this.nextId(),
      name:
        opts.name ??
        path
          .split("/")
          .pop()!
          .replace(/\.ya?ml$/, ""),
      path,
      state: opts.state ?? "active",
      dispatchable: opts.dispatchable ?? true,
      inputs: opts.inputs ?? null,
      createRunOnDispatch: opts.createRunOnDispatch ?? true,
      runName: opts.runName ?? null,
      returnsRunDetails: opts.returnsRunDetails ?? true,
      createdAt: this.now(),
    };
    repo.workflows.set(wf.id, wf);
    return wf;
  }

  /** By numeric id or by file name (`agent.yml`), as the API accepts either. */
  findWorkflow(repo: Repo, idOrFile: string | number): Workflow | undefined {
    const s = String(idOrFile);
    if (/^\d+$/.test(s)) return repo.workflows.get(Number(s));
    return [...repo.workflows.values()].find((w) => w.path === s || w.path.split("/").pop() === s);
  }

  /**
   * A workflow run with its check suite; each job is also a check run with
   * the same id (which is how GitHub links jobs and checks).
   */
  addWorkflowRun(
    repoName: string,
    opts: {
      workflowId: number;
      headBranch?: string | null;
      headSha?: string;
      /** a fork of this repository: the run is for its branch `headBranch` (on `headSha`, which must be here) */
      headRepo?: string;
      event?: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion | null;
      actor?: string;
      displayTitle?: string;
      jobs?: {
        name: string;
        status?: CheckStatus;
        conclusion?: CheckConclusion | null;
        output?: { title?: string; summary?: string; text?: string };
        steps?: Job["steps"];
      }[];
    },
  ): WorkflowRun {
    const repo = this.repo(repoName);
    const wf = repo.workflows.get(opts.workflowId);
    if (!wf) throw new Error(`fake GitHub: no workflow ${opts.workflowId} in ${repoName}`);
    const headBranch = opts.headBranch === undefined ? repo.defaultBranch : opts.headBranch;
    const headSha = opts.headSha ?? (headBranch ? repo.branches.get(headBranch) : undefined);
    if (!headSha) throw new Error("fake GitHub: addWorkflowRun needs headSha or an existing headBranch");
    const headRepo = opts.headRepo ? this.repo(opts.headRepo).fullName : null;
    if (headRepo && !repo.commits.has(headSha))
      throw new Error(
        `fake GitHub: a fork's run needs its head ${headSha} in ${repoName} (a pull request puts it there)`,
      );
    const suite = this.newSuite(repo, headSha, "github-actions", headBranch, headRepo);
    const now = this.now();
    const status = opts.status ?? (opts.conclusion ? "completed" : "queued");
    const run: WorkflowRun = {
      id: this.nextId(),
      workflowId: wf.id,
      name: wf.name,
      displayTitle: opts.displayTitle ?? wf.name,
      headBranch,
      headSha,
      headRepo,
      event: opts.event ?? "push",
      status,
      conclusion: status === "completed" ? (opts.conclusion ?? "success") : null,
      runNumber: [...repo.workflowRuns.values()].filter((r) => r.workflowId === wf.id).length + 1,
      runAttempt: 1,
      actor: this.user(opts.actor ?? repo.owner).login,
      createdAt: now,
      updatedAt: now,
      runStartedAt: now,
      checkSuiteId: suite.id,
    };
    suite.workflowRunId = run.id;
    repo.workflowRuns.set(run.id, run);
    for (const j of opts.jobs ?? []) this.addJob(repoName, run.id, j);
    return run;
  }

  addJob(
    repoName: string,
    runId: number,
    opts: {
      name: string;
      status?: CheckStatus;
      conclusion?: CheckConclusion | null;
      output?: { title?: string; summary?: string; text?: string };
      steps?: Job["steps"];
      runnerName?: string | null;
    },
  ): Job {
    const repo = this.repo(repoName);
    const run = repo.workflowRuns.get(runId);
    if (!run) throw new Error(`fake GitHub: no workflow run ${runId}`);
    const check = this.addCheckRun(repoName, {
      headSha: run.headSha,
      name: opts.name,
      status: opts.status ?? (opts.conclusion ? "completed" : run.status),
      conclusion: opts.conclusion ?? (run.status === "completed" ? run.conclusion : null),
      output: opts.output,
      app: "github-actions",
      suiteId: run.checkSuiteId,
    });
    const job: Job = {
      id: check.id,
      runId,
      runAttempt: run.runAttempt,
      name: opts.name,
      steps: opts.steps ?? [],
      labels: ["ubuntu-latest"],
      runnerName: opts.runnerName === undefined ? "GitHub Actions 2" : opts.runnerName,
    };
    repo.jobs.set(job.id, job);
    return job;
  }

  /**
   * The log GitHub keeps for an Actions job (a job's id is its check run's):
   * `actions/jobs/{id}/logs` redirects to a download of this text; null
   * makes it answer 410 as for an expired log. Without one it answers 404.
   */
  setJobLog(repoName: string, jobId: number, text: string | null): void {
    const repo = this.repo(repoName);
    if (!repo.jobs.has(jobId))
      throw new Error(`fake GitHub: no Actions job ${jobId} in ${repoName} (a check run the App created has no log)`);
    repo.jobLogs.set(jobId, text);
  }

  /** Finish a workflow run (and any of its unfinished jobs) with a conclusion. */
  completeWorkflowRun(repoName: string, runId: number, conclusion: CheckConclusion = "success"): WorkflowRun {
    const repo = this.repo(repoName);
    const run = repo.workflowRuns.get(runId);
    if (!run) throw new Error(`fake GitHub: no workflow run ${runId}`);
    run.status = "completed";
    run.conclusion = conclusion;
    run.updatedAt = this.now();
    for (const job of this.jobsOf(repo, run, "latest")) {
      const check = repo.checkRuns.get(job.id)!;
      if (check.status !== "completed") this.updateCheckRun(repoName, check.id, { conclusion });
    }
    return run;
  }

  jobsOf(repo: Repo, run: WorkflowRun, filter: "latest" | "all" = "latest"): Job[] {
    const all = [...repo.jobs.values()].filter((j) => j.runId === run.id);
    if (filter === "all") return all;
    return all.filter((j) => j.runAttempt === run.runAttempt);
  }

  /**
   * Start a new attempt. Jobs that are rerun get new ids and queued check
   * runs; with `failedOnly`, successful jobs carry over as they are.
   */
  rerunWorkflow(repo: Repo, run: WorkflowRun, failedOnly: boolean): void {
    const previous = this.jobsOf(repo, run, "latest");
    run.runAttempt += 1;
    run.status = "queued";
    run.conclusion = null;
    run.updatedAt = this.now();
    run.runStartedAt = this.now();
    for (const job of previous) {
      const check = repo.checkRuns.get(job.id)!;
      const failed = check.conclusion !== null && !["success", "neutral", "skipped"].includes(check.conclusion);
      if (failedOnly && !failed) {
        job.runAttempt = run.runAttempt;
        continue;
      }
      this.addJob(repo.fullName, run.id, { name: job.name, status: "queued", conclusion: null, steps: [] });
    }
  }

  private branchAt(repo: Repo, sha: string): string | null {
    for (const [name, s] of repo.branches) if (s === sha) return name;
    return null;
  }
}

function gitOwnsFiles(repo: Repo): Error {
  return new Error(
    `fake GitHub: ${repo.fullName} is git-backed; its files are git's (seed them with addRepo's git.files, or push)`,
  );
}

export function splitRepo(fullName: string): [string, string] {
  const [owner, name, ...rest] = fullName.split("/");
  if (!owner || !name || rest.length) throw new Error(`fake GitHub: expected "owner/repo", got "${fullName}"`);
  return [owner, name];
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
