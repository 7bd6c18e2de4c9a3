/**
 * The facts document: everything classification looks at, gathered from
 * GitHub and the run record (or read from JSON by `orchestra classify`).
 * Shape per the design contract; validated with zod at the edge.
 */
import { z } from "zod";
import { repositoryPattern } from "./repository-patterns.js";

/**
 * Run-level infrastructure deaths: the provider was unavailable, the runner
 * was lost, or the dispatched workflow was cancelled or never started. Runs
 * that end this way are re-queued without using up an attempt (within
 * limits.infraRequeues), and the breaker counts them.
 */
export const INFRA_DEATHS = [
  "provider-unavailable",
  "runner-lost",
  "workflow-cancelled",
  "workflow-startup-failure",
] as const;
export type InfraDeath = (typeof INFRA_DEATHS)[number];

const check = z
  .object({
    name: z.string(),
    headSha: z.string(),
    status: z.string(),
    conclusion: z.string().nullable(),
    output: z
      .object({ title: z.string().nullish(), summary: z.string().nullish(), text: z.string().nullish() })
      .partial()
      .optional(),
  })
  .strict();

export const factsSchema = z
  .object({
    trigger: z.enum(["exit", "lease-expired", "check-failed", "base-moved"]),
    run: z
      .object({
        exitCode: z.number().int().nullable(),
        dirty: z.boolean().optional(),
        testsPassed: z.boolean().optional(),
        turnCapHit: z.boolean().optional(),
        /** The worker stopped on purpose with work unfinished: pushed commits are resumed (C), never published (B). */
        handoff: z.boolean().optional(),
        question: z.string().optional(),
        lastToolCalls: z.array(z.string()).optional(),
        /** The run died of a run-level infrastructure failure: its attempt is not charged (within a budget). */
        infraDeath: z.enum(INFRA_DEATHS).optional(),
        /** The lease stopped renewing: heartbeats reported no progress since then. */
        stalled: z.object({ since: z.string(), lastProgress: z.string().optional() }).strict().optional(),
        /**
         * No exit: what the last heartbeat reported of the worktree. Dirty,
         * commits ahead or a head that is not the base's mean work exists
         * that GitHub may not show: never debris-empty.
         */
        lastProgress: z
          .object({
            headSha: z.string().nullish(),
            worktree: z.string().nullish(),
            step: z.string().nullish(),
            dirty: z.boolean().optional(),
            ahead: z.number().int().min(0).optional(),
          })
          .strict()
          .optional(),
      })
      .strict(),
    pr: z
      .object({
        number: z.number().int().positive(),
        state: z.enum(["open", "closed", "merged"]),
        headSha: z.string(),
        mergeable: z.enum(["MERGEABLE", "CONFLICTING", "UNKNOWN"]).optional(),
      })
      .strict()
      .nullable(),
    branch: z
      .object({ name: z.string(), aheadBy: z.number().int().min(0), headSha: z.string() })
      .strict()
      .nullable(),
    checks: z.array(check),
    /** The base branch's head, read when the last heartbeat named a head sha and GitHub shows nothing ahead. */
    baseSha: z.string().optional(),
    rerunsUsed: z.number().int().min(0).optional(),
    /** Every timed-out run on the head, reruns included (read when a timeout follows a rerun of the commit). */
    timedOut: z.array(z.object({ name: z.string(), checkRunId: z.number().int() }).strict()).optional(),
    rerunBudget: z.number().int().min(0).optional(),
    infraPatterns: z.array(repositoryPattern).optional(),
  })
  .strict();

export type Facts = z.infer<typeof factsSchema>;
export type CheckFact = z.infer<typeof check>;
