/**
 * The fake's git hosting: which repositories are git-backed (opt-in, see
 * FakeState.addRepo's `git` option), where their bare repositories live (one
 * temporary directory per fake, removed by `fake.close()`), and every push
 * they received, with what GitHub's `push` webhook would say about it.
 *
 *   fake.state.addRepo("acme/widgets", { installationId: 1, git: { files: { "README.md": "hi\n" } } });
 *   // git clone http://x-access-token:<token>@127.0.0.1:PORT/acme/widgets.git
 *   fake.state.git.pushes   // [{ repo: "acme/widgets", ref: "refs/heads/x", before, after, ... }]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Commit, FakeState, Repo } from "../state.js";
import { GitConflict, GitRepo, type Identity } from "./repository.js";
import { importCommits, syncFromGit, type RefChange } from "./sync.js";

export { GitConflict } from "./repository.js";

export interface GitOptions {
  /** files of the initial commit on the default branch (path → content) */
  files?: Record<string, string>;
}

export interface PushedCommit {
  sha: string;
  tree: string;
  message: string;
  /** the login GitHub shows (see GitCommit.author), and the author's name and address */
  author: string;
  name: string;
  email: string;
  date: Date;
  added: string[];
  removed: string[];
  modified: string[];
}

/** One ref a `git push` changed, in the words of GitHub's `push` webhook. */
export interface Push {
  /** the repository's full name */
  repo: string;
  /** `refs/heads/<branch>` or `refs/tags/<tag>` */
  ref: string;
  /** 40 zeros when the ref was created */
  before: string;
  /** 40 zeros when the ref was deleted */
  after: string;
  created: boolean;
  deleted: boolean;
  forced: boolean;
  /** who pushed: the App's bot for an installation token */
  pusher: string;
  installationId: number | null;
  /** commits the push brought to the ref, oldest first */
  commits: PushedCommit[];
  at: Date;
}

export const ZERO_SHA = "0".repeat(40);

export class GitHost {
  /** every ref change pushed to a git-backed repository, in order */
  readonly pushes: Push[] = [];
  /** called with each push once the model has it (e.g. to deliver the `push` webhook) */
  onPush: ((push: Push) => void | Promise<void>) | null = null;
  private root: string | null = null;
  private readonly repos = new Map<number, GitRepo>();

  constructor(private readonly state: FakeState) {}

  /** The directory http-backend serves (GIT_PROJECT_ROOT); created on first use. */
  get projectRoot(): string {
    this.root ??= mkdtempSync(join(tmpdir(), "fake-github-git-"));
    return this.root;
  }

  /** The bare repository's path under the project root, as http-backend's PATH_INFO names it. */
  pathOf(repo: Repo): string {
    return `/${repo.id}.git`;
  }

  of(repo: Repo): GitRepo | undefined {
    return this.repos.get(repo.id);
  }

  /**
   * Back `repo` by a bare repository whose default branch holds one initial
   * commit (with `opts.files`). Only a repository just added can be: one
   * with history of its own in the model would disagree with git.
   */
  enable(repo: Repo, opts: GitOptions = {}): GitRepo {
    if (this.repos.has(repo.id)) return this.repos.get(repo.id)!;
    if (repo.commits.size > 1 || repo.branches.size > 1 || repo.pulls.size || repo.parent)
      throw new Error(`fake GitHub: enable git on ${repo.fullName} right after addRepo (it has history already)`);
    const home = this.projectRoot;
    const git = GitRepo.init(join(home, this.pathOf(repo)), home, () => this.state.now(), repo.defaultBranch);
    const owner = this.identity(repo.owner);
    const tree = git.writeTree(opts.files ?? {});
    const root = git.commitTree([], "Initial commit", owner, tree);
    git.setRef(`refs/heads/${repo.defaultBranch}`, root);
    this.repos.set(repo.id, git);
    repo.commits.clear();
    repo.branches.clear();
    repo.files.clear();
    repo.git = git;
    importCommits(this.state, repo, git, [root]);
    this.state.moveBranch(repo, repo.defaultBranch, root);
    return git;
  }

  /** A commit made through the fake (fixtures, update-branch): the first parent's tree, by `author`. */
  commit(repo: Repo, git: GitRepo, parents: string[], message: string, author: string): Commit {
    const sha = git.commitTree(parents, message, this.identity(author));
    importCommits(this.state, repo, git, [sha]);
    return repo.commits.get(sha)!;
  }

  /**
   * A merge of `head` into `base` by `method` (see GitRepo.mergeCommit): a
   * pull request's merge, or update-branch's merge of the base into the head.
   * Throws GitConflict.
   */
  mergeCommit(
    repo: Repo,
    git: GitRepo,
    method: "merge" | "squash" | "rebase",
    base: string,
    head: string,
    message: string,
    by: string,
  ): Commit {
    const sha = git.mergeCommit(method, base, head, message, this.identity(by));
    importCommits(this.state, repo, git, [sha]);
    return repo.commits.get(sha)!;
  }

  /** Reads a push back into the model and records it (see Push); answers the pushes. */
  async received(repo: Repo, git: GitRepo, pusher: string): Promise<Push[]> {
    const pushes = syncFromGit(this.state, repo, git).map((c) => this.pushOf(repo, git, c, pusher));
    this.pushes.push(...pushes);
    for (const p of pushes) await this.onPush?.(p);
    return pushes;
  }

  /** Removes every bare repository (the fake is closing). */
  dispose(): void {
    if (this.root) rmSync(this.root, { recursive: true, force: true });
    this.root = null;
    this.repos.clear();
  }

  private pushOf(repo: Repo, git: GitRepo, c: RefChange, pusher: string): Push {
    const before = c.before ?? ZERO_SHA;
    const after = c.after ?? ZERO_SHA;
    let commits: PushedCommit[] = [];
    if (c.after) {
      // a new ref brings the commits no other ref had; an update those after its old tip
      const others = c.before ? [c.before] : [...git.refs].filter(([ref]) => ref !== c.ref).map(([, sha]) => sha);
      commits = git.readCommits([c.after], others).map(({ parents: _, ...x }) => ({ ...x, ...git.changes(x.sha) }));
    }
    const forced = Boolean(c.before && c.after && !this.state.ancestors(repo, c.after).has(c.before));
    return {
      repo: repo.fullName,
      ref: c.ref,
      before,
      after,
      created: c.before === null,
      deleted: c.after === null,
      forced,
      pusher,
      installationId: repo.installationId,
      commits,
      at: this.state.now(),
    };
  }

  private identity(login: string): Identity {
    const u = this.state.user(login);
    return { login: u.login, id: u.id };
  }
}

export function isConflict(e: unknown): e is GitConflict {
  return e instanceof GitConflict;
}
