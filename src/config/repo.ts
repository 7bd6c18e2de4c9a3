/**
 * `.github/orchestra.yml`: per-repository configuration, with the org's
 * `.github` repository as defaults (through Probot's config loader). Parsed
 * once at the edge with zod; inside, code receives `RepoConfig`.
 */
import { z } from "zod";
import { repositoryPattern } from "../outcomes/repository-patterns.js";

const label = z.string().min(1).max(50);

const LIMITS = {
  maxAttempts: 3,
  maxConcurrentPerRepo: 5,
  maxConcurrentPerOrg: 20,
  leaseSeconds: 300,
  stallSeconds: 1800,
  graceSeconds: 120,
  rerunBudget: 2,
  infraRequeues: 3,
  maxCostUsd: null,
  maxRunSeconds: 21600,
};
const BREAKER = { failures: 5, windowSeconds: 600, coolDownSeconds: 600 };

/** A regular expression that RE2 compiles (the classifier runs repository patterns in linear time). */
const pattern = z.string().min(1).max(500).pipe(repositoryPattern);
const permission = z.enum(["read", "triage", "write", "maintain", "admin"]);

export const repoConfigSchema = z
  .object({
    /** The agent:* state labels. */
    labels: z
      .object({
        queued: label.default("agent:queued"),
        inProgress: label.default("agent:in-progress"),
        review: label.default("agent:review"),
        blocked: label.default("agent:blocked"),
        failed: label.default("agent:failed"),
      })
      .strict()
      .default({
        queued: "agent:queued",
        inProgress: "agent:in-progress",
        review: "agent:review",
        blocked: "agent:blocked",
        failed: "agent:failed",
      }),
    /** Who counts as a trusted human: at least this permission, or listed. */
    trust: z
      .object({
        minPermission: permission.default("write"),
        users: z.array(z.string().min(1)).default([]),
        bots: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ minPermission: "write", users: [], bots: [] }),
    limits: z
      .object({
        maxAttempts: z.number().int().min(1).max(50).default(3),
        maxConcurrentPerRepo: z.number().int().min(1).max(1000).default(5),
        maxConcurrentPerOrg: z.number().int().min(1).max(10000).default(20),
        /** A worker's lease; heartbeats renew it (send one every third of it). */
        leaseSeconds: z.number().int().min(30).max(3600).default(300),
        /** A run whose heartbeats report no progress for this long stops renewing (409 stalled). */
        stallSeconds: z.number().int().min(60).max(86400).default(1800),
        /** How long an expired lease waits for a late exit before it is classified. */
        graceSeconds: z.number().int().min(0).max(3600).default(120),
        rerunBudget: z.number().int().min(0).max(20).default(2),
        /** Runs that died of run-level infrastructure failures re-queued per task without using up an attempt. */
        infraRequeues: z.number().int().min(0).max(20).default(3),
        /**
         * Model spend (USD, as the runs report it) after which the
         * task escalates instead of re-queueing; null: no budget.
         */
        maxCostUsd: z.number().min(0).nullable().default(null),
        /**
         * A worker's run's wall-clock cap: past it the lease stops renewing (409 over-time) and ends at its expiry,
         * time for the worker to push its work as a handoff and report.
         */
        maxRunSeconds: z.number().int().min(60).max(604800).default(21600),
      })
      .strict()
      .default(LIMITS),
    /** Runs in this repository ending in the same failure class this often stop claims here for a cool-down. */
    breaker: z
      .object({
        failures: z.number().int().min(2).max(1000).default(5),
        windowSeconds: z.number().int().min(60).max(86400).default(600),
        coolDownSeconds: z.number().int().min(30).max(86400).default(600),
      })
      .strict()
      .default(BREAKER),
    /** Agent branches are `<branchPrefix>issue-<number>`. */
    branchPrefix: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9._/-]+$/, "letters, digits, . _ / - only")
      .default("agent/"),
    /** Earlier wins; unlabelled issues come after all of these, oldest queued first. */
    priorityLabels: z.array(label).default([]),
    /** Dispatch mode: claim on queue and run this workflow instead of waiting for a worker. */
    dispatch: z
      .object({
        workflow: z.string().min(1),
        ref: z.string().min(1).default("main"),
        /**
         * Workflow runs renew their lease only at job boundaries: theirs is long (GitHub stops a job after 6 hours).
         */
        leaseSeconds: z.number().int().min(60).max(86400).default(21600),
      })
      .strict()
      .nullable()
      .default(null),
    /** Record what Orchestra would change on GitHub (per task, in the operator API) and change nothing. */
    dryRun: z.boolean().default(false),
    /** Claim and dispatch nothing here; classification, labels and decisions go on. */
    paused: z.boolean().default(false),
    /** Which pull requests that fell behind their base get GitHub's update-branch. */
    updateBranch: z.enum(["ready", "always", "never"]).default("ready"),
    /** Extra regular expressions (case-insensitive, RE2 syntax) that mark a check failure as infrastructure. */
    infraPatterns: z.array(pattern).max(100).default([]),
    /** Keep one "Orchestra fleet" issue current in this repository. */
    fleetIssue: z.boolean().default(false),
    /**
     * broker: a worker's claim carries a GitHub installation token scoped to
     * this repository (contents and pull requests write, issues read),
     * renewed in heartbeats and revoked when the lease ends; none: workers
     * bring their own.
     */
    credentials: z.enum(["broker", "none"]).default("broker"),
  })
  .strict();

export type RepoConfig = z.output<typeof repoConfigSchema>;

export const DEFAULT_CONFIG: RepoConfig = repoConfigSchema.parse({});

export type ConfigResult = { ok: true; config: RepoConfig } | { ok: false; problems: string[] };

/** Parses a loaded YAML document (null: no file anywhere → defaults). */
export function parseRepoConfig(doc: unknown): ConfigResult {
  if (doc === null || doc === undefined) return { ok: true, config: DEFAULT_CONFIG };
  const r = repoConfigSchema.safeParse(doc);
  if (r.success) return { ok: true, config: r.data };
  return {
    ok: false,
    problems: r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(top level)"}: ${i.message}`),
  };
}

export function branchFor(c: RepoConfig, issue: number): string {
  return `${c.branchPrefix}issue-${issue}`;
}

/** Priority of an issue from its labels: index of the first matching priority label. */
export function priorityOf(c: RepoConfig, labels: readonly string[]): number {
  const i = c.priorityLabels.findIndex((p) => labels.includes(p));
  return i === -1 ? 1000 : i;
}
