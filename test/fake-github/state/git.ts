/**
 * Git: a commit graph (sha → parents) with branches pointing into it, and the
 * files on each branch; for a git-backed repository git itself is the truth.
 */
import { pullsFromBranch, shareCommits } from "../forks.js";
import type { FakeState } from "../state.js";
import { IssueState } from "./issues.js";
import type { Repo } from "./repo.js";
import type { Commit } from "./types.js";

export class GitState extends IssueState {
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

  commit(this: FakeState, repo: Repo, parents: string[], message: string, author = "octocat", sha?: string): Commit {
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
    this: FakeState,
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
  addCommits(
    this: FakeState,
    repoName: string,
    branch: string,
    count = 1,
    opts: { headSha?: string; author?: string } = {},
  ): string {
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
  moveBranch(this: FakeState, repo: Repo, branch: string, sha: string): void {
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
  deleteBranch(this: FakeState, repoName: string, name: string): boolean {
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
}

function gitOwnsFiles(repo: Repo): Error {
  return new Error(
    `fake GitHub: ${repo.fullName} is git-backed; its files are git's (seed them with addRepo's git.files, or push)`,
  );
}
