/**
 * The audit log of ignored input: a comment, review or label from someone
 * without the trusted permission, a bot that is not allowlisted, Orchestra's
 * own commands. Untrusted input has no effect; this is where it shows, with
 * who, what, where and why, and a count per repository.
 */
import type { HumanQueries } from "./queries.js";

export interface Ignored {
  installationId: number | null;
  repo: string;
  actor: string;
  /** What it was, short: "comment 123: orchestra retry". */
  input: string;
  why: string;
}

export class Audit {
  constructor(readonly deps: { queries: Pick<HumanQueries, "recordIgnored" | "ignored">; clock: { now(): Date } }) {}

  async ignored(x: Ignored): Promise<void> {
    await this.deps.queries.recordIgnored({
      at: this.deps.clock.now(),
      installationId: x.installationId,
      repo: x.repo,
      actor: x.actor,
      input: x.input.slice(0, 300),
      why: x.why.slice(0, 500),
    });
  }

  async list(opts: { repo?: string; limit: number }): Promise<{
    ignored: Array<{ at: string; repo: string; actor: string; input: string; why: string }>;
    counts: Record<string, number>;
  }> {
    const { rows, counts } = await this.deps.queries.ignored(opts.repo, opts.limit);
    return {
      ignored: rows.map((r) => ({ at: r.at.toISOString(), repo: r.repo, actor: r.actor, input: r.input, why: r.why })),
      counts: Object.fromEntries(counts.map((c) => [c.repo, c._count._all])),
    };
  }
}
