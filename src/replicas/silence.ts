/**
 * Which replicas stopped beating, as one observer sees it. A replica is
 * silent when the beat in its row has not moved for `silentMs` of the
 * observer's own watching: the observer compares a beat with the one it read
 * before, never with its own clock, so clocks that differ between machines
 * do not make a live replica look dead. An observer that itself missed its
 * turns (a database that did not answer, an event loop that stalled) starts
 * watching afresh: everyone's beats stopped with its own, and nobody is
 * judged on a gap it did not see.
 */

export interface Beat {
  id: string;
  beatAt: Date;
}

export interface SilenceOptions {
  /** How long a beat must stay unchanged under watch before its replica counts as stopped. */
  silentMs: number;
  /** Two looks further apart than this are not one watch: everything seen before is forgotten. */
  gapMs: number;
}

export class Silence {
  #seen = new Map<string, { beatAt: number; since: number }>();
  #last: number | undefined;

  constructor(readonly o: SilenceOptions) {}

  /** One look at every other replica's beat at `now`: the ids of those whose beat stood still for `silentMs`. */
  observe(beats: readonly Beat[], now: Date): string[] {
    const t = now.getTime();
    if (this.#last === undefined || t < this.#last || t - this.#last > this.o.gapMs) this.#seen.clear();
    this.#last = t;
    const next = new Map<string, { beatAt: number; since: number }>();
    const silent: string[] = [];
    for (const b of beats) {
      const at = b.beatAt.getTime();
      const before = this.#seen.get(b.id);
      const entry = before && before.beatAt === at ? before : { beatAt: at, since: t };
      next.set(b.id, entry);
      if (t - entry.since >= this.o.silentMs) silent.push(b.id);
    }
    this.#seen = next;
    return silent;
  }

  /** A missed look (the beat could not be read or written): the next look starts a new watch. */
  missed(): void {
    this.#last = undefined;
  }
}
