/** Arranging GitHub's state for a test (not recorded as calls): repositories, tokens, issues, pull requests, runs. */
import type {
  BlockerInfo,
  CheckRunInfo,
  CommentInfo,
  IssueInfo,
  NewCheckRun,
  Permission,
  PullInfo,
  ReviewCommentInfo,
} from "../../../src/github/port.js";
import {
  FAILED,
  type CheckRunRec,
  type IssueSeed,
  type LabelEvent,
  type PullSeed,
  type StoredWorkflowRun,
} from "./records.js";
import { checkRunInfo, closesOf, commentInfo, issueInfo, pullInfo } from "./views.js";
import type { Memory } from "./writes.js";

export function arranging(m: Memory) {
  const {
    now,
    liveTokens,
    newId,
    repoOf,
    seeded,
    newCommit,
    addRepo,
    openIssue,
    addLabelsTo,
    addComment,
    commitOn,
    openPull,
    deleteBranchOf,
  } = m;
  return {
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
      const id = newId();
      const suite = newId();
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
      const id = newId();
      const suite = newId();
      rec.suites.add(suite);
      const jobs = seed.jobs.map((j): CheckRunRec => {
        const job: CheckRunRec = {
          id: newId(),
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
  };
}
