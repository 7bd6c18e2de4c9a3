/**
 * The audit log of ignored input: a comment, review or label from someone
 * without the trusted permission, a bot that is not allowlisted, Orchestra's
 * own commands. Untrusted input has no effect; this is where it shows, with
 * who, what, where and why, and a count per repository.
 */
import type { Db } from "../store/db.js";

export interface Ignored {
  installationId: number | null;
  repo: string;
  actor: string;
  /** What it was, short: "comment 123: orchestra retry". */
  input: string;
  why: string;
}

export class Audit {
  constructor(readonly deps: { db: Db; clock: { now(): Date } }) {}

  async ignored(x: Ignored): Promise<void> {
    await this.deps.db.auditEntry.create({
      data: {
        at: this.deps.clock.now(),
        installationId: x.installationId,
        repo: x.repo,
        actor: x.actor,
        input: x.input.slice(0, 300),
        why: x.why.slice(0, 500),
      },
    });
  }

  async list(opts: { repo?: string; limit: number }): Promise<{
    ignored: Array<{ at: string; repo: string; actor: string; input: string; why: string }>;
    counts: Record<string, number>;
  }> {
    const { db } = this.deps;
    const [rows, counts] = await Promise.all([
      db.auditEntry.findMany({
        where: opts.repo ? { repo: opts.repo } : {},
        orderBy: { seq: "desc" },
        take: opts.limit,
      }),
      db.auditEntry.groupBy({ by: ["repo"], _count: { _all: true } }),
    ]);
    return {
      ignored: rows.map((r) => ({ at: r.at.toISOString(), repo: r.repo, actor: r.actor, input: r.input, why: r.why })),
      counts: Object.fromEntries(counts.map((c) => [c.repo, c._count._all])),
    };
  }
}
