/**
 * Spare worktrees: a finished run's worktree, its work pushed, is kept
 * (`spares/<owner>/<repo>/<id>`, detached, at most one per slot) and becomes
 * the next run's worktree of that repository. Writing every file of the tree
 * is most of what `git worktree add` costs (on a 300-file tree about 200 ms of
 * file creation, against 10 ms for switching a spare to the new branch, which
 * writes only the files that differ). A reused spare is made what a new
 * worktree would be: nothing git does not track (`git clean -ffdx`, the last
 * run's `.orchestra/` with it), no index entry flagged to hide a change, none
 * of the last run's per-worktree state; else it is not used but removed.
 *
 * A spare holds nothing of value: only a worktree whose work is pushed or was
 * nothing is parked (the same ones that were removed before), and reusing it
 * deletes no more than removing it did.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { git } from "./git.js";

/** Where `mirror`'s spares are kept: `spares/<owner>/<repo>/`. */
function sparesOf(workdir: string, mirror: string): string {
  return join(workdir, "spares", relative(join(workdir, "mirrors"), mirror).replace(/\.git$/, ""));
}

async function spares(workdir: string, mirror: string): Promise<string[]> {
  const dir = sparesOf(workdir, mirror);
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.map((n) => join(dir, n));
}

/**
 * A worktree's own files in the mirror (`worktrees/<id>/`) that a plain one
 * has; `true` marks those the last run leaves behind, removed before reuse.
 * Anything else (a rebase, merge, cherry-pick or bisect in progress, a
 * worktree config, sparse-checkout patterns, submodules) means the spare is
 * not reused.
 */
const PLAIN: Record<string, boolean> = {
  HEAD: false,
  commondir: false,
  gitdir: false,
  index: false,
  ORIG_HEAD: true,
  FETCH_HEAD: true,
  COMMIT_EDITMSG: true,
  AUTO_MERGE: true,
  logs: true,
};

/** The worktree's own directory in the mirror, when it has only what a plain worktree has; its traces removed. */
async function plainGitDir(path: string): Promise<boolean> {
  const link = await readFile(join(path, ".git"), "utf8").catch(() => "");
  const m = /^gitdir: (.+)$/m.exec(link);
  if (!m) return false;
  const dir = resolve(path, m[1]!.trim());
  const names = await readdir(dir).catch(() => null);
  if (!names || names.some((n) => !(n in PLAIN))) return false;
  for (const n of names) if (PLAIN[n]) await rm(join(dir, n), { recursive: true, force: true });
  return true;
}

/** Index entries flagged assume-unchanged or skip-worktree hide a file's change from git: `ls-files -v` says. */
async function plainIndex(path: string): Promise<boolean> {
  const r = await git(["ls-files", "-v", "-z"], { cwd: path });
  return r.code === 0 && r.stdout.split("\0").every((e) => e === "" || e.startsWith("H "));
}

/** A worktree removed with everything in it (a spare, or a worktree whose work is pushed). */
export async function discard(mirror: string, path: string): Promise<void> {
  await git(["worktree", "remove", "--force", path], { cwd: mirror });
  await rm(path, { recursive: true, force: true });
  await git(["worktree", "prune"], { cwd: mirror });
}

/**
 * One of `mirror`'s spares at `path`, on a new `branch` at `start`, as a new
 * worktree would be; false when there is none to reuse (then a spare that
 * could not be made so is removed).
 */
export async function reuseSpare(
  workdir: string,
  mirror: string,
  path: string,
  branch: string,
  start: string,
): Promise<boolean> {
  const [spare] = await spares(workdir, mirror);
  if (!spare) return false;
  if ((await git(["worktree", "move", spare, path], { cwd: mirror })).code !== 0) {
    await discard(mirror, spare);
    return false;
  }
  const ready =
    (await plainGitDir(path)) &&
    (await plainIndex(path)) &&
    (await git(["clean", "-ffdxq"], { cwd: path })).code === 0 &&
    // --ignore-other-worktrees: as `worktree add --force`, a branch left checked out by an earlier, dead run.
    (
      await git(["checkout", "--quiet", "--force", "--no-track", "--ignore-other-worktrees", "-B", branch, start], {
        cwd: path,
      })
    ).code === 0;
  if (!ready) await discard(mirror, path);
  return ready;
}

/**
 * The finished worktree at `path`, detached (so its branch can go) and moved
 * among `mirror`'s spares, when fewer than `keep` are kept; false when it was
 * not parked.
 */
export async function park(workdir: string, mirror: string, path: string, keep: number): Promise<boolean> {
  if (!existsSync(path) || (await spares(workdir, mirror)).length >= keep) return false;
  if ((await git(["update-ref", "--no-deref", "HEAD", "HEAD"], { cwd: path })).code !== 0) return false;
  const dir = sparesOf(workdir, mirror);
  await mkdir(dir, { recursive: true });
  return (await git(["worktree", "move", path, join(dir, randomUUID().slice(0, 8))], { cwd: mirror })).code === 0;
}
