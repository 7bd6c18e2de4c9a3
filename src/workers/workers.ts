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

export class Workers {
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

  byToken(token: string): Promise<Worker | null> {
    return this.db.worker.findUnique({ where: { tokenHash: hashToken(token) } });
  }

  /** The repositories a worker may claim from; null: all. */
  reposOf(worker: Worker): string[] | null {
    return worker.repos ? (JSON.parse(worker.repos) as string[]) : null;
  }

  async seen(worker: Worker): Promise<void> {
    await this.db.worker.update({ where: { id: worker.id }, data: { lastSeenAt: this.clock.now() } });
  }
}

export type { Worker };
