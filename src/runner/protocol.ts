/**
 * The worker API as the worker reads it: what a claim, a heartbeat and the
 * re-attach list answer, and what an exit sends. The request bodies are the
 * API's own schemas (types only: the worker talks to the service over HTTP);
 * the answers are written out here because a worker meets servers of other
 * versions, so every field a newer server adds is optional.
 */
import type { z } from "zod";
import type { schemas } from "../api/worker-schemas.js";
import type { Continuation } from "../machine/model.js";

export type ExitBody = z.infer<typeof schemas.exit>;
export type Usage = NonNullable<ExitBody["usage"]>;

/** A brokered GitHub installation token, scoped to the task's repository. */
export interface Credentials {
  token: string;
  expiresAt: string;
}

export interface Decision {
  id: string;
  kind: string;
  subject?: string;
  body: string;
  author: string;
  at?: string;
  /** Superseded by a later one: shown for context, never receipted. */
  history?: true;
}

export interface ClaimTask {
  id: string;
  repo: string;
  issue: number;
  title: string;
  body: string;
  /** Where git fetches and pushes the repository (newer servers). */
  cloneUrl?: string;
  /** The GitHub REST API base for this repository's host (newer servers). */
  apiUrl?: string;
}

export type RunContinuation = Continuation & { branch?: string };

export interface ClaimAnswer {
  task: ClaimTask;
  run: {
    id: string;
    attempt: number;
    leaseEpoch: string;
    leaseExpiresAt: string;
    /** Seconds left on the lease by the service's clock (newer servers). */
    leaseSeconds?: number;
    branch: string;
    continuation: RunContinuation | null;
  };
  decisions: Decision[];
  credentials?: Credentials | null;
}

export interface HeartbeatAnswer {
  leaseExpiresAt: string;
  leaseSeconds?: number;
  decisions: Decision[];
  credentials?: Credentials | null;
}

/** What a heartbeat reports: dirty and ahead are read by newer servers, dropped for older ones. */
export interface Progress {
  headSha?: string;
  worktree?: string;
  step?: string;
  dirty?: boolean;
  ahead?: number;
}

export interface ExitAnswer {
  /** dispatched: no service answered; the job's conclusion reports the run (dispatched.ts). */
  outcome: "review" | "classified" | "dispatched";
  prNumber?: number;
  class?: string;
  recovery?: string;
  evidence?: Record<string, unknown>;
}

export interface LiveRun {
  id: string;
  task: { id: string; repo: string; issue: number; title?: string };
  attempt?: number;
  leaseEpoch: string;
  leaseExpiresAt: string;
  branch?: string;
  continuation?: RunContinuation | null;
}
