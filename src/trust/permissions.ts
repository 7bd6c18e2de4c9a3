/**
 * Collaborator permissions from GitHub, cached briefly: one API call per
 * person and repository per minute at most. A failed lookup is not cached and
 * is never read as "no permission" — an error is not distrust.
 *
 * The cache holds at most `max` entries: expired ones go first, then the
 * oldest, so a flood of distinct logins costs API calls, never memory.
 */
import { repoRef, type GitHub, type Permission } from "../github/port.js";

export class PermissionCache {
  /** In the order they were fetched: the first is the oldest, and the first to expire. */
  readonly #entries = new Map<string, { at: number; value: Promise<Permission> }>();
  constructor(
    readonly ttlMs = 60_000,
    readonly max = 10_000,
  ) {}

  /** Entries held now (expired ones included until they are evicted). */
  get size(): number {
    return this.#entries.size;
  }

  of(github: Pick<GitHub, "permission">, repo: string, login: string, now = Date.now()): Promise<Permission> {
    const key = `${repo.toLowerCase()}:${login.toLowerCase()}`;
    const hit = this.#entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    this.#entries.delete(key);
    this.#evict(now);
    const value = github.permission(repoRef(repo), login);
    value.catch(() => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
    });
    this.#entries.set(key, { at: now, value });
    return value;
  }

  /** Drops expired entries from the oldest end, then the oldest live ones until one more fits. */
  #evict(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (now - entry.at < this.ttlMs && this.#entries.size < this.max) return;
      this.#entries.delete(key);
    }
  }
}
