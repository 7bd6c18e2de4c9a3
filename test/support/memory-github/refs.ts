/**
 * The memory port's refs and contents: the default branch, a branch's facts
 * and listing, deleting one, comparing two commits, and the config files a
 * repository (or its owner's `.github` repository) holds.
 */
import type { BranchInfo, BranchListing, RefsPort } from "../../../src/github/port.js";
import { comparison, resolve } from "./context.js";
import { pullInfo } from "./views.js";
import type { Memory } from "./writes.js";

export function refsPort(m: Memory) {
  const { repos, call, repo, deleteBranchOf } = m;
  return {
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
    readConfig: (r, path) =>
      call("readConfig", [r, path], () => {
        // The repository's file, else the one in the owner's `.github` repository (when the fake has it).
        const own = repo("readConfig", r).configs;
        if (own.has(path)) return structuredClone(own.get(path));
        const org = repos.get(`${r.owner}/.github`)?.configs;
        return org?.has(path) ? structuredClone(org.get(path)) : null;
      }),
  } satisfies RefsPort;
}
