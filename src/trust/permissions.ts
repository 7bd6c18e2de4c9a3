/**
 * Collaborator permissions from GitHub, cached briefly: one API call per
 * person and repository per minute at most. A failed lookup is not cached and
 * is never read as "no permission" — an error is not distrust.
 */
import { repoRef, type GitHub, type Permission } from "../github/port.js";

export class PermissionCache {
  readonly #entries = new Map<string, { at: number; value: Promise<Permission> }>();
  constructor(readonly ttlMs = 60_000) {}

  of(github: Pick<GitHub, "permission">, repo: string, login: string, now = Date.now()): Promise<Permission> {
    const key = `${repo.toLowerCase()}:${login.toLowerCase()}`;
    const hit = this.#entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = github.permission(repoRef(repo), login);
    value.catch(() => this.#entries.delete(key));
    this.#entries.set(key, { at: now, value });
    return value;
  }
}
