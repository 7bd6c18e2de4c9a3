/**
 * What the claim query knows about each repository without asking GitHub:
 * the gates of its configuration (invalid, paused, dispatch mode, limits),
 * written whenever the configuration is read from GitHub, and the operator's
 * pauses (the whole service or one repository).
 */
import type { ConfigResult } from "../config/repo.js";
import type { Repo, Pause } from "../store/generated/sqlite/client.js";
import type { GateColumns, GateQueries } from "./queries.js";

/** The scope of a service-wide pause. */
export const EVERYWHERE = "*";

/** The configuration columns of a repository's row, from a parsed (or refused) configuration. */
export function gateColumns(cfg: ConfigResult): GateColumns {
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
  constructor(
    readonly deps: {
      queries: Pick<GateQueries, "repo" | "recordGates" | "forgetRepo" | "setAccess" | "pause" | "resume" | "pauses">;
      clock: { now(): Date };
    },
  ) {}

  /** Called with every configuration read from GitHub: the row changes only when the gates do. */
  async record(installationId: number, repo: string, cfg: ConfigResult): Promise<void> {
    const { queries, clock } = this.deps;
    const cols = gateColumns(cfg);
    const now = clock.now();
    const row = await queries.repo(repo);
    if (
      row &&
      row.installationId === installationId &&
      (Object.keys(cols) as (keyof typeof cols)[]).every((k) => row[k] === cols[k])
    )
      return;
    await queries.recordGates(installationId, repo, cols, now);
  }

  /** A repository removed from the installation or renamed away: its gates are read again if it comes back. */
  async forget(repo: string): Promise<void> {
    await this.deps.queries.forgetRepo(repo);
  }

  /**
   * The App cannot reach an installation's repositories (suspended) or one repository (removed from it), or
   * can again (null): nothing is claimed or dispatched there meanwhile (`waitingFor: access`).
   */
  async access(
    where: { installationId: number; repo?: string },
    access: "suspended" | "removed" | null,
  ): Promise<void> {
    await this.deps.queries.setAccess(where, access, this.deps.clock.now());
  }

  async get(repo: string): Promise<Repo | null> {
    return this.deps.queries.repo(repo);
  }

  async pause(scope: string, reason: string, by: string): Promise<Pause> {
    const at = this.deps.clock.now();
    return this.deps.queries.pause(scope, reason, by, at);
  }

  /** True when there was a pause to lift. */
  async resume(scope: string): Promise<boolean> {
    return (await this.deps.queries.resume(scope)) > 0;
  }

  async pauses(): Promise<Pause[]> {
    return this.deps.queries.pauses();
  }
}
