/**
 * What the claim query knows about each repository without asking GitHub:
 * the gates of its configuration (invalid, paused, dispatch mode, limits),
 * written whenever the configuration is read from GitHub, and the operator's
 * pauses (the whole service or one repository).
 */
import type { Db } from "../store/db.js";
import type { ConfigResult } from "../config/repo.js";
import type { Repo, Pause } from "../store/generated/sqlite/client.js";

/** The scope of a service-wide pause. */
export const EVERYWHERE = "*";

/** The configuration columns of a repository's row, from a parsed (or refused) configuration. */
export function gateColumns(
  cfg: ConfigResult,
): Pick<Repo, "configProblems" | "paused" | "dispatch" | "maxPerRepo" | "maxPerOrg"> {
  if (!cfg.ok)
    return {
      configProblems: JSON.stringify(cfg.problems),
      paused: false,
      dispatch: false,
      maxPerRepo: 0,
      maxPerOrg: 0,
    };
  const c = cfg.config;
  return {
    configProblems: null,
    paused: c.paused,
    dispatch: c.dispatch !== null,
    maxPerRepo: c.limits.maxConcurrentPerRepo,
    maxPerOrg: c.limits.maxConcurrentPerOrg,
  };
}

export class RepoGates {
  constructor(readonly deps: { db: Db; clock: { now(): Date } }) {}

  /** Called with every configuration read from GitHub: the row changes only when the gates do. */
  async record(installationId: number, repo: string, cfg: ConfigResult): Promise<void> {
    const { db, clock } = this.deps;
    const cols = gateColumns(cfg);
    const now = clock.now();
    const row = await db.repo.findUnique({ where: { id: repo } });
    if (
      row &&
      row.installationId === installationId &&
      (Object.keys(cols) as (keyof typeof cols)[]).every((k) => row[k] === cols[k])
    )
      return;
    await db.repo.upsert({
      where: { id: repo },
      create: { id: repo, installationId, owner: repo.split("/")[0]!, ...cols, configAt: now, updatedAt: now },
      update: { installationId, ...cols, configAt: now, updatedAt: now },
    });
  }

  /** A repository removed from the installation or renamed away: its gates are read again if it comes back. */
  async forget(repo: string): Promise<void> {
    await this.deps.db.repo.deleteMany({ where: { id: repo } });
  }

  async get(repo: string): Promise<Repo | null> {
    return this.deps.db.repo.findUnique({ where: { id: repo } });
  }

  async pause(scope: string, reason: string, by: string): Promise<Pause> {
    const at = this.deps.clock.now();
    return this.deps.db.pause.upsert({
      where: { scope },
      create: { scope, reason, by, at },
      update: { reason, by, at },
    });
  }

  /** True when there was a pause to lift. */
  async resume(scope: string): Promise<boolean> {
    const r = await this.deps.db.pause.deleteMany({ where: { scope } });
    return r.count > 0;
  }

  async pauses(): Promise<Pause[]> {
    return this.deps.db.pause.findMany({ orderBy: { scope: "asc" } });
  }
}
