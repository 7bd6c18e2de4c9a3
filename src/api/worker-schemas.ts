/**
 * What the worker API accepts: the bounds of every reported field, the
 * request schemas, and what its routes need. Shared by the worker routes
 * (api/workers.ts) and the admin routes that manage workers
 * (api/worker-admin.ts).
 */
import type { Broker } from "../credentials/broker.js";
import { z } from "zod";
import type { ApiQueries } from "./queries.js";
import type { Workers } from "../workers/workers.js";
import type { WorkerTokens } from "../workers/tokens.js";
import type { Claims } from "../claims/claims.js";
import type { Leases } from "../claims/leases.js";
import type { Exits } from "../exits/exit.js";
import type { Releases } from "../claims/releases.js";
import type { WorkerPauses } from "../workers/pauses.js";
import { INFRA_DEATHS } from "../outcomes/facts.js";
import { parseCondition } from "../human/conditions.js";
import type { Idempotency } from "./idempotency.js";

/**
 * Bounds of what a worker may report. Everything reported is stored on the
 * run and some of it is quoted in comments on GitHub (the last tool calls of
 * an escalation, a question), so nothing is unbounded.
 */
export const LIMITS = {
  name: 100,
  repos: 1000,
  leaseEpoch: 100,
  branch: 255,
  lastToolCalls: 50,
  toolCall: 2000,
  question: 10_000,
  condition: 500,
  progressField: 200,
  sessionRef: 1000,
  label: 200,
  releaseReason: 1000,
} as const;

const n = (v: number) => v.toLocaleString("en-US");
/** A string of at most `max` characters, whose error names the limit. */
const text = (max: number) => z.string().max(max, `at most ${n(max)} characters`);
const repoName = text(200).regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "must be owner/repo");
const epoch = text(LIMITS.leaseEpoch).min(1, "must not be empty");
const sha = z.string().regex(/^[0-9a-f]{7,40}$/, "must be a commit sha (7 to 40 hex digits)");
/** The run's model usage so far (a running total: the latest report wins). */
const usage = z
  .object({
    inputTokens: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
    costUsd: z.number().min(0).max(1_000_000, "at most 1,000,000"),
  })
  .strict();

export const schemas = {
  register: z
    .object({
      name: text(LIMITS.name).min(1, "must not be empty"),
      repos: z
        .array(repoName)
        .max(LIMITS.repos, `at most ${n(LIMITS.repos)} repositories`)
        .optional(),
    })
    .strict(),
  rotate: z.object({}).strict(),
  claim: z.object({}).strict(),
  heartbeat: z
    .object({
      leaseEpoch: epoch,
      usage: usage.optional(),
      /** What changed since the last heartbeat; unchanged progress for limits.stallSeconds stops the lease. */
      progress: z
        .object({
          headSha: sha.optional(),
          worktree: text(LIMITS.progressField).optional(),
          step: text(LIMITS.progressField).optional(),
          /** The worktree has uncommitted changes: a lease that ends without an exit is never debris-empty. */
          dirty: z.boolean().optional(),
          /** Local commits ahead of the base, pushed or not. */
          ahead: z.number().int().min(0).max(1_000_000, "at most 1,000,000").optional(),
        })
        .strict()
        .optional(),
      /** Hand a fresh GitHub token now (`credentials: broker`), not only when the current one is about to expire. */
      renewCredentials: z.boolean().optional(),
    })
    .strict(),
  receipt: z.object({ leaseEpoch: epoch }).strict(),
  /** Giving a run back before its agent started: why (shown to operators, counted against the worker). */
  release: z
    .object({
      leaseEpoch: epoch,
      reason: text(LIMITS.releaseReason).min(1, "must not be empty: say what failed (clone, disk, agent binary)"),
    })
    .strict(),
  resume: z.object({}).strict(),
  exit: z
    .object({
      leaseEpoch: epoch,
      exitCode: z.number().int(),
      branch: text(LIMITS.branch).min(1, "must not be empty").optional(),
      headSha: sha.optional(),
      /** The pull request the worker opened or found for the branch: a hint, checked against GitHub's word. */
      prNumber: z.number().int().positive().optional(),
      testsPassed: z.boolean().optional(),
      dirty: z.boolean().optional(),
      turnCapHit: z.boolean().optional(),
      handoff: z.boolean().optional(),
      lastToolCalls: z
        .array(text(LIMITS.toolCall))
        .max(LIMITS.lastToolCalls, `at most ${LIMITS.lastToolCalls} items (send the last ones)`)
        .optional(),
      question: text(LIMITS.question).optional(),
      /** The run died of a run-level infrastructure failure, not the agent's doing. */
      infra: z.enum(INFRA_DEATHS).optional(),
      usage: usage.optional(),
      sessionRef: text(LIMITS.sessionRef).optional(),
      harness: text(LIMITS.label).optional(),
      model: text(LIMITS.label).optional(),
    })
    .strict(),
  decisionRequest: z
    .object({
      leaseEpoch: epoch,
      question: text(LIMITS.question).min(1, "must not be empty"),
      kind: z
        .string()
        .regex(
          /^(question|verify:[A-Za-z0-9][A-Za-z0-9._-]{0,63})$/,
          "must be question or verify:<phase-id> (a phase id of at most 64 characters)",
        )
        .optional(),
      blocks: z.enum(["run", "nothing"]).optional(),
      condition: text(LIMITS.condition)
        .refine(
          (c) => parseCondition(c) !== null,
          "must be pr-merged:<owner/repo#n or pull request URL>, issue-closed:<n> or npm-version:<package@range>",
        )
        .optional(),
    })
    .strict(),
};

export interface WorkerApiDeps {
  queries: Pick<ApiQueries, "liveRunsOf" | "workerRow">;
  adminToken: string;
  workers: Workers;
  tokens: WorkerTokens;
  idempotency: Idempotency;
  claims: Claims;
  leases: Leases;
  exits: Exits;
  /** Fresh GitHub tokens in heartbeat answers (credentials/broker.ts); unset: none. */
  credentials?: Pick<Broker, "forHeartbeat">;
  releases: Releases;
  pauses: WorkerPauses;
  /** Told of each claim refused because this replica has CLAIM_ADMISSION's running and waiting (a metric). */
  onClaimShed?: () => void;
}
