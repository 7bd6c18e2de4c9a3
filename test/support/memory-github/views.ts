/**
 * Views in the port's types: what the port and the test's readers answer,
 * made from the records the memory port keeps. Pure functions of a
 * repository's record.
 */
import type { CheckRunInfo, CommentInfo, IssueInfo, PullInfo } from "../../../src/github/port.js";
import { comparison } from "./context.js";
import {
  CLOSING,
  GREEN,
  WEB,
  type CheckRunRec,
  type IssueRec,
  type PullRec,
  type RepoRec,
  type StoredComment,
} from "./records.js";

export function issueInfo(i: IssueRec): IssueInfo {
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
export function closesOf(rec: RepoRec, p: PullRec): number[] {
  const body = rec.issues.get(p.number)?.body ?? "";
  return [...new Set([...p.closes, ...[...body.matchAll(CLOSING)].map((m) => Number(m[1]))])];
}
export function pullInfo(rec: RepoRec, p: PullRec): PullInfo {
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
export const commentInfo = (c: StoredComment): CommentInfo => ({
  id: c.id,
  body: c.body,
  author: c.author,
  url: c.url,
});
/** GitHub matches a suite to open PRs of its branch; here, to the repository's open PRs on its sha. */
export const checkRunInfo = (rec: RepoRec, { by: _by, ...c }: CheckRunRec): CheckRunInfo => ({
  ...c,
  output: { ...c.output },
  pullRequests: [...rec.pulls.values()]
    .filter((p) => p.headSha === c.headSha && p.headRepo === rec.fullName && rec.issues.get(p.number)?.state === "open")
    .map((p) => p.number),
});
/** The latest run of each name on a commit: what a rollup and a merge state look at. */
function latestRuns(rec: RepoRec, sha: string): CheckRunRec[] {
  const byName = new Map<string, CheckRunRec>();
  for (const c of rec.checkRuns.values()) if (c.headSha === sha) byName.set(c.name, c);
  return [...byName.values()];
}
export function rollup(rec: RepoRec, sha: string): string | null {
  const runs = latestRuns(rec, sha);
  if (!runs.length) return null;
  if (runs.some((c) => c.conclusion !== null && !GREEN.has(c.conclusion))) return "FAILURE";
  return runs.some((c) => c.status !== "completed") ? "PENDING" : "SUCCESS";
}
export function mergeState(rec: RepoRec, p: PullRec): string {
  if (p.mergeable === "UNKNOWN") return "UNKNOWN";
  if (p.mergeable === "CONFLICTING") return "DIRTY";
  if (p.isDraft) return "DRAFT";
  const baseSha = rec.branches.get(p.baseRef);
  if (baseSha && comparison(rec, p.headSha, baseSha).aheadBy > 0) return "BEHIND";
  const checks = rollup(rec, p.headSha);
  return checks === "FAILURE" || checks === "PENDING" ? "UNSTABLE" : "CLEAN";
}
