/**
 * `.github/orchestra.yml`: per-repository configuration, with the org's
 * `.github` repository as defaults (through Probot's config loader). Parsed
 * once at the edge with zod; inside, code receives `RepoConfig`.
 */
import { z } from "zod";

const label = z.string().min(1).max(50);
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
      .default({ queued: "agent:queued", inProgress: "agent:in-progress", review: "agent:review", blocked: "agent:blocked", failed: "agent:failed" }),
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
        leaseSeconds: z.number().int().min(30).max(86400).default(1800),
        rerunBudget: z.number().int().min(0).max(20).default(2),
        /** Model spend (USD, as the runs report it) after which the task escalates instead of re-queueing; null: no budget. */
        maxCostUsd: z.number().min(0).nullable().default(null),
      })
      .strict()
      .default({ maxAttempts: 3, maxConcurrentPerRepo: 5, maxConcurrentPerOrg: 20, leaseSeconds: 1800, rerunBudget: 2, maxCostUsd: null }),
    /** Agent branches are `<branchPrefix>issue-<number>`. */
    branchPrefix: z.string().min(1).max(100).regex(/^[A-Za-z0-9._/-]+$/, "letters, digits, . _ / - only").default("agent/"),
    /** Earlier wins; unlabelled issues come after all of these, oldest queued first. */
    priorityLabels: z.array(label).default([]),
    /** Dispatch mode: claim on queue and run this workflow instead of waiting for a worker. */
    dispatch: z
      .object({ workflow: z.string().min(1), ref: z.string().min(1).default("main") })
      .strict()
      .nullable()
      .default(null),
    /** Record what Orchestra would change on GitHub (per task, in the operator API) and change nothing. */
    dryRun: z.boolean().default(false),
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
