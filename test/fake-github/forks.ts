/**
 * Forks in the fake, as GitHub has them. A fork is a repository of its own
 * (its own branches, its own issue numbers) whose `parent` is the repository
 * it was forked from; at creation it shares the parent's commit graph (its
 * commits, branches and files are copied). Repositories with the same root
 * (`source`) form a network.
 *
 * A pull request lives in the repository it is opened into (the base); its
 * head may be a branch of another repository of the network, a fork. Such a
 * pull request is cross-repository: its head is `owner:branch` of the fork,
 * it follows pushes to the fork's branch and closes when that branch is
 * deleted, and a branch of the same name in the base repository has nothing
 * to do with it. GitHub keeps the head commits of a pull request in the base
 * repository too (`refs/pull/N/head`), so compare, `commits/{sha}/pulls` and
 * the pull's commits answer from the base; the fake copies those commits over.
 */
import type { Serializer } from "./json.js";
import type { FakeState, Pull, Repo } from "./state.js";

/** Create `forkOwner/<name>` as a fork of `sourceRepo` (see FakeState.addFork). */
export function createFork(state: FakeState, sourceRepo: string, forkOwner: string): Repo {
  const parent = state.repo(sourceRepo);
  if (parent.owner.toLowerCase() === forkOwner.toLowerCase()) {
    throw new Error(
      `fake GitHub: ${forkOwner} owns ${parent.fullName} already; GitHub does not fork a repository into its own owner`,
    );
  }
  const fullName = `${forkOwner}/${parent.name}`;
  if (state.findRepo(fullName)) throw new Error(`fake GitHub: ${fullName} already exists`);
  if (ownedIn(state, parent, forkOwner))
    throw new Error(`fake GitHub: ${forkOwner} already has a fork in ${parent.fullName}'s network`);
  // a fork of a private repository is private too
  const fork = state.addRepo(fullName, { defaultBranch: parent.defaultBranch, private: parent.isPrivate });
  // addRepo gave it a root commit of its own: a fork has its parent's history instead
  fork.commits.clear();
  fork.branches.clear();
  for (const [sha, c] of parent.commits) fork.commits.set(sha, c);
  for (const [name, sha] of parent.branches) fork.branches.set(name, sha);
  for (const [name, files] of parent.files) fork.files.set(name, new Map(files));
  fork.parent = parent;
  return fork;
}

/** The root of a repository's network (`source`): itself when it is no fork. */
export function rootOf(repo: Repo): Repo {
  let r = repo;
  while (r.parent) r = r.parent;
  return r;
}

/** The repositories forked directly from `repo` (its `forks_count`). */
export function forksOf(state: FakeState, repo: Repo): Repo[] {
  return [...state.repos.values()].filter((r) => r.parent === repo);
}

/** Every repository of `repo`'s network, the root included. */
export function networkOf(state: FakeState, repo: Repo): Repo[] {
  const root = rootOf(repo);
  return [...state.repos.values()].filter((r) => rootOf(r) === root);
}

/** The repository of `repo`'s network that `owner` owns (GitHub allows one), if any. */
export function ownedIn(state: FakeState, repo: Repo, owner: string): Repo | undefined {
  if (repo.owner.toLowerCase() === owner.toLowerCase()) return repo;
  return networkOf(state, repo).find((r) => r.owner.toLowerCase() === owner.toLowerCase());
}

/** The repository holding a pull request's head branch: a fork, or the pull's own repository. */
export function headRepoOf(state: FakeState, repo: Repo, pr: Pull): Repo {
  return pr.headRepo ? state.repo(pr.headRepo) : repo;
}

/**
 * A head as the REST API takes it: `branch` (this repository) or
 * `owner:branch`, the owner naming a repository of this network; null when
 * the owner has none.
 */
export function parseHead(state: FakeState, repo: Repo, head: string): { repo: Repo; ref: string } | null {
  const i = head.indexOf(":");
  if (i < 0) return { repo, ref: head };
  const owner = ownedIn(state, repo, head.slice(0, i));
  return owner ? { repo: owner, ref: head.slice(i + 1) } : null;
}

/** GitHub's `head=user:ref-name` filter: the owner of the head's repository and the branch name. */
export function headMatches(state: FakeState, repo: Repo, pr: Pull, owner: string, ref: string): boolean {
  return pr.headRef === ref && headRepoOf(state, repo, pr).owner.toLowerCase() === owner.toLowerCase();
}

/**
 * The head of a new pull request in `repo` from `headRepoName`'s `branch`:
 * that repository, which must be of the same network and have the branch.
 * Its commits up to the head are copied into `repo`, as GitHub does.
 */
export function crossHead(state: FakeState, repo: Repo, headRepoName: string, branch: string): Repo {
  const head = state.repo(headRepoName);
  if (head === repo) return repo;
  if (rootOf(head) !== rootOf(repo)) {
    throw new Error(`fake GitHub: ${head.fullName} is not in ${repo.fullName}'s network (addFork it first)`);
  }
  const sha = head.branches.get(branch);
  if (!sha) throw new Error(`fake GitHub: no branch ${branch} in ${head.fullName} (addBranch on the fork first)`);
  shareCommits(head, repo, sha);
  return head;
}

/** Copy `sha` and its ancestors that `to` lacks from `from`, oldest first (creation order stays topological). */
export function shareCommits(from: Repo, to: Repo, sha: string): void {
  const missing = new Set<string>();
  const stack = [sha];
  while (stack.length) {
    const s = stack.pop()!;
    if (missing.has(s) || to.commits.has(s)) continue;
    const c = from.commits.get(s);
    if (!c) continue;
    missing.add(s);
    stack.push(...c.parents);
  }
  if (!missing.size) return;
  for (const [s, c] of from.commits) if (missing.has(s)) to.commits.set(s, c);
}

/**
 * The open pull requests, in any repository, whose head is `headRepo`'s
 * `branch`: those of `headRepo` itself from a branch of its own, and
 * cross-repository ones from it into other repositories of its network.
 */
export function pullsFromBranch(state: FakeState, headRepo: Repo, branch: string): { repo: Repo; pr: Pull }[] {
  const out: { repo: Repo; pr: Pull }[] = [];
  for (const repo of state.repos.values()) {
    for (const pr of repo.pulls.values()) {
      if (pr.headRef !== branch || repo.issues.get(pr.number)?.state !== "open") continue;
      if (headRepoOf(state, repo, pr) === headRepo) out.push({ repo, pr });
    }
  }
  return out;
}

/**
 * `GET /repos/{owner}/{repo}` (full-repository): a fork also names its
 * `parent` and the network's `source`, which nested repositories (a pull's
 * head, a webhook's `repository`) leave out.
 */
export function fullRepoJson(state: FakeState, json: Serializer, repo: Repo): Record<string, unknown> {
  const out = json.repo(repo);
  out.network_count = networkOf(state, repo).length - 1;
  if (repo.parent) {
    out.parent = json.repo(repo.parent);
    out.source = json.repo(rootOf(repo));
  }
  return out;
}
