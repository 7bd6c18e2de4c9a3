/**
 * A worker's question may wait on a condition instead of a person:
 * `pr-merged:<owner/repo#n or pull request URL>`, `issue-closed:<n>` (in the
 * task's repository) or `npm-version:<package@range>`. Conditions are checked
 * on the events that can meet them (an issue closing, a PR merging) and by a
 * bounded sweep (npm through the registry's HTTP API). A met condition answers
 * the question with "condition met"; an unanswered question expires after
 * seven days with one comment.
 */
import semver from "semver";
import type { Logger } from "pino";
import { repoRef, type GitHub, type GitHubFor } from "../github/port.js";
import { errorText } from "../github/errors.js";
import { Refusal } from "../refusal.js";
import type { Tasks } from "../apply/tasks.js";
import type { HumanQueries } from "./queries.js";

export type Condition =
  | { kind: "pr-merged"; repo: string; number: number }
  | { kind: "issue-closed"; number: number }
  | { kind: "npm-version"; pkg: string; range: string };

const NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** A condition as written, or null when it is not one of the accepted forms. */
export function parseCondition(text: string): Condition | null {
  const [kind, ...rest] = text.split(":");
  const arg = rest.join(":").trim();
  if (kind === "issue-closed") return /^\d{1,9}$/.test(arg) ? { kind, number: Number(arg) } : null;
  if (kind === "pr-merged") {
    const ref = /^([^#\s]+)#(\d{1,9})$/.exec(arg);
    if (ref && NAME.test(ref[1]!)) return { kind, repo: ref[1]!, number: Number(ref[2]) };
    const url = /^https?:\/\/[^/\s]+\/([^/\s]+\/[^/\s]+)\/pull\/(\d{1,9})\/?$/.exec(arg);
    return url && NAME.test(url[1]!) ? { kind, repo: url[1]!, number: Number(url[2]) } : null;
  }
  if (kind === "npm-version") {
    const at = arg.lastIndexOf("@");
    if (at <= 0) return null;
    const pkg = arg.slice(0, at);
    const range = arg.slice(at + 1);
    if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(pkg) || semver.validRange(range) === null) return null;
    return { kind, pkg, range };
  }
  return null;
}

/**
 * Refuses a condition that would tell a worker about a repository its token
 * does not cover: `pr-merged:` is answered from GitHub with the App's access,
 * so a scoped worker may ask only about its own repositories (`repos` null: all).
 */
export function assertConditionInScope(text: string, repos: string[] | null): void {
  const c = parseCondition(text);
  if (c?.kind !== "pr-merged" || repos === null) return;
  if (repos.some((r) => r.toLowerCase() === c.repo.toLowerCase())) return;
  throw new Refusal(
    "forbidden",
    `condition ${text} names ${c.repo}, which this worker's token does not cover ` +
      `(it covers ${repos.length ? repos.join(", ") : "no repository"}): ask about a pull request in one of those, ` +
      `or have the operator register a worker whose repos include ${c.repo}`,
    { reason: "repository-out-of-scope", repos },
  );
}

/** Whether the newest versions the registry lists satisfy the range (`versions` as the registry answers them). */
export function npmSatisfied(versions: string[], range: string): boolean {
  return semver.maxSatisfying(versions, range) !== null;
}

/** How an issue or pull request is named in `Decision.awaits`: `owner/repo#n`, in lower case. */
export const awaitsKey = (repo: string, number: number): string => `${repo.toLowerCase()}#${number}`;

/** The issue or pull request a condition waits on (an issue of the task's repository), or null (npm, unparsed). */
export function awaitsOf(condition: string, taskRepo: string): string | null {
  const c = parseCondition(condition);
  if (c?.kind === "issue-closed") return awaitsKey(taskRepo, c.number);
  if (c?.kind === "pr-merged") return awaitsKey(c.repo, c.number);
  return null;
}

/** The abbreviated metadata (versions without their readmes), what npm itself asks for. */
const ABBREVIATED = "application/vnd.npm.install-v1+json";
export const NPM_TIMEOUT_MS = 15_000;
export const NPM_MAX_BYTES = 1024 * 1024;

/**
 * The versions the registry lists for a package, or null when it knows no
 * such package. The answer is read up to `maxBytes` and within `timeoutMs`
 * (the whole answer, body included); past either, or on any other answer, it
 * throws with the reason.
 */
export async function npmVersions(
  registry: string,
  pkg: string,
  opts: { fetch?: typeof fetch; timeoutMs?: number; maxBytes?: number } = {},
): Promise<string[] | null> {
  const timeoutMs = opts.timeoutMs ?? NPM_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? NPM_MAX_BYTES;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await (opts.fetch ?? fetch)(`${registry.replace(/\/$/, "")}/${pkg.replace("/", "%2F")}`, {
      headers: { accept: ABBREVIATED },
      signal,
    });
    if (res.status === 404 || !res.ok) {
      await res.body?.cancel();
      if (res.status === 404) return null;
      throw new Error(`the npm registry answered ${res.status} for ${pkg}`);
    }
    const doc = parseJson(await readCapped(res, maxBytes, pkg), pkg);
    const versions = (doc as { versions?: unknown } | null)?.versions;
    return versions && typeof versions === "object" ? Object.keys(versions) : [];
  } catch (err) {
    if (signal.aborted) {
      throw new Error(
        `the npm registry did not answer for ${pkg} within ${timeoutMs / 1000} s; ` +
          "check that ORCHESTRA_NPM_REGISTRY is reachable",
        { cause: err },
      );
    }
    throw err;
  }
}

function tooLarge(pkg: string, maxBytes: number): Error {
  return new Error(
    `the npm registry's answer for ${pkg} is over ${maxBytes} bytes (abbreviated metadata was asked for); ` +
      "check that ORCHESTRA_NPM_REGISTRY is an npm registry",
  );
}

/** The body as text, refused (and the rest not read) once it passes `maxBytes`. */
async function readCapped(res: Response, maxBytes: number, pkg: string): Promise<string> {
  if (Number(res.headers.get("content-length") ?? 0) > maxBytes) {
    await res.body?.cancel();
    throw tooLarge(pkg, maxBytes);
  }
  if (!res.body) return "";
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(pkg, maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string, pkg: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(
      `the npm registry's answer for ${pkg} is not JSON; check that ORCHESTRA_NPM_REGISTRY is an npm registry`,
    );
  }
}

export interface QuestionsDeps {
  queries: Pick<HumanQueries, "task" | "questionTasks" | "expiredQuestions" | "conditionQuestions" | "awaiting">;
  tasks: Tasks;
  githubFor: GitHubFor;
  clock: { now(): Date };
  log: Logger;
  /** The npm registry (default https://registry.npmjs.org; ORCHESTRA_NPM_REGISTRY). */
  npmRegistry: string;
  fetch?: typeof fetch;
  /** How long the registry has to answer, and how much of an answer is read (defaults below). */
  npmTimeoutMs?: number;
  npmMaxBytes?: number;
}

/** Questions checked per sweep, and how often one question's condition is asked again. */
const BATCH = 20;
const RECHECK_MS = 60_000;

export class Questions {
  readonly #checked = new Map<string, number>();
  constructor(readonly deps: QuestionsDeps) {}

  /**
   * An issue closed or a PR merged: questions waiting on it are answered. One
   * indexed read finds them (`Decision.awaits`); a close nobody waits on reads
   * nothing else.
   */
  async onClosed(repo: string, number: number, merged: boolean): Promise<number> {
    const { queries } = this.deps;
    const waiting = (await queries.awaiting(awaitsKey(repo, number))).filter((q) => {
      const kind = parseCondition(q.condition ?? "")?.kind;
      return kind === "issue-closed" || (kind === "pr-merged" && merged);
    });
    if (waiting.length === 0) return 0;
    const live = new Set((await queries.questionTasks([...new Set(waiting.map((q) => q.taskId))])).map((t) => t.id));
    let met = 0;
    for (const q of waiting) if (live.has(q.taskId) && (await this.#met(q.taskId, q.id, q.condition!))) met++;
    return met;
  }

  /**
   * Sweep: expired questions get their one comment, the longest expired
   * first and a batch at a time (each one raised closes it, so the next
   * sweep takes the next ones); conditions are asked again, a few at a time.
   */
  async sweep(): Promise<{ expired: number; met: number }> {
    const { queries, clock } = this.deps;
    const now = clock.now();
    let expired = 0;
    const stale = await queries.expiredQuestions(now, BATCH);
    for (const q of stale) {
      try {
        const r = await this.deps.tasks.raise(
          { taskId: q.taskId },
          { kind: "question-expired", decisionId: q.id, question: q.body },
        );
        if (r.outcome !== "refused") expired++;
      } catch (err) {
        this.deps.log.warn(
          { question: q.id, err: errorText(err) },
          "could not expire a question; the next sweep tries again",
        );
      }
    }
    const waiting = (await queries.conditionQuestions(200)).filter(
      (q) => now.getTime() - (this.#checked.get(q.id) ?? 0) >= RECHECK_MS,
    );
    let met = 0;
    for (const q of waiting.slice(0, BATCH)) {
      this.#checked.set(q.id, now.getTime());
      try {
        if ((await this.#holds(q.taskId, q.condition!)) && (await this.#met(q.taskId, q.id, q.condition!))) met++;
      } catch (err) {
        this.deps.log.warn(
          { question: q.id, condition: q.condition, err: errorText(err) },
          "could not check a question's condition; the next sweep asks again",
        );
      }
    }
    return { expired, met };
  }

  async #met(taskId: string, decisionId: string, condition: string): Promise<boolean> {
    const r = await this.deps.tasks.raise({ taskId }, { kind: "condition-met", decisionId, condition });
    return r.outcome !== "refused";
  }

  /** Asks GitHub or the registry whether the condition holds now. */
  async #holds(taskId: string, text: string): Promise<boolean> {
    const c = parseCondition(text);
    if (!c) return false;
    const task = await this.deps.queries.task(taskId);
    if (!task) return false;
    if (c.kind === "npm-version") {
      const { npmRegistry, fetch, npmTimeoutMs, npmMaxBytes } = this.deps;
      const versions = await npmVersions(npmRegistry, c.pkg, {
        ...(fetch ? { fetch } : {}),
        ...(npmTimeoutMs ? { timeoutMs: npmTimeoutMs } : {}),
        ...(npmMaxBytes ? { maxBytes: npmMaxBytes } : {}),
      });
      return versions !== null && npmSatisfied(versions, c.range);
    }
    const gh: Pick<GitHub, "getIssue" | "getPull"> = await this.deps.githubFor(task.installationId);
    if (c.kind === "issue-closed") return (await gh.getIssue(repoRef(task.repo), c.number))?.state === "closed";
    return (await gh.getPull(repoRef(c.repo), c.number))?.merged === true;
  }
}
