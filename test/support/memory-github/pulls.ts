/**
 * The memory port's pull requests: reading and opening them, bringing one's
 * branch up to date with its base, those of a commit, a review's comments,
 * and the open ones into a base with their merge state and checks.
 */
import type { PullMergeability, PullsPort } from "../../../src/github/port.js";
import { comparison } from "./context.js";
import { refusal } from "./failures.js";
import { mergeState, pullInfo, rollup } from "./views.js";
import type { Memory } from "./writes.js";

export function pullsPort(m: Memory) {
  const { app, call, repo, newCommit, openPull } = m;
  return {
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
  } satisfies PullsPort;
}
