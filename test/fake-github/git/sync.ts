/**
 * Git is the truth for a git-backed repository: after a push the fake reads
 * refs and new commits back from the bare repository into its model
 * (branches, tags, commits, files), so that every REST answer — branches,
 * compare, a pull request's head — says what git says.
 */
import type { Commit, FakeState, Repo } from "../state.js";
import type { GitRepo } from "./repository.js";

/** One ref a sync saw move; `before`/`after` are null when it was created/deleted. */
export interface RefChange {
  ref: string;
  before: string | null;
  after: string | null;
}

/** Adds the commits git has and the model lacks, parents first (compare relies on that order). */
export function importCommits(state: FakeState, repo: Repo, git: GitRepo, tips: string[]): void {
  const known = [...new Set([...repo.branches.values(), ...repo.tags.values()])].filter((s) => repo.commits.has(s));
  for (const c of git.readCommits(tips, known)) {
    if (repo.commits.has(c.sha)) continue;
    const commit: Commit = {
      sha: c.sha,
      parents: c.parents,
      message: c.message,
      author: state.user(c.author).login,
      date: c.date,
      tree: c.tree,
    };
    repo.commits.set(c.sha, commit);
  }
}

/**
 * Reads git's refs into the model and answers what moved since the fake last
 * looked. Branch moves go through the state's own methods, so open pull
 * requests follow their head and a deleted head closes them, as on GitHub.
 */
export function syncFromGit(state: FakeState, repo: Repo, git: GitRepo): RefChange[] {
  const now = git.readRefs();
  importCommits(state, repo, git, [...new Set(now.values())]);
  const changes: RefChange[] = [];
  // only branches and tags are pushed; refs/pull/* are the fake's own
  const pushable = [...git.refs.keys()].filter((ref) => /^refs\/(heads|tags)\//.test(ref));
  for (const ref of new Set([...pushable, ...now.keys()])) {
    const before = git.refs.get(ref) ?? null;
    const after = now.get(ref) ?? null;
    if (before !== after) changes.push({ ref, before, after });
  }
  for (const ref of pushable) git.refs.delete(ref);
  for (const [ref, sha] of now) git.refs.set(ref, sha);
  for (const { ref, after } of changes) {
    const branch = /^refs\/heads\/(.+)$/.exec(ref)?.[1];
    const tag = /^refs\/tags\/(.+)$/.exec(ref)?.[1];
    if (branch && after) state.moveBranch(repo, branch, after);
    else if (branch) state.deleteBranch(repo.fullName, branch);
    else if (tag && after) repo.tags.set(tag, after);
    else if (tag) repo.tags.delete(tag);
  }
  return changes;
}
