/** When the reconcile runs: from the sweep loop, at most once an interval. */
import type { ReconcileCounts, Reconciler } from "./drift.js";

/** Runs the reconcile from the sweep loop at most every `everyMs` (default 5 minutes). */
export class ReconcileSchedule {
  #last: number;
  /** The first run comes one interval after start-up (missed deliveries are recovered at once by their own sweep). */
  constructor(
    readonly reconciler: Pick<Reconciler, "run">,
    readonly clock: { now(): Date },
    readonly everyMs = 5 * 60_000,
  ) {
    this.#last = clock.now().getTime();
  }

  async sweep(held: ReadonlySet<number>): Promise<ReconcileCounts | null> {
    const now = this.clock.now().getTime();
    if (now - this.#last < this.everyMs) return null;
    this.#last = now;
    return this.reconciler.run(held);
  }
}
