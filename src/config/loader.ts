/**
 * Loads and caches each repository's parsed configuration. A config that does
 * not parse pauses the repository: `get` answers the problems, and callers
 * report them on GitHub instead of acting.
 */
import { repoRef, type GitHubFor } from "../github/port.js";
import { parseRepoConfig, type ConfigResult } from "./repo.js";

export const CONFIG_PATH = ".github/orchestra.yml";

export class ConfigLoader {
  readonly #cache = new Map<string, { at: number; value: Promise<ConfigResult> }>();
  constructor(
    readonly githubFor: GitHubFor,
    readonly ttlMs = 60_000,
  ) {}

  get(installationId: number, repo: string, now = Date.now()): Promise<ConfigResult> {
    const hit = this.#cache.get(repo);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = this.githubFor(installationId)
      .then((gh) => gh.readConfig(repoRef(repo), CONFIG_PATH))
      .then(parseRepoConfig);
    value.catch(() => this.#cache.delete(repo));
    this.#cache.set(repo, { at: now, value });
    return value;
  }

  /** A push changed the config: read it again next time. */
  invalidate(repo: string): void {
    this.#cache.delete(repo);
  }
}
