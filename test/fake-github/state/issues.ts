/** Labels, issues, comments, and the links between issues (dependencies, sub-issues). */
import type { IssueAt } from "../dependencies.js";
import type { Repo } from "./repo.js";
import { FakeStateCore } from "./core.js";
import type { Comment, Issue, Label, LabelEvent, Reaction } from "./types.js";

export class IssueState extends FakeStateCore {
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
}
