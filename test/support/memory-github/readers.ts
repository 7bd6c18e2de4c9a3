/** Reading GitHub's state in a test (not recorded as calls): issues, pull requests, branches, comments, runs. */
import type { CheckRunInfo, IssueInfo, PullInfo } from "../../../src/github/port.js";
import type { StoredComment, StoredWorkflowRun } from "./records.js";
import { checkRunInfo, issueInfo, pullInfo } from "./views.js";
import type { Memory } from "./writes.js";

export function readers(m: Memory) {
  const { comments, repoOf } = m;
  return {
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
