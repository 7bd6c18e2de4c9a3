/**
 * Whether this replica can serve: the database answers and every committed
 * migration is applied. Load balancers and probes ask often, and a flood of
 * `/ready` must not become a flood of queries, so one check serves every
 * caller for a few seconds (and callers arriving while it runs share it).
 * The list of committed migrations is read once, at start-up.
 */
import type { Database } from "../store/db.js";
import { migrationNames, pendingOf } from "../store/migrate.js";
import { scrub } from "../redact/redact.js";

/** How long one check answers for. */
export const READY_CACHE_MS = 5_000;

export type NotReady = "database unreachable" | "migrations not applied";

export interface ReadyCheck {
  ready: boolean;
  /** The generic reason anyone may see. */
  reason: NotReady | null;
  /** For the operator only: the database's error text, or the migrations not applied. */
  error: string | null;
  pending: string[];
  checkedAt: Date;
}

/** The pure part: what a probe's outcome means. */
export function judge(outcome: { pending: string[] } | { error: unknown }, checkedAt: Date): ReadyCheck {
  if ("error" in outcome) {
    const e = outcome.error;
    const text =
      (e instanceof Error ? e.message : String(e))
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean)
        .pop() ?? "unknown error";
    return { ready: false, reason: "database unreachable", error: scrub(text), pending: [], checkedAt };
  }
  if (outcome.pending.length > 0)
    return { ready: false, reason: "migrations not applied", error: null, pending: outcome.pending, checkedAt };
  return { ready: true, reason: null, error: null, pending: [], checkedAt };
}

export class Readiness {
  #last: ReadyCheck | null = null;
  #running: Promise<ReadyCheck> | null = null;

  constructor(
    private readonly probe: () => Promise<{ pending: string[] }>,
    private readonly clock: { now(): Date },
    private readonly cacheMs = READY_CACHE_MS,
  ) {}

  /** For a database: one query of the migrations table is both the ping and the migration check. */
  static of(database: Database, clock: { now(): Date }, cacheMs = READY_CACHE_MS): Readiness {
    const committed = migrationNames(database.provider);
    return new Readiness(async () => ({ pending: await pendingOf(database, committed) }), clock, cacheMs);
  }

  async check(): Promise<ReadyCheck> {
    const now = this.clock.now().getTime();
    if (this.#last && now - this.#last.checkedAt.getTime() < this.cacheMs && now >= this.#last.checkedAt.getTime())
      return this.#last;
    this.#running ??= this.probe()
      .then(
        (r) => judge(r, this.clock.now()),
        (error: unknown) => judge({ error }, this.clock.now()),
      )
      .then((c) => {
        this.#last = c;
        this.#running = null;
        return c;
      });
    return this.#running;
  }
}
