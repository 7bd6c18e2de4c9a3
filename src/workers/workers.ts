/**
 * Workers: agent runtimes that claim tasks through the worker API. A token is
 * shown once at registration and stored only as its SHA-256 digest.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Db } from "../store/db.js";
import type { Worker } from "../store/generated/sqlite/client.js";

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** How long a token's worker is remembered, and how often "last seen" is written, per process. */
const TOKEN_CACHE_MS = 10_000;
const SEEN_EVERY_MS = 30_000;

export class Workers {
  readonly #byHash = new Map<string, { worker: Worker; at: number }>();
  readonly #seenAt = new Map<string, number>();

  constructor(
    readonly db: Db,
    readonly clock: { now(): Date },
  ) {}

  async register(name: string, repos: string[] | undefined): Promise<{ id: string; token: string }> {
    const token = `orw_${randomBytes(24).toString("hex")}`;
    const id = randomUUID();
    await this.db.worker.create({
      data: { id, name, tokenHash: hashToken(token), repos: repos ? JSON.stringify(repos) : null, createdAt: this.clock.now() },
    });
    return { id, token };
  }

  /** The token's worker; a few seconds' cache spares every worker call a database read. */
  async byToken(token: string): Promise<Worker | null> {
    const hash = hashToken(token);
    const hit = this.#byHash.get(hash);
    if (hit && Date.now() - hit.at < TOKEN_CACHE_MS) return hit.worker;
    const worker = await this.db.worker.findUnique({ where: { tokenHash: hash } });
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
    await this.db.worker.update({ where: { id: worker.id }, data: { lastSeenAt: this.clock.now() } });
  }
}

export type { Worker };
