/**
 * GitHub calls per hour, kept in the database so the dashboard's chart
 * survives restarts and adds up the calls of every replica. Calls are
 * tallied in memory and written at most every `flushMs` (and before the
 * chart is read), as counters named `github.calls.<hour>.<read|write>`; a
 * crash loses at most that interval's tally. Hours older than `keepHours`
 * are deleted at the first write of each hour.
 */
import type { Database } from "../store/db.js";
import { atomically } from "../store/sql.js";
import { counterStep } from "../ignored/counters.js";
import type { MetricsQueries } from "./queries.js";

export const CALLS_PREFIX = "github.calls.";

/** `2026-12-01T08` of a time (UTC): the hour a call is counted in. */
export const hourKey = (at: Date): string => at.toISOString().slice(0, 13);

export interface CallHour {
  /** Start of the hour. */
  hour: Date;
  reads: number;
  writes: number;
}

export class CallHours {
  readonly #pending = new Map<string, { read: number; write: number }>();
  #lastFlush = 0;
  #flushing: Promise<void> | null = null;
  #prunedHour = "";

  constructor(
    readonly deps: {
      database: Pick<Database, "raw" | "provider">;
      queries: Pick<MetricsQueries, "deleteCallCountersBefore" | "callCountersFrom">;
      clock: { now(): Date };
      onError?: (err: unknown) => void;
    },
    readonly opts: { flushMs: number; keepHours: number } = { flushMs: 10_000, keepHours: 8 * 24 },
  ) {}

  count(kind: "read" | "write"): void {
    const now = this.deps.clock.now();
    const key = hourKey(now);
    const tally = this.#pending.get(key) ?? { read: 0, write: 0 };
    tally[kind]++;
    this.#pending.set(key, tally);
    if (now.getTime() - this.#lastFlush >= this.opts.flushMs)
      void this.flush().catch((err: unknown) => this.deps.onError?.(err));
  }

  /** Writes what was tallied since the last write (one at a time; a failed write keeps its tally for the next). */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing.catch(() => undefined);
    if (this.#pending.size === 0) return;
    const now = this.deps.clock.now();
    this.#lastFlush = now.getTime();
    const batch = [...this.#pending.entries()];
    this.#pending.clear();
    const steps = batch.flatMap(([hour, t]) => [
      ...(t.read ? [counterStep(`${CALLS_PREFIX}${hour}.read`, now, t.read)] : []),
      ...(t.write ? [counterStep(`${CALLS_PREFIX}${hour}.write`, now, t.write)] : []),
    ]);
    this.#flushing = (async () => {
      try {
        await atomically(this.deps.database, steps);
      } catch (err) {
        for (const [hour, t] of batch) {
          const tally = this.#pending.get(hour) ?? { read: 0, write: 0 };
          this.#pending.set(hour, { read: tally.read + t.read, write: tally.write + t.write });
        }
        throw err;
      }
      const hour = hourKey(now);
      if (this.#prunedHour !== hour) {
        this.#prunedHour = hour;
        const oldest = hourKey(new Date(now.getTime() - this.opts.keepHours * 3_600_000));
        // Names sort by their hour: every one before `oldest` is older.
        await this.deps.queries.deleteCallCountersBefore(CALLS_PREFIX, `${CALLS_PREFIX}${oldest}`);
      }
    })();
    try {
      await this.#flushing;
    } finally {
      this.#flushing = null;
    }
  }

  /** Calls per hour for the `hours` hours up to now (oldest first; hours without calls are zero). */
  async lastHours(hours: number): Promise<CallHour[]> {
    await this.flush();
    const now = this.deps.clock.now();
    const top = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
    const first = `${CALLS_PREFIX}${hourKey(new Date(top - (hours - 1) * 3_600_000))}`;
    const rows = await this.deps.queries.callCountersFrom(CALLS_PREFIX, first);
    const byName = new Map(rows.map((r) => [r.name, r.value]));
    return Array.from({ length: hours }, (_, i) => {
      const hour = new Date(top - (hours - 1 - i) * 3_600_000);
      const key = hourKey(hour);
      return {
        hour,
        reads: byName.get(`${CALLS_PREFIX}${key}.read`) ?? 0,
        writes: byName.get(`${CALLS_PREFIX}${key}.write`) ?? 0,
      };
    });
  }
}
