/** The port's refs and repository: branches, comparisons, the default branch, config (port.ts composes it all). */
import type { RepoRef } from "./repo-ref.js";

export interface BranchInfo {
  name: string;
  sha: string;
}

export interface MergedBranchFacts {
  sha: string;
  deletesMergedBranches: boolean;
  openPull: number | null;
}

export interface Comparison {
  status: "ahead" | "behind" | "diverged" | "identical";
  aheadBy: number;
  behindBy: number;
  headSha: string;
}

export interface BranchListing {
  name: string;
  sha: string;
  committedAt: Date | null;
  /** Pull requests from this branch, open, closed or merged. */
  pullRequests: number;
}

export interface RefsPort {
  defaultBranch(r: RepoRef): Promise<string>;
  /**
   * What deleting a merged pull request's branch needs, in one call (GraphQL): the branch's head, whether the
   * repository deletes merged head branches itself ("Automatically delete head branches"), and an open pull request
   * from the branch. Null when the branch is gone.
   */
  mergedBranch(r: RepoRef, branch: string): Promise<MergedBranchFacts | null>;
  /**
   * Branches whose names start with `prefix` (one GraphQL query per 100):
   * head commit, its date, and pull requests of any state from each.
   */
  branchesWithPrefix(r: RepoRef, prefix: string): Promise<BranchListing[]>;
  getBranch(r: RepoRef, branch: string): Promise<BranchInfo | null>;
  /** Deletes a branch; false when it was already gone. */
  deleteBranch(r: RepoRef, branch: string): Promise<boolean>;
  /** null when base or head does not exist. */
  compare(r: RepoRef, base: string, head: string): Promise<Comparison | null>;
  /** A YAML config file from the repo, with the org's `.github` repository as defaults; null when neither has it. */
  readConfig(r: RepoRef, path: string): Promise<unknown>;
}
