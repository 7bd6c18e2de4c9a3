/**
 * What the effects executor is built from: its options (pace, retries,
 * leases) and the rooms it performs effects with.
 */
import type { GitHubFor } from "../github/port.js";
import type { Logger } from "pino";
import type { Tasks } from "../apply/tasks.js";
import type { Ledger } from "../cost/ledger.js";
import type { EventOf } from "../machine/events.js";
import type { Step } from "../store/sql.js";
import type { Installations } from "./installations.js";
import type { Outbox } from "./outbox.js";
import type { PerformContext } from "./perform.js";
import type { CheckRunQueries, EffectsQueries } from "./queries.js";

export interface ExecutorOptions {
  /** Installations worked at once (default 4). */
  concurrency?: number;
  /** How often to look for due effects when nothing pokes (other replicas' effects, retries coming due). */
  pollMs?: number;
  /** How long a claim on an effect lasts; a dead performer's effects are taken over after it. */
  leaseMs?: number;
  /**
   * How long failures worth retrying (5xx, no answer, rate limits)
   * are retried, from the first, before parking (default 6 h).
   */
  windowMs?: number;
  /** Retry delay: base doubling per attempt, ±25% jitter, capped (default 2 s to 10 min). */
  backoff?: { baseMs: number; capMs: number };
  /**
   * Pokes closer together than this are answered by one look
   * (default 100 ms): a burst of claims is one query, not hundreds.
   */
  pokeGapMs?: number;
  owner?: string;
}

export interface ExecutorDeps {
  /** The task and run an effect is performed on, and what its check run shows. */
  queries: CheckRunQueries & Pick<EffectsQueries, "run" | "repoAccess">;
  outbox: Outbox;
  installations: Installations;
  githubFor: GitHubFor;
  tasks: Tasks;
  ledger: Ledger;
  log: Logger;
  clock: { now(): Date };
  /** Performs fleet-issue effects (fleet/issues.ts). */
  fleet?: PerformContext["fleet"];
  /** Performs revoke-credentials effects (credentials/broker.ts). */
  credentials?: PerformContext["credentials"];
  /** What GitHub already said of issues' labels and of Orchestra's check runs (effects/seen.ts). */
  seen?: PerformContext["seen"];
  /**
   * The repository's breaker for dispatches GitHub refuses there (gates/dispatch-breaker.ts): a refusal for
   * the whole repository is raised through it, in one transaction with the breaker; an accepted one is told.
   */
  dispatches?: {
    refused(
      where: { taskId: string; installationId: number; repo: string },
      event: EventOf<"dispatch-refused">,
      steps: Step[],
    ): Promise<{ stepsRan: boolean }>;
    accepted(repo: string, runId: string): Promise<unknown>;
  };
}
