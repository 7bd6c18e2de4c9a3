/**
 * Concurrency limits on live leases, per repository and per organization.
 * Checked before a claim (cheaply, to skip hopeless candidates) and again
 * inside the claim's transaction, where it is exact: SQLite runs one
 * transaction at a time, and on PostgreSQL the claim first takes a
 * transaction-scoped advisory lock on the organization, so two replicas
 * never both fill the last slot.
 */
import type { Database, Db } from "../store/db.js";
import type { RepoConfig } from "../config/repo.js";

const ownerOf = (repo: string) => repo.split("/")[0]!;

async function counts(db: Db, repo: string): Promise<{ inRepo: number; inOrg: number }> {
  const [inRepo, inOrg] = await Promise.all([
    db.task.count({ where: { state: "claimed", repo } }),
    db.task.count({ where: { state: "claimed", repo: { startsWith: `${ownerOf(repo)}/` } } }),
  ]);
  return { inRepo, inOrg };
}

/** Room for one more live lease? (Outside a transaction: a hint, not a promise.) */
export async function roomFor(db: Db, repo: string, config: RepoConfig): Promise<boolean> {
  const c = await counts(db, repo);
  return c.inRepo < config.limits.maxConcurrentPerRepo && c.inOrg < config.limits.maxConcurrentPerOrg;
}

/**
 * Inside the claim's transaction, after the task row became claimed: a
 * reason when the claim took the repository or organization over its limit
 * (the transaction then rolls back), else null.
 */
export function overLimit(provider: Database["provider"], repo: string, config: RepoConfig) {
  return async (tx: Db): Promise<string | null> => {
    if (provider === "postgresql") {
      await tx.$queryRawUnsafe(`SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext($1))) AS locked`, `orchestra:limits:${ownerOf(repo).toLowerCase()}`);
    }
    const c = await counts(tx, repo);
    if (c.inRepo > config.limits.maxConcurrentPerRepo) return `${repo} is at its limit of ${config.limits.maxConcurrentPerRepo} live leases`;
    if (c.inOrg > config.limits.maxConcurrentPerOrg) return `${ownerOf(repo)} is at its limit of ${config.limits.maxConcurrentPerOrg} live leases`;
    return null;
  };
}
