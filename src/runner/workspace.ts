/**
 * The worker's directory: one cached bare mirror per repository
 * (`mirrors/<owner>/<repo>.git`, cloned once, fetched for every run) and one
 * `git worktree` per run (`runs/<run id>`), with the run's record beside it
 * (`runs/<run id>.json`) so a restarted worker knows what it was doing.
 *
 * The mirror keeps the remote's branches as remote-tracking refs
 * (`origin/<branch>`), not as its own branches: a fetch refuses to move a
 * branch a worktree has checked out, and the agent gets the `origin/main` it
 * expects to rebase onto. A run fetches only the two branches it works with,
 * the default branch and its own: on a busy repository everything else is
 * other people's pushes, which cost the run their objects and a round trip.
 */
import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomUUID } from "node:crypto";
import { ORCHESTRA_DIR } from "./facts.js";
import { commitsOf, git, GitFailed, gitOk } from "./git.js";
import { discard, park, reuseSpare } from "./spares.js";

export interface Mirror {
  path: string;
  defaultBranch: string;
}

/** One git operation on a mirror at a time in this worker (clone, fetch, worktree add and remove). */
const busy = new Map<string, Promise<unknown>>();
function serially<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = busy.get(key) ?? Promise.resolve();
  const next = before.catch(() => undefined).then(work);
  busy.set(
    key,
    next.catch(() => undefined),
  );
  return next;
}

export const mirrorPath = (workdir: string, repo: string): string => join(workdir, "mirrors", `${repo}.git`);

/**
 * The mirror of `repo`, cloned on first use, else fetched (with `token`): its
 * default branch and the run's `branch`, which need not exist yet (a pattern:
 * `<branch>*`, which may also bring a branch whose name starts with it).
 */
export function ensureMirror(
  workdir: string,
  repo: string,
  url: string,
  token: string | null,
  branch: string,
): Promise<Mirror> {
  const path = mirrorPath(workdir, repo);
  return serially(path, async () => {
    const cloned = !existsSync(join(path, "HEAD"));
    if (cloned) await cloneMirror(path, url, token);
    const main = (await git(["symbolic-ref", "--short", "HEAD"], { cwd: path })).stdout.trim() || "main";
    if (!cloned) {
      // The claim's URL, not the remote's: the token goes nowhere else, whatever the mirror's config says.
      const fetch = ["fetch", "--prune", "--quiet", url, `+refs/heads/${main}:refs/remotes/origin/${main}`];
      if (branch !== main) fetch.push(`+refs/heads/${branch}*:refs/remotes/origin/${branch}*`);
      const r = await git(fetch, { cwd: path, token });
      if (r.code !== 0 && /couldn't find remote ref/.test(r.stderr))
        throw new Error(
          `the repository has no default branch ${main} (an empty repository?); push a first commit to it`,
        );
      if (r.code !== 0) throw new GitFailed(fetch, r);
    }
    await excludeOrchestra(path);
    return { path, defaultBranch: main };
  });
}

/**
 * `git clone --bare`, its branches moved under `origin/` (see above) in one
 * local ref transaction: the clone has just fetched everything, so no fetch
 * follows it.
 */
async function cloneMirror(path: string, url: string, token: string | null): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.clone-${randomUUID().slice(0, 8)}`;
  try {
    await gitOk(["clone", "--bare", "--quiet", url, tmp], { cwd: dirname(path), token });
    const format = "create refs/remotes/origin/%(refname:lstrip=2) %(objectname)%0adelete %(refname) %(objectname)";
    const moves = await gitOk(["for-each-ref", `--format=${format}`, "refs/heads/"], { cwd: tmp });
    if (moves.trim()) await gitOk(["update-ref", "--no-deref", "--stdin"], { cwd: tmp, input: moves });
    await gitOk(["config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"], { cwd: tmp });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** `.orchestra/` is never committed: excluded in the mirror, which every worktree of it reads. */
async function excludeOrchestra(mirror: string): Promise<void> {
  const file = join(mirror, "info", "exclude");
  const text = existsSync(file) ? await readFile(file, "utf8") : "";
  if (text.split("\n").includes(`/${ORCHESTRA_DIR}/`)) return;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${text && !text.endsWith("\n") ? "\n" : ""}/${ORCHESTRA_DIR}/\n`);
}

/** What the worker keeps of a run beside its worktree, for a restart. Never a token. */
export interface RunRecord {
  runId: string;
  leaseEpoch: string;
  repo: string;
  issue: number;
  title: string;
  branch: string;
  defaultBranch: string;
  /** The branch's head when the run started: unchanged and clean at the end means no change at all. */
  startSha: string;
  cloneUrl: string;
  apiUrl: string;
  continuation: string | null;
  /** The agent's process group, while it runs. */
  agentPid?: number;
}

export const worktreePath = (workdir: string, runId: string): string => join(workdir, "runs", runId);
const recordPath = (workdir: string, runId: string) => join(workdir, "runs", `${runId}.json`);

export async function saveRecord(workdir: string, record: RunRecord): Promise<void> {
  const path = recordPath(workdir, record.runId);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(`${path}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}

export async function loadRecord(workdir: string, runId: string): Promise<RunRecord | null> {
  try {
    return JSON.parse(await readFile(recordPath(workdir, runId), "utf8")) as RunRecord;
  } catch {
    return null;
  }
}

/**
 * The run's worktree on its branch: the remote branch when it exists (a
 * continuation's, or work an earlier attempt left), else a new branch from
 * the default branch. Answers where it started.
 */
export async function addWorktree(
  workdir: string,
  mirror: Mirror,
  runId: string,
  branch: string,
): Promise<{ path: string; startSha: string; existing: boolean }> {
  return serially(mirror.path, () => newWorktree(workdir, mirror, runId, branch));
}

async function newWorktree(workdir: string, mirror: Mirror, runId: string, branch: string) {
  const path = worktreePath(workdir, runId);
  const [remote, base] = await commitsOf(mirror.path, [
    `refs/remotes/origin/${branch}`,
    `refs/remotes/origin/${mirror.defaultBranch}`,
  ]);
  const start = remote ?? base;
  if (!start)
    throw new Error(
      `the repository has neither the branch ${branch} nor its default branch ${mirror.defaultBranch} ` +
        "(an empty repository?); push a first commit to it",
    );
  await mkdir(dirname(path), { recursive: true });
  if (!(await reuseSpare(workdir, mirror.path, path, branch, start))) {
    await gitOk(["worktree", "prune"], { cwd: mirror.path });
    // --force: a branch left checked out by a worktree of an earlier, dead run of this task.
    await gitOk(["worktree", "add", "--quiet", "--force", "--no-track", "-B", branch, path, start], {
      cwd: mirror.path,
    });
  }
  if (remote) await gitOk(["branch", "--quiet", `--set-upstream-to=origin/${branch}`], { cwd: path });
  // Commits need an author: the machine's own when it has one, else the worker's.
  if ((await git(["config", "user.email"], { cwd: path })).stdout.trim() === "") {
    await gitOk(["config", "user.name", "Orchestra worker"], { cwd: mirror.path });
    await gitOk(["config", "user.email", "worker@orchestra.invalid"], { cwd: mirror.path });
  }
  await mkdir(join(path, ORCHESTRA_DIR, "decisions"), { recursive: true });
  return { path, startSha: start, existing: remote !== null };
}

/**
 * The run's worktree, its local branch and its record, gone: only once its
 * work is pushed or was nothing. The worktree itself is kept as a spare for
 * the repository's next run while fewer than `spares` are kept.
 */
export function removeWorktree(
  workdir: string,
  mirror: string,
  runId: string,
  branch: string,
  spares: number,
): Promise<void> {
  return serially(mirror, () => dropWorktree(workdir, mirror, runId, branch, spares));
}

async function dropWorktree(workdir: string, mirror: string, runId: string, branch: string, spares: number) {
  const path = worktreePath(workdir, runId);
  if (!(await park(workdir, mirror, path, spares))) await discard(mirror, path);
  await git(["branch", "-D", "--quiet", branch], { cwd: mirror });
  await rm(recordPath(workdir, runId), { force: true });
}
