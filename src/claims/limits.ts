/**
 * Concurrency limits on live leases, per repository and per organization,
 * checked inside the claim's transaction, where it is exact: SQLite runs one
 * transaction at a time, and on PostgreSQL the claim takes a
 * transaction-scoped advisory lock on the organization first, so two
 * replicas never both fill the last slot. A claim over a limit rolls back.
 */
import type { Database } from "../store/db.js";
import type { RepoConfig } from "../config/repo.js";
import type { Step } from "../store/sql.js";

const ownerOf = (repo: string) => repo.split("/")[0]!;

/**
 * Inside the claim's transaction, after the task row became claimed: the
 * statements that refuse it when it took the repository or organization over
 * its limit (the transaction then rolls back).
 */
export function limitSteps(provider: Database["provider"], repo: string, config: RepoConfig): Step[] {
  const owner = ownerOf(repo);
  return [
    ...(provider === "postgresql" ? [{ sql: `SELECT 1 AS "locked" FROM (SELECT pg_advisory_xact_lock(hashtext(?))) AS l`, args: [`orchestra:limits:${owner.toLowerCase()}`] }] : []),
    {
      sql: `SELECT COUNT(*) AS "inOrg", COALESCE(SUM(CASE WHEN "repo" = ? THEN 1 ELSE 0 END), 0) AS "inRepo" FROM "Task" WHERE "state" = 'claimed' AND substr("repo", 1, ?) = ?`,
      args: [repo, owner.length + 1, `${owner}/`],
      check: (r) => {
        const inRepo = Number(r.rows[0]?.["inRepo"] ?? 0);
        const inOrg = Number(r.rows[0]?.["inOrg"] ?? 0);
        if (inRepo > config.limits.maxConcurrentPerRepo) return `${repo} is at its limit of ${config.limits.maxConcurrentPerRepo} live leases`;
        if (inOrg > config.limits.maxConcurrentPerOrg) return `${owner} is at its limit of ${config.limits.maxConcurrentPerOrg} live leases`;
        return null;
      },
    },
  ];
}
