/**
 * The memory port's shared context, built once by memoryGitHub: the App and
 * the fake's clock, the repositories and comments GitHub keeps, the
 * installation tokens it accepts, the ids and commits it makes, the calls
 * recorded and the failures injected, and the lookups every area of the port
 * makes. The commit graph's answers (resolve, comparison) are pure functions
 * of a repository's record.
 */
import { createHash } from "node:crypto";
import type { Comparison, RepoRef } from "../../../src/github/port.js";
import { assertThrowable, OPERATIONS, refusal, type PortMethod } from "./failures.js";
import type { FailOptions, IssueRec, MemoryCall, MemoryGitHubInit, RepoRec, StoredComment } from "./records.js";

export type MemoryContext = ReturnType<typeof memoryContext>;

/** A branch name or a commit's sha → the sha; null when neither. */
export function resolve(rec: RepoRec, ref: string): string | null {
  const name = ref.replace(/^refs\/heads\//, "");
  return rec.branches.get(name) ?? (rec.commits.has(ref) ? ref : null);
}
function ancestors(rec: RepoRec, sha: string): Set<string> {
  const seen = new Set<string>();
  const todo = [sha];
  while (todo.length) {
    const s = todo.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    todo.push(...(rec.commits.get(s)?.parents ?? []));
  }
  return seen;
}
export function comparison(rec: RepoRec, baseSha: string, headSha: string): Comparison {
  const ofBase = ancestors(rec, baseSha);
  const ofHead = ancestors(rec, headSha);
  const aheadBy = [...ofHead].filter((s) => !ofBase.has(s)).length;
  const behindBy = [...ofBase].filter((s) => !ofHead.has(s)).length;
  const status =
    aheadBy === 0 && behindBy === 0 ? "identical" : behindBy === 0 ? "ahead" : aheadBy === 0 ? "behind" : "diverged";
  return { status, aheadBy, behindBy, headSha };
}

export function memoryContext(init: MemoryGitHubInit) {
  const app = init.app ?? "orchestra[bot]";
  const now = init.now ?? (() => new Date());
  const ghes = init.ghes ?? null;
  const repos = new Map<string, RepoRec>();
  const comments = new Map<number, StoredComment>();
  const calls: MemoryCall[] = [];
  /** Installation tokens GitHub still accepts (revokeToken answers "unknown" for any other). */
  const liveTokens = new Set<string>();
  const failures = new Map<PortMethod, Array<{ error: Error | (() => Error); left: number; applied: boolean }>>();
  let nextId = 1000;
  let nextSha = 0;
  /** The next id GitHub gives (comments, check runs, check suites, workflow runs share one sequence). */
  const newId = () => nextId++;

  // ---- lookups ----

  const fullName = (r: RepoRef) => `${r.owner}/${r.repo}`;
  function repoOf(method: string, name: string): RepoRec {
    const repo = repos.get(name);
    if (!repo)
      throw new Error(`memoryGitHub.${method}: no repository ${name} in the fake (seed it in repos, or addRepo)`);
    return repo;
  }
  const repo = (method: PortMethod, r: RepoRef) => repoOf(method, fullName(r));

  /** The issue (or pull request) for a port call: GitHub's 404 for none, 410 for a deleted one. */
  function issueFor(method: PortMethod, rec: RepoRec, number: number): IssueRec {
    const issue = rec.issues.get(number);
    if (!issue) throw refusal(method, 404, "Not Found");
    if (issue.deleted) throw refusal(method, 410, "This issue was deleted");
    return issue;
  }
  function seeded<T>(method: string, map: Map<number, T>, number: number, what: string): T {
    const found = map.get(number);
    if (!found) throw new Error(`memoryGitHub.${method}: no ${what} #${number}`);
    return found;
  }

  function newCommit(rec: RepoRec, parents: string[], sha?: string): string {
    const id = sha ?? createHash("sha1").update(`${rec.fullName}:${nextSha++}`).digest("hex");
    if (rec.commits.has(id)) throw new Error(`memoryGitHub: commit ${id} is already in ${rec.fullName}`);
    rec.commits.set(id, { parents, date: now() });
    return id;
  }

  // ---- recording and injected failures ----

  function takeFailure(method: PortMethod): { error: Error; applied: boolean } | null {
    const queue = failures.get(method);
    const next = queue?.[0];
    if (!queue || !next) return null;
    if (--next.left <= 0) queue.shift();
    const error = typeof next.error === "function" ? next.error() : next.error;
    assertThrowable(method, error);
    return { error, applied: next.applied };
  }

  async function call<R>(method: PortMethod, args: unknown[], body: () => R | Promise<R>): Promise<R> {
    let copy: unknown[];
    try {
      copy = structuredClone(args);
    } catch {
      copy = [...args];
    }
    const record: MemoryCall = { method, args: copy };
    calls.push(record);
    const injected = takeFailure(method);
    // Answer asynchronously, as a request would.
    await Promise.resolve();
    try {
      if (injected && !injected.applied) throw injected.error;
      const result = await body();
      if (injected) throw injected.error;
      return result;
    } catch (e) {
      record.error = e;
      throw e;
    }
  }

  /** The next `times` calls of `method` (default 1) throw `error` (or what `error()` makes, each time). */
  function fail(method: PortMethod, error: Error | (() => Error), opts: FailOptions = {}): void {
    const times = opts.times ?? 1;
    if (!(times >= 1) || (!Number.isInteger(times) && times !== Infinity))
      throw new Error(`memoryGitHub.fail: times must be a positive integer or Infinity, not ${times}`);
    if (!Object.hasOwn(OPERATIONS, method))
      throw new Error(`memoryGitHub.fail: ${String(method)} is not a method of the port`);
    if (typeof error !== "function") assertThrowable(method, error);
    const queue = failures.get(method) ?? [];
    queue.push({ error, left: times, applied: opts.applied ?? false });
    failures.set(method, queue);
  }

  return {
    app,
    now,
    ghes,
    repos,
    comments,
    calls,
    liveTokens,
    failures,
    newId,
    fullName,
    repoOf,
    repo,
    issueFor,
    seeded,
    newCommit,
    call,
    fail,
  };
}
