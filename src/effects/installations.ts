/**
 * Per installation: GitHub's pace for writes (about one a second, shared by
 * every replica through the database), rate limits that hold one
 * installation back without holding the others, and installations whose
 * token GitHub no longer mints, which are paused with a growing backoff
 * instead of being asked again every few seconds.
 */
import type { InstallationQueries } from "./queries.js";
import { setTimeout as sleep } from "node:timers/promises";

export interface Clock {
  now(): Date;
}

export interface InstallationHold {
  until: Date;
  why: string;
}

/** 1 min, doubling, at most 1 h: how long an installation without a token is left alone. */
export function pauseMs(failures: number): number {
  return Math.min(3600_000, 60_000 * 2 ** Math.max(0, failures - 1));
}

/** Why Orchestra does not manage an installation now (uninstalled or suspended), or null: it does. */
export async function unmanagedInstallation(
  queries: Pick<InstallationQueries, "installationStanding">,
  id: number,
): Promise<string | null> {
  const row = await queries.installationStanding(id);
  if (row?.deletedAt) return "the App was uninstalled";
  if (row?.suspendedAt) return "the App's installation is suspended";
  return null;
}

export class Installations {
  /** Installations known to have failed before, so a success resets them (and nothing else writes). */
  readonly #troubled = new Set<number>();

  constructor(
    readonly queries: InstallationQueries,
    readonly clock: Clock,
    /** Minimum time between two writes of one installation (GitHub asks for about a second). */
    readonly spacingMs: number,
  ) {}

  async #ensure(id: number): Promise<void> {
    const now = this.clock.now();
    try {
      await this.queries.createInstallation(id, now);
    } catch (err) {
      if ((err as { code?: string }).code !== "P2002") throw err;
    }
  }

  /** The App was uninstalled (deleted) or its installation suspended: sweeps and claims skip it from now. */
  async gone(id: number, how: "deleted" | "suspended"): Promise<void> {
    const now = this.clock.now();
    const mark = how === "deleted" ? { deletedAt: now } : { suspendedAt: now };
    await this.queries.installationGone(id, mark, now);
  }

  /** Installed again, unsuspended or its permissions accepted: managed again, with a clean slate. */
  async back(id: number): Promise<void> {
    const now = this.clock.now();
    await this.queries.installationBack(id, now);
  }

  /** Waits for this installation's next write slot and takes it. */
  async beforeWrite(id: number): Promise<void> {
    if (this.spacingMs <= 0) return;
    for (;;) {
      const now = this.clock.now();
      if (await this.queries.takeWriteSlot(id, new Date(now.getTime() + this.spacingMs), now)) return;
      const row = await this.queries.nextWriteAt(id);
      if (!row) {
        await this.#ensure(id);
        continue;
      }
      await sleep(Math.max(5, Math.min(1000, row.nextWriteAt.getTime() - now.getTime())));
    }
  }

  async rateLimited(id: number, until: Date): Promise<void> {
    await this.#ensure(id);
    await this.queries.rateLimited(id, until, this.clock.now());
  }

  /** GitHub would not mint a token: pause the installation, longer each time. */
  async tokenFailed(id: number, why: string): Promise<Date> {
    await this.#ensure(id);
    const row = await this.queries.installationFailures(id);
    const failures = (row?.failures ?? 0) + 1;
    const until = new Date(this.clock.now().getTime() + pauseMs(failures));
    await this.queries.pauseInstallation(id, failures, until, why, this.clock.now());
    this.#troubled.add(id);
    return until;
  }

  /** A call for this installation worked: a pause from earlier is over. */
  async healthy(id: number): Promise<void> {
    if (!this.#troubled.has(id)) return;
    await this.queries.clearInstallationPause(id, this.clock.now());
    this.#troubled.delete(id);
  }

  /** Installations held back right now (rate limited or paused), with why and until when. */
  async held(): Promise<Map<number, InstallationHold>> {
    const now = this.clock.now();
    const rows = await this.queries.heldInstallations(now);
    const out = new Map<number, InstallationHold>();
    for (const r of rows) {
      // Uninstalled or suspended: no sweep calls GitHub there until it comes back.
      if (r.deletedAt || r.suspendedAt)
        out.set(r.id, {
          until: new Date(8.64e15),
          why: r.deletedAt ? "the App was uninstalled" : "the installation is suspended",
        });
      else if (r.pausedUntil && r.pausedUntil > now) {
        out.set(r.id, { until: r.pausedUntil, why: r.pauseReason ?? "paused" });
        this.#troubled.add(r.id);
      } else if (r.rateLimitedUntil) out.set(r.id, { until: r.rateLimitedUntil, why: "rate limited by GitHub" });
    }
    return out;
  }
}
