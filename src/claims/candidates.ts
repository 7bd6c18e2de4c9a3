/**
 * The claim query: which queued tasks may be claimed now, best first. The
 * query itself leaves out what no claim could take — repositories at their
 * limits, paused (by configuration or an operator), with an invalid
 * configuration, in the other mode (worker or dispatch), behind an open
 * breaker or waiting on its probe; tasks backing off, blocked by open issues,
 * or whose blockers have not been read — so a repository at its limit never
 * hides another's tasks; so is a repository the App cannot reach for now
 * (its installation suspended, the repository removed from it). Within an
 * installation: priority label, then oldest queued. Between installations:
 * the one with the fewest live leases goes first, so one organisation's
 * backlog never starves another's.
 */
import type { Database } from "../store/db.js";
import type { Task } from "../store/generated/sqlite/client.js";
import { select } from "../store/sql.js";
import { taskFromSql } from "../apply/views.js";
import { EVERYWHERE } from "../gates/repos.js";

export interface CandidateQuery {
  mode: "worker" | "dispatch";
  now: Date;
  /** The worker's repositories; null: all. */
  repos: string[] | null;
  /** Tasks not to return (already tried by this claim, or being claimed here). */
  skip: string[];
  limit: number;
}

const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

/** Live leases now per installation (for the order installations take turns in). */
export async function liveByInstallation(database: Pick<Database, "raw" | "provider">): Promise<Map<number, number>> {
  const rows = await select(
    database,
    `SELECT "installationId", COUNT(*) AS "n" FROM "Task" WHERE "state" = 'claimed' GROUP BY "installationId"`,
  );
  return new Map(rows.map((r) => [Number(r["installationId"]), Number(r["n"])]));
}

/** The installations with queued work, the one with the fewest live leases first (ties in random order). */
export async function installationsInTurn(
  database: Pick<Database, "raw" | "provider">,
  live: Map<number, number>,
): Promise<number[]> {
  // From the repositories (a few rows), each asked whether it has queued work (one index probe each).
  const rows = await select(
    database,
    `SELECT i."installationId" FROM (SELECT DISTINCT "installationId" FROM "Repo") i WHERE EXISTS ` +
      `(SELECT 1 FROM "Task" t WHERE t."state" = 'queued' AND t."installationId" = i."installationId")`,
  );
  const ids = rows.map((r) => Number(r["installationId"]));
  const tie = new Map(ids.map((id) => [id, Math.random()]));
  return ids.sort((a, b) => (live.get(a) ?? 0) - (live.get(b) ?? 0) || tie.get(a)! - tie.get(b)!);
}

/** The candidate query's SQL and arguments (the benchmark explains the very query the claims run). */
export function candidateSql(
  provider: Database["provider"],
  installationId: number,
  q: CandidateQuery,
): { sql: string; args: unknown[] } {
  // The repositories with room whose gates are open, computed once per query
  // (a small set); the walk over queued tasks then tests membership from the
  // index alone, so a repository full of queued work costs an index entry per
  // task, not a join.
  const open = [
    `r."installationId" = ?`,
    `r."configProblems" IS NULL`,
    `r."access" IS NULL`,
    `NOT r."paused"`,
    q.mode === "dispatch" ? `r."dispatch"` : `NOT r."dispatch"`,
    `(r."breakerUntil" IS NULL OR (r."breakerUntil" <= ? AND r."probeRunId" IS NULL))`,
    `NOT EXISTS (SELECT 1 FROM "Pause" p WHERE p."scope" = r."id" OR p."scope" = ?)`,
    `COALESCE(lr."n", 0) < r."maxPerRepo"`,
    `COALESCE(lo."n", 0) < r."maxPerOrg"`,
  ];
  const openRepos =
    `SELECT r."id" FROM "Repo" r LEFT JOIN lr ON lr."repo" = r."id" ` +
    `LEFT JOIN lo ON lo."owner" = r."owner" WHERE ${open.join(" AND ")}`;
  const where = [
    `t."state" = 'queued'`,
    `t."installationId" = ?`,
    // PostgreSQL estimates the open set at one row and would then read every
    // queued task of every open repository and sort them (35 ms at 10,000
    // queued); as an array computed once it walks the queue's index in order
    // and stops at the limit (1 ms). SQLite walks the index for IN already.
    provider === "postgresql" ? `t."repo" = ANY(ARRAY(${openRepos}))` : `t."repo" IN (${openRepos})`,
    `t."blockedBy" IS NULL`,
    `t."blockersAt" IS NOT NULL`,
    `(t."backoffUntil" IS NULL OR t."backoffUntil" <= ?)`,
  ];
  const args: unknown[] = [installationId, installationId, q.now, EVERYWHERE, q.now];
  if (q.repos) {
    where.push(`t."repo" IN (${marks(q.repos.length)})`);
    args.push(...q.repos);
  }
  if (q.skip.length) {
    where.push(`t."id" NOT IN (${marks(q.skip.length)})`);
    args.push(...q.skip);
  }
  const sql = [
    `WITH lr AS (SELECT "repo", COUNT(*) AS "n" FROM "Task" WHERE "state" = 'claimed' GROUP BY "repo"),`,
    `lo AS (SELECT r2."owner", COUNT(*) AS "n" FROM "Task" c JOIN "Repo" r2 ON r2."id" = c."repo" ` +
      `WHERE c."state" = 'claimed' GROUP BY r2."owner")`,
    `SELECT t.* FROM "Task" t WHERE ${where.join(" AND ")}`,
    `ORDER BY t."priority", t."queuedAt" LIMIT ${Math.max(1, Math.floor(q.limit))}`,
  ].join(" ");
  return { sql, args };
}

/**
 * One installation's claimable tasks, best first. The live-lease limits are
 * counted in the query (the claim's transaction checks them again, exactly).
 */
export async function candidates(
  database: Pick<Database, "raw" | "provider">,
  installationId: number,
  q: CandidateQuery,
): Promise<Task[]> {
  if (q.repos && q.repos.length === 0) return [];
  const { sql, args } = candidateSql(database.provider, installationId, q);
  const rows = await select(database, sql, args);
  return rows.map(taskFromSql);
}
