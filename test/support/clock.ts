/**
 * The rig's clock: what the App under test and the fake GitHub take as now.
 *
 * A test's outcome must not depend on the hour, the date or the time zone CI
 * happens to run in. So the clock does not start at the wall clock's time: it
 * starts at the next 12:00:00 UTC (a fixed time of day, far from any day
 * boundary, and never behind the real time, which parts outside the rig such
 * as Octokit's token cache still read), runs at the pace of the monotonic
 * clock from there, and only ever moves forward. A test that needs a later
 * time advances it; nothing can set it back (setting it back once made rows
 * stamped a moment earlier look like the future, and the inbox never came
 * due).
 */
import { performance } from "node:perf_hooks";

const DAY = 86_400_000;
const NOON = 12 * 3_600_000;

/** The first 12:00:00 UTC after `ms` (epoch milliseconds). */
export function nextNoonUtc(ms: number): number {
  const noon = Math.floor(ms / DAY) * DAY + NOON;
  return noon > ms ? noon : noon + DAY;
}

export class RigClock {
  readonly #start: number;
  readonly #t0 = performance.now();
  #advanced = 0;
  /** Set while the clock is held: the instant it stopped at, before advances. */
  #heldAt: number | null = null;

  constructor(start: number = nextNoonUtc(Date.now())) {
    this.#start = start;
  }

  now(): Date {
    return new Date((this.#heldAt ?? this.#running()) + this.#advanced);
  }

  #running(): number {
    return this.#start + (performance.now() - this.#t0);
  }

  /**
   * Stops the clock where it is: from now on only `advance` moves it. For a
   * test whose claim is "nothing changes within N seconds", which must not
   * turn false because the machine was busy for N seconds.
   */
  hold(): void {
    this.#heldAt ??= this.#running();
  }

  /** Moves the clock `ms` forward. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new Error(`the rig's clock only moves forward; asked to move it by ${ms} ms`);
    this.#advanced += ms;
  }

  /** Moves the clock forward to `at`; a moment already past leaves it where it is. */
  advanceTo(at: Date | number): void {
    const target = typeof at === "number" ? at : at.getTime();
    this.advance(Math.max(0, target - this.now().getTime()));
  }
}
