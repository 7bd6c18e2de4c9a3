/**
 * The gates a claim re-checks inside its own transaction, where the answer is
 * exact: the operator's pauses, the repository's row (an invalid or paused
 * configuration, an open breaker, a probe already taken) and the live-lease
 * limits per repository and per organization. SQLite runs one transaction at
 * a time; on PostgreSQL the claim takes a transaction-scoped advisory lock on
 * the organization before it counts, so two replicas never both fill the
 * last slot. A claim that fails a gate rolls back.
 */
import type { Database } from "../store/db.js";
import type { RepoConfig } from "../config/repo.js";
import { dateOf, type Step } from "../store/sql.js";
import { EVERYWHERE } from "../gates/repos.js";
import { textOf } from "../texts/value.js";

export const ownerOf = (repo: string) => repo.split("/")[0]!;

/**
 * Inside the claim's transaction, after the task row became claimed: the
 * statements that refuse it when a gate is closed (the transaction then
 * rolls back), and the one that makes this run the breaker's probe when the
 * cool-down has passed. On PostgreSQL the organization's lock is taken last,
 * so it is held for the count and the commit only: every claim in the
 * organization waits for it, and claims used to queue behind each other's
 * pause and repository reads. The probe needs no lock: its update waits on
 * the repository's row, and finds the probe taken once the first commits.
 */
export function gateSteps(
  provider: Database["provider"],
  repo: string,
  config: RepoConfig,
  runId: string,
  now: Date,
): Step[] {
  const owner = ownerOf(repo);
  // Told by the repository's read to the probe's update: this claim must be the probe.
  let probe = false;
  return [
    {
      sql:
        `SELECT (SELECT "reason" FROM "Pause" WHERE "scope" = ?) AS "pausedEverywhere", ` +
        `(SELECT "reason" FROM "Pause" WHERE "scope" = ?) AS "pausedHere", r."id", ` +
        `r."configProblems", r."paused", r."breakerClass", r."breakerUntil", r."probeRunId", r."access" ` +
        `FROM (SELECT 1 AS "one") AS x LEFT JOIN "Repo" r ON r."id" = ?`,
      args: [EVERYWHERE, repo, repo],
      check: (r) => {
        const row = r.rows[0] ?? {};
        if (row["pausedEverywhere"] != null)
          return `Orchestra is paused by an operator: ${textOf(row["pausedEverywhere"])}`;
        if (row["pausedHere"] != null) return `${repo} is paused by an operator: ${textOf(row["pausedHere"])}`;
        if (row["id"] == null) return null; // not recorded yet: the configuration just read is the judge
        if (row["access"] !== null) return `the App cannot reach ${repo} now (${textOf(row["access"])})`;
        if (row["configProblems"] !== null) return `${repo}'s .github/orchestra.yml is invalid`;
        if (row["paused"] === true || row["paused"] === 1)
          return `${repo} is paused (paused: true in .github/orchestra.yml)`;
        const until = dateOf(row["breakerUntil"]);
        if (until && until > now)
          return `${repo}'s breaker is open until ${until.toISOString()} (${String(row["breakerClass"])})`;
        if (until && row["probeRunId"] !== null)
          return `${repo}'s breaker waits on its probe run ${textOf(row["probeRunId"])}`;
        probe = until !== null;
        return null;
      },
    },
    // Past the cool-down, the first claim is the breaker's one probe; a claim that finds it taken meanwhile rolls back.
    {
      sql:
        `UPDATE "Repo" SET "probeRunId" = ? WHERE "id" = ? ` +
        `AND "breakerUntil" IS NOT NULL AND "breakerUntil" <= ? AND "probeRunId" IS NULL`,
      args: [runId, repo, now],
      check: (r) => (probe && r.changes !== 1 ? `${repo}'s breaker probe was just taken by another claim` : null),
    },
    ...(provider === "postgresql"
      ? [
          {
            sql: `SELECT 1 AS "locked" FROM (SELECT pg_advisory_xact_lock(hashtext(?))) AS l`,
            args: [`orchestra:limits:${owner.toLowerCase()}`],
          },
        ]
      : []),
    {
      sql:
        `SELECT COUNT(*) AS "inOrg", COALESCE(SUM(CASE WHEN "repo" = ? THEN 1 ELSE 0 END), 0) AS "inRepo" ` +
        `FROM "Task" WHERE "state" = 'claimed' AND substr("repo", 1, ?) = ?`,
      args: [repo, owner.length + 1, `${owner}/`],
      check: (r) => {
        const inRepo = Number(r.rows[0]?.["inRepo"] ?? 0);
        const inOrg = Number(r.rows[0]?.["inOrg"] ?? 0);
        if (inRepo > config.limits.maxConcurrentPerRepo)
          return `${repo} is at its limit of ${config.limits.maxConcurrentPerRepo} live leases`;
        if (inOrg > config.limits.maxConcurrentPerOrg)
          return `${owner} is at its limit of ${config.limits.maxConcurrentPerOrg} live leases`;
        return null;
      },
    },
  ];
}
