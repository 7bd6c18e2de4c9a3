/**
 * Loads and caches each repository's parsed configuration. A config that does
 * not parse pauses the repository: `get` answers the problems, and callers
 * report them on GitHub instead of acting. When GitHub cannot be asked, the
 * last configuration read is used (a heartbeat must not fail because GitHub
 * is down); with none, the error propagates.
 */
import { repoRef, type GitHub, type GitHubFor } from "../github/port.js";
import { parseRepoConfig, type ConfigResult } from "./repo.js";

export const CONFIG_PATH = ".github/orchestra.yml";

interface Entry {
  at: number;
  value: Promise<ConfigResult>;
  /** The last answer that came from GitHub. */
  last?: ConfigResult;
}

export class ConfigLoader {
  readonly #cache = new Map<string, Entry>();
  constructor(
    readonly githubFor: (installationId: number) => Promise<Pick<GitHub, "readConfig">>,
    readonly ttlMs = 60_000,
    /**
     * Called with every configuration read from GitHub, before it
     * is answered (the claim query's gates are recorded from it).
     */
    readonly onRead?: (installationId: number, repo: string, result: ConfigResult) => Promise<void>,
  ) {}

  get(installationId: number, repo: string, now = Date.now()): Promise<ConfigResult> {
    const hit = this.#cache.get(repo);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const entry: Entry = { at: now, value: Promise.resolve(null as never), ...(hit?.last ? { last: hit.last } : {}) };
    entry.value = this.githubFor(installationId)
      .then((gh) => gh.readConfig(repoRef(repo), CONFIG_PATH))
      .then(parseRepoConfig)
      .then(async (result) => {
        await this.onRead?.(installationId, repo, result);
        return result;
      })
      .then(
        (result) => {
          entry.last = result;
          return result;
        },
        (err: unknown) => {
          if (entry.last) {
            // Keep answering the last known config; ask GitHub again soon.
            entry.at = now - this.ttlMs + Math.min(this.ttlMs, 5_000);
            return entry.last;
          }
          this.#cache.delete(repo);
          throw err;
        },
      );
    this.#cache.set(repo, entry);
    return entry.value;
  }

  /** A push changed the config: read it again next time. */
  invalidate(repo: string): void {
    const hit = this.#cache.get(repo);
    if (hit) hit.at = -Infinity;
  }
}

export type { GitHubFor };
