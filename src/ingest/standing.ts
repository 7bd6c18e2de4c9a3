/**
 * Which installations Orchestra does not manage (uninstalled, suspended), as
 * ingest needs to know it: without a GitHub call and, for a managed
 * installation, without a database read per delivery. The list of unmanaged
 * installations is read at most once every `refreshMs` (deliveries arriving
 * meanwhile share the read); an installation on it is asked again, from the
 * database, before its delivery is ignored, so a list that is a few seconds
 * old never ignores work for an installation that came back. An installation
 * with one of its own events waiting (an unsuspend not processed yet) counts
 * as managed. A read that fails is "unknown": the delivery waits, as before.
 */
export interface StandingDeps {
  /** The ids of the installations marked uninstalled or suspended. */
  listUnmanaged(): Promise<string[]>;
  /** Why the installation is unmanaged now (read from the database), or null: it is managed or unknown. */
  confirm(id: string): Promise<string | null>;
  clock: { now(): Date };
  log: { warn(obj: object, msg: string): void };
  /** How old the list may be (default 5 s). */
  refreshMs?: number;
}

export class InstallationStanding {
  #unmanaged = new Set<string>();
  #readAt: number | null = null;
  #reading: Promise<void> | null = null;

  constructor(readonly deps: StandingDeps) {}

  /** Why Orchestra does not manage this installation, when that is known for sure; null otherwise. */
  async unmanaged(id: string): Promise<string | null> {
    try {
      await this.#fresh();
      if (!this.#unmanaged.has(id)) return null;
      return await this.deps.confirm(id);
    } catch (err) {
      this.deps.log.warn(
        { installationId: id, err: err instanceof Error ? err.message : String(err) },
        "could not read whether an installation is managed; its delivery waits to be processed",
      );
      return null;
    }
  }

  #fresh(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    if (this.#readAt !== null && now - this.#readAt < (this.deps.refreshMs ?? 5_000)) return Promise.resolve();
    this.#reading ??= this.deps
      .listUnmanaged()
      .then((rows) => {
        this.#unmanaged = new Set(rows);
        this.#readAt = now;
      })
      .finally(() => {
        this.#reading = null;
      });
    return this.#reading;
  }
}
