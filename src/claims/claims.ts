/**
 * Claims: who gets which task. A claim is one event through the machine — the
 * task moves from queued to claimed with run N+1 and a new lease epoch, in one
 * fenced transaction that also re-checks the limits — and the answer goes out
 * as soon as it commits. The label swap follows from the outbox.
 */
import { randomUUID } from "node:crypto";
import type { Database } from "../store/db.js";
import type { ConfigResult, RepoConfig } from "../config/repo.js";
import type { Tasks } from "../apply/tasks.js";
import { parseJson, taskFromSql } from "../apply/views.js";
import type { Continuation } from "../machine/model.js";
import type { Worker, Workers } from "../workers/workers.js";
import type { Task } from "../store/generated/sqlite/client.js";
import type { DecisionOut, Decisions } from "./decisions.js";
import { limitSteps } from "./limits.js";
import { select } from "../store/sql.js";

export interface ClaimAnswer {
  task: { id: string; repo: string; issue: number; title: string; body: string };
  run: {
    id: string;
    attempt: number;
    leaseEpoch: string;
    leaseExpiresAt: string;
    branch: string;
    continuation: Continuation | null;
  };
  decisions: DecisionOut[];
}

export interface Won {
  runId: string;
  attempt: number;
  leaseEpoch: string;
  leaseExpiresAt: Date;
}

export interface ClaimsDeps {
  database: Pick<Database, "raw" | "provider">;
  tasks: Tasks;
  workers: Workers;
  decisions: Decisions;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  clock: { now(): Date };
}

/** Candidates looked at per query, oldest highest-priority first; a claim looks at a few windows at most. */
const WINDOW = 25;
const WINDOWS = 4;
/** Races lost (the task claimed by someone else first) before a claim gives up with a 204. */
const MAX_LOST = 8;

export class Claims {
  /** Tasks a claim in this process is deciding on: other claims here take the next candidate instead of queueing behind it. */
  readonly #claiming = new Set<string>();

  constructor(readonly deps: ClaimsDeps) {}

  async #config(task: Pick<Task, "installationId" | "repo">): Promise<RepoConfig | null> {
    const r = await this.deps.configs.get(task.installationId, task.repo).catch(() => null);
    return r?.ok ? r.config : null;
  }

  /** The oldest highest-priority claimable task among the worker's repositories, or null (204). */
  async claim(worker: Worker): Promise<ClaimAnswer | null> {
    const now = this.deps.clock.now();
    await this.deps.workers.seen(worker);
    const repos = this.deps.workers.reposOf(worker);
    const seen = new Set<string>();
    // Per claim: repositories found full need not be tried again.
    const full = new Set<string>();
    let lost = 0;
    for (let look = 0; look < WINDOWS + MAX_LOST; look++) {
      const candidates = await this.#candidates(now, repos, [...seen, ...this.#claiming]);
      if (candidates.length === 0) return null;
      // After losing a race to another replica, start a little way down the
      // list: its claims are taking the head of the same queue.
      const start = lost > 0 ? Math.floor(Math.random() * Math.min(4, candidates.length)) : 0;
      let raced = false;
      for (let i = 0; i < candidates.length && !raced; i++) {
        const c = candidates[(start + i) % candidates.length]!;
        seen.add(c.id);
        if (this.#claiming.has(c.id) || full.has(c.repo)) continue;
        const config = await this.#config(c);
        if (!config || config.dispatch) continue; // paused by an invalid config, or the App runs it itself
        const won = await this.claimTask(c, config, { mode: "worker", workerId: worker.id });
        if (won === "full") full.add(c.repo);
        // The list is stale: someone claimed from it meanwhile. Read it again.
        if (won === "lost") raced = ++lost <= MAX_LOST;
        if (won === null || typeof won === "string") continue;
        return {
          task: { id: c.id, repo: c.repo, issue: c.issue, title: c.title, body: c.body },
          run: {
            id: won.runId,
            attempt: won.attempt,
            leaseEpoch: won.leaseEpoch,
            leaseExpiresAt: won.leaseExpiresAt.toISOString(),
            branch: c.branch,
            continuation: parseJson<Continuation>(c.continuation),
          },
          decisions: await this.deps.decisions.deliver(c.id, won.runId),
        };
      }
      if (!raced && candidates.length < WINDOW) return null;
    }
    return null;
  }

  /**
   * The next window of claimable candidates: queued, not backing off, in the
   * worker's repositories, oldest highest-priority first, none of `skip`.
   * (The claim's one hot read, in plain SQL; the index on state, priority and
   * queued-at serves it.)
   */
  async #candidates(now: Date, repos: string[] | null, skip: string[]): Promise<Task[]> {
    const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");
    const where = [`"state" = 'queued'`, `("backoffUntil" IS NULL OR "backoffUntil" <= ?)`];
    const args: unknown[] = [now];
    if (repos) {
      if (repos.length === 0) return [];
      where.push(`"repo" IN (${marks(repos.length)})`);
      args.push(...repos);
    }
    if (skip.length) {
      where.push(`"id" NOT IN (${marks(skip.length)})`);
      args.push(...skip);
    }
    const rows = await select(this.deps.database, `SELECT * FROM "Task" WHERE ${where.join(" AND ")} ORDER BY "priority", "queuedAt" LIMIT ${WINDOW}`, args);
    return rows.map(taskFromSql);
  }

  /**
   * The fenced claim of one task, for a worker or a dispatched workflow. Of
   * any number of concurrent claimers exactly one transaction commits; a
   * claim that would go over a limit rolls back and changes nothing.
   */
  async claimTask(task: Task, config: RepoConfig, who: { mode: "worker" | "dispatch"; workerId: string | null }): Promise<Won | "full" | "lost" | null> {
    if (this.#claiming.has(task.id)) return null;
    this.#claiming.add(task.id);
    try {
      const runId = randomUUID();
      const leaseEpoch = randomUUID();
      // One try: a task someone else is claiming right now is theirs; the claim moves on.
      const r = await this.deps.tasks.raise(
        { task },
        { kind: "claim", mode: who.mode, runId, leaseEpoch, workerId: who.workerId },
        { steps: limitSteps(this.deps.database.provider, task.repo, config), noWait: true, attempts: 1 },
      );
      if (r.outcome === "refused" && r.reason === "rolled-back") return "full"; // over a limit: rolled back
      if (r.outcome === "refused" && r.reason === "superseded") return "lost"; // claimed (or changed) by someone else first
      if (r.outcome !== "applied") return null;
      return { runId, attempt: r.decision.newRun!.attempt, leaseEpoch, leaseExpiresAt: r.decision.newRun!.leaseExpiresAt };
    } finally {
      this.#claiming.delete(task.id);
    }
  }
}
