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
import { parseJson } from "../apply/views.js";
import type { Continuation } from "../machine/model.js";
import type { Worker, Workers } from "../workers/workers.js";
import type { Task } from "../store/generated/sqlite/client.js";
import type { DecisionOut, Decisions } from "./decisions.js";
import { gateSteps } from "./limits.js";
import { leaseSecondsLeft } from "./leases.js";
import type { ClaimQueries } from "./queries.js";
import { candidates, installationsInTurn, liveByInstallation } from "./candidates.js";

/** The continuation a claim hands out: the task's record of it, the branch, and the previous run's session. */
export type ClaimContinuation = Continuation & {
  branch: string;
  previous?: {
    runId: string;
    attempt: number;
    class: string | null;
    sessionRef?: string;
    harness?: string;
    model?: string;
  };
};

/** Where a run's repository is on GitHub: git over HTTPS, and the REST API the worker opens its PR with. */
export interface GitHubUrls {
  /** GitHub's web address: https://github.com, or a GitHub Enterprise Server's https://host. */
  web: string;
  /** The REST API: https://api.github.com, or https://host/api/v3. */
  api: string;
}

export const GITHUB_COM: GitHubUrls = { web: "https://github.com", api: "https://api.github.com" };

export interface ClaimAnswer {
  task: {
    id: string;
    repo: string;
    issue: number;
    title: string;
    body: string;
    /** The repository's git URL (`<web>/<owner>/<repo>.git`). */
    cloneUrl: string;
    /** The REST API's base URL for this repository's host. */
    apiUrl: string;
  };
  run: {
    id: string;
    attempt: number;
    leaseEpoch: string;
    leaseExpiresAt: string;
    /** The seconds the lease has left by the service's clock (heartbeats are paced by it). */
    leaseSeconds: number;
    branch: string;
    continuation: ClaimContinuation | null;
  };
  decisions: DecisionOut[];
  /** A GitHub token for the task's repository (`credentials: broker`); null: none (then maybe why). */
  credentials: { token: string; expiresAt: string } | null;
  credentialsError?: string;
}

export interface Won {
  runId: string;
  attempt: number;
  leaseEpoch: string;
  leaseExpiresAt: Date;
  /** broker: the run is handed a GitHub token (the repository's `credentials: broker`). */
  credentials: "broker" | null;
}

/**
 * Hands a claimed run its GitHub token, after the claim committed
 * (credentials/broker.ts): the claim says where, so nothing is read again.
 */
export interface ClaimCredentials {
  forClaim(run: {
    runId: string;
    installationId: number;
    repo: string;
  }): Promise<Pick<ClaimAnswer, "credentials" | "credentialsError">>;
}

export interface ClaimsDeps {
  queries: Pick<ClaimQueries, "previousRun">;
  database: Pick<Database, "raw" | "provider">;
  tasks: Tasks;
  workers: Workers;
  decisions: Decisions;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  clock: { now(): Date };
  /** The GitHub host's addresses, for the claim answer (github.com's when unset). */
  urls?: GitHubUrls;
  /** Installations whose webhook deliveries failed and are not recovered yet: nothing is claimed there. */
  deliveriesWaiting?: () => Promise<Set<number>>;
  /** Unset: claims carry no credentials. */
  credentials?: ClaimCredentials;
}

/** Candidates looked at per query, best first; a claim looks at a few windows at most. */
const WINDOW = 25;
const WINDOWS = 4;
/** Races lost (the task claimed by someone else first) before a claim gives up with a 204. */
const MAX_LOST = 8;

/** The git and API addresses of one repository on the host. */
export function repoUrls(urls: GitHubUrls | undefined, repo: string): { cloneUrl: string; apiUrl: string } {
  const { web, api } = urls ?? GITHUB_COM;
  return { cloneUrl: `${web.replace(/\/$/, "")}/${repo}.git`, apiUrl: api.replace(/\/$/, "") };
}

export class Claims {
  /**
   * Tasks a claim in this process is deciding on: other claims
   * here take the next candidate instead of queueing behind it.
   */
  readonly #claiming = new Set<string>();

  constructor(readonly deps: ClaimsDeps) {}

  async #config(task: Pick<Task, "installationId" | "repo">): Promise<RepoConfig | null> {
    const r = await this.deps.configs.get(task.installationId, task.repo).catch(() => null);
    return r?.ok ? r.config : null;
  }

  /** The best claimable task among the worker's repositories, or null (204). */
  async claim(worker: Worker): Promise<ClaimAnswer | null> {
    await this.deps.workers.seen(worker);
    const won = await this.next("worker", this.deps.workers.reposOf(worker), worker.id);
    if (!won) return null;
    const { task: c, run } = won;
    return {
      task: {
        id: c.id,
        repo: c.repo,
        issue: c.issue,
        title: c.title,
        body: c.body,
        ...repoUrls(this.deps.urls, c.repo),
      },
      run: {
        id: run.runId,
        attempt: run.attempt,
        leaseEpoch: run.leaseEpoch,
        leaseExpiresAt: run.leaseExpiresAt.toISOString(),
        leaseSeconds: leaseSecondsLeft(run.leaseExpiresAt, this.deps.clock.now()),
        branch: c.branch,
        continuation: await this.#continuation(c, run.runId),
      },
      decisions: await this.deps.decisions.forClaim(c.id, run.runId, c.headSha),
      ...((run.credentials === "broker"
        ? await this.deps.credentials?.forClaim({ runId: run.runId, installationId: c.installationId, repo: c.repo })
        : undefined) ?? { credentials: null }),
    };
  }

  /**
   * A continuation as its agent needs it, without reading GitHub: what the
   * task recorded (kind, PR, head and base, why, failing checks or review),
   * the branch, and the previous run's session as reported on its exit.
   */
  async #continuation(task: Task, runId: string): Promise<ClaimContinuation | null> {
    const c = parseJson<Continuation>(task.continuation);
    if (!c) return null;
    const prev = await this.deps.queries.previousRun(task.id, runId);
    const report = parseJson<{ sessionRef?: string; harness?: string; model?: string }>(prev?.report ?? null) ?? {};
    return {
      ...c,
      branch: task.branch,
      ...(c.headSha ? {} : prev?.headSha ? { headSha: prev.headSha } : {}),
      ...(prev
        ? {
            previous: {
              runId: prev.id,
              attempt: prev.attempt,
              class: prev.class,
              ...(report.sessionRef ? { sessionRef: report.sessionRef } : {}),
              ...(report.harness ? { harness: report.harness } : {}),
              ...(report.model ? { model: report.model } : {}),
            },
          }
        : {}),
    };
  }

  /**
   * Claims the best claimable task for a worker (or, in dispatch mode, for
   * the App's workflow): installations take turns, fewest live leases first;
   * within one, the claim query's order. A candidate another claim took
   * first, or whose gate closed meanwhile, is passed over.
   */
  async next(
    mode: "worker" | "dispatch",
    repos: string[] | null,
    workerId: string | null,
  ): Promise<{ task: Task; run: Won } | null> {
    const { database, clock } = this.deps;
    const now = clock.now();
    // When that cannot be told, claims go on: the check is a guard, not a gate that fails closed.
    const waiting = (await this.deps.deliveriesWaiting?.().catch(() => null)) ?? new Set<number>();
    const turn = (await installationsInTurn(database, await liveByInstallation(database))).filter(
      (i) => !waiting.has(i),
    );
    const seen = new Set<string>();
    let lost = 0;
    for (const installationId of turn) {
      for (let look = 0; look < WINDOWS + MAX_LOST; look++) {
        const list = await candidates(database, installationId, {
          mode,
          now,
          repos,
          skip: [...seen, ...this.#claiming],
          limit: WINDOW,
        });
        if (list.length === 0) break;
        // After losing a race to another replica, start a little way down the
        // list: its claims are taking the head of the same queue.
        const start = lost > 0 ? Math.floor(Math.random() * Math.min(4, list.length)) : 0;
        const gated = new Set<string>();
        let raced = false;
        for (let i = 0; i < list.length && !raced; i++) {
          const c = list[(start + i) % list.length]!;
          seen.add(c.id);
          if (this.#claiming.has(c.id) || gated.has(c.repo)) continue;
          const config = await this.#config(c);
          if (!config) continue; // invalid: its row says so after the next read
          const won = await this.claimTask(c, config, { mode, workerId });
          if (won === "gated") gated.add(c.repo);
          // The list is stale: someone claimed from it meanwhile. Read it again.
          if (won === "lost") raced = ++lost <= MAX_LOST;
          if (won !== null && typeof won !== "string") return { task: c, run: won };
        }
        if (!raced && list.length < WINDOW) break;
      }
    }
    return null;
  }

  /**
   * The fenced claim of one task, for a worker or a dispatched workflow. Of
   * any number of concurrent claimers exactly one transaction commits; a
   * claim that would go over a limit rolls back and changes nothing.
   */
  async claimTask(
    task: Task,
    config: RepoConfig,
    who: { mode: "worker" | "dispatch"; workerId: string | null },
  ): Promise<Won | "gated" | "lost" | null> {
    if (this.#claiming.has(task.id)) return null;
    this.#claiming.add(task.id);
    try {
      const runId = randomUUID();
      const leaseEpoch = randomUUID();
      // One try: a task someone else is claiming right now is theirs; the claim moves on.
      const r = await this.deps.tasks.raise(
        { task },
        { kind: "claim", mode: who.mode, runId, leaseEpoch, workerId: who.workerId },
        {
          steps: gateSteps(this.deps.database.provider, task.repo, config, runId, this.deps.clock.now()),
          noWait: true,
          attempts: 1,
        },
      );
      // over a limit, paused, breaker: rolled back
      if (r.outcome === "refused" && r.reason === "rolled-back") return "gated";
      // claimed (or changed) by someone else first
      if (r.outcome === "refused" && r.reason === "superseded") return "lost";
      if (r.outcome !== "applied") return null;
      return {
        runId,
        attempt: r.decision.newRun!.attempt,
        leaseEpoch,
        leaseExpiresAt: r.decision.newRun!.leaseExpiresAt,
        credentials: r.decision.newRun!.credentials ?? null,
      };
    } finally {
      this.#claiming.delete(task.id);
    }
  }
}
