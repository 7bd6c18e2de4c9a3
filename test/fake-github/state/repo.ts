/** A repository of the fake and everything in it (see FakeState for the helpers that keep it consistent). */
import type { GitRepo } from "../git/repository.js";
import type { ReviewComment } from "../pull-reads.js";
import type {
  CheckRun,
  CheckSuite,
  Comment,
  Commit,
  Issue,
  Job,
  Label,
  LabelEvent,
  Pull,
  Reaction,
  Review,
  Role,
  Workflow,
  WorkflowRun,
} from "./types.js";

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
