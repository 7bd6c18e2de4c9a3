/**
 * Workers: agent runtimes that claim tasks through the worker API. A token is
 * shown once (at registration or rotation) and stored only as its SHA-256
 * digest, with its last four characters as a hint to tell tokens apart.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Worker } from "../store/generated/sqlite/client.js";
import type { WorkersQueries } from "./queries.js";

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The last four characters of a token: enough to tell two apart in a listing, useless to an attacker. */
export function tokenHint(token: string): string {
  return token.slice(-4);
}

function newToken(): string {
  return `orw_${randomBytes(24).toString("hex")}`;
}

/**
 * How long a token's worker is remembered, and how often "last seen" is
 * written, per process. A revocation or rotation made in this process takes
 * effect at once (its entries are dropped); another replica notices within
 * TOKEN_CACHE_MS, except for claims, which read the worker afresh (`byToken(…, { fresh: true })`).
 */
const TOKEN_CACHE_MS = 10_000;
const SEEN_EVERY_MS = 30_000;

export class Workers {
  readonly #byHash = new Map<string, { worker: Worker; at: number }>();
  readonly #seenAt = new Map<string, number>();

  constructor(
    readonly queries: Pick<
      WorkersQueries,
      "createWorker" | "rotateToken" | "markRevoked" | "workerById" | "workerByTokenHash" | "markSeen"
    >,
    readonly clock: { now(): Date },
  ) {}

  async register(name: string, repos: string[] | undefined): Promise<{ id: string; token: string; tokenHint: string }> {
    const token = newToken();
    const id = randomUUID();
    await this.queries.createWorker({
      id,
      name,
      tokenHash: hashToken(token),
      tokenHint: tokenHint(token),
      repos: repos ?? null,
      createdAt: this.clock.now(),
    });
    return { id, token, tokenHint: tokenHint(token) };
  }

  /**
   * A new token for the worker; the old one stops working at once in this
   * process. Null: no such worker, or it was revoked (a revoked worker stays
   * revoked; register a new one).
   */
  async rotate(id: string): Promise<{ token: string; tokenHint: string; rotatedAt: Date } | null> {
    const token = newToken();
    const rotatedAt = this.clock.now();
    const count = await this.queries.rotateToken(id, {
      tokenHash: hashToken(token),
      tokenHint: tokenHint(token),
      rotatedAt,
    });
    this.forget(id);
    return count === 1 ? { token, tokenHint: tokenHint(token), rotatedAt } : null;
  }

  /** Marks the worker revoked (the first time counts); false when there is no such worker. */
  async revoke(id: string): Promise<Worker | null> {
    await this.queries.markRevoked(id, this.clock.now());
    this.forget(id);
    return this.queries.workerById(id);
  }

  /** Drops this process's cached entries of a worker, so a changed token or revocation counts at once. */
  forget(id: string): void {
    for (const [hash, hit] of this.#byHash) if (hit.worker.id === id) this.#byHash.delete(hash);
  }

  /**
   * The token's worker (revoked ones included: the caller says why it
   * refuses). A few seconds' cache spares every worker call a database read;
   * `fresh` reads the database anyway: a claim creates a lease, so it must not
   * ride on a token another replica revoked or rotated a few seconds ago.
   */
  async byToken(token: string, opts: { fresh?: boolean } = {}): Promise<Worker | null> {
    const hash = hashToken(token);
    const hit = this.#byHash.get(hash);
    if (!opts.fresh && hit && Date.now() - hit.at < TOKEN_CACHE_MS) return hit.worker;
    const worker = await this.queries.workerByTokenHash(hash);
    if (worker) this.#byHash.set(hash, { worker, at: Date.now() });
    else this.#byHash.delete(hash);
    return worker;
  }

  /** The repositories a worker may claim from; null: all. */
  reposOf(worker: Worker): string[] | null {
    return worker.repos ? (JSON.parse(worker.repos) as string[]) : null;
  }

  /** Records that the worker called in (at most every 30 s: it is for people, not for fencing). */
  async seen(worker: Worker): Promise<void> {
    const last = this.#seenAt.get(worker.id) ?? 0;
    if (Date.now() - last < SEEN_EVERY_MS) return;
    this.#seenAt.set(worker.id, Date.now());
    await this.queries.markSeen(worker.id, this.clock.now());
  }
}

export type { Worker };
