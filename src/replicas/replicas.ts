/**
 * Replica liveness. Every running replica beats in its own row every
 * `beatMs`, and on each beat looks at the others' beats. A replica whose beat
 * has stood still for `silentMs` (killed, its machine gone, cut off from the
 * database) has what it still holds, deliveries being processed and effects
 * being performed, released to the rest at once instead of when each lease
 * runs out; then its row is forgotten. Released work is claimed again like
 * work whose lease ran out: a delivery is processed again, an effect that may
 * have reached GitHub is read there before it is sent again. A replica stopped
 * in order gives its work back itself and deletes its row.
 */
import { hostname } from "node:os";
import type { ReplicaQueries } from "./queries.js";
import { Silence } from "./silence.js";
import { ownerId } from "../store/renewal.js";
import { REPLICA_BEAT_MS, REPLICA_SILENT_MS } from "../config/defaults.js";

export interface ReleasedWork {
  deliveries: number;
  effects: number;
}

export interface ReplicaLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ReplicaDeps {
  queries: ReplicaQueries;
  clock: { now(): Date };
  log: ReplicaLog;
  /** Gives what a replica that stopped beating holds back to the queue (deliveries, effects), at `now`. */
  release(owner: string, now: Date): Promise<ReleasedWork>;
  /** Told of every release, for the metrics. */
  onReleased?: (work: ReleasedWork) => void;
}

export interface ReplicaOptions {
  /** The owner id this replica's inbox processor and executor claim under (default: host, pid and a random part). */
  id?: string;
  beatMs?: number;
  silentMs?: number;
}

/** A replica found silent and what was released of it. */
export interface Takeover extends ReleasedWork {
  id: string;
  host: string;
  pid: number;
  lastBeatAt: Date;
}

/** A replica's row for operators. */
export interface ReplicaSeen {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  beatAt: string;
  /** Since its last beat, by the clock of the replica that answers (another machine's clock may differ). */
  beatAgoSeconds: number;
}

export class Replicas {
  readonly id: string;
  readonly host = hostname();
  readonly pid = process.pid;
  readonly #beatMs: number;
  readonly #silence: Silence;
  #startedAt: Date | undefined;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<unknown> | undefined;
  #failing = false;

  constructor(
    readonly deps: ReplicaDeps,
    opts: ReplicaOptions = {},
  ) {
    this.id = opts.id ?? ownerId();
    this.#beatMs = opts.beatMs ?? REPLICA_BEAT_MS;
    this.#silence = new Silence({ silentMs: opts.silentMs ?? REPLICA_SILENT_MS, gapMs: 2 * this.#beatMs });
  }

  /** Every replica's row as this one reads it: when each last beat, and how long ago by this replica's clock. */
  async list(): Promise<{ self: string; replicas: ReplicaSeen[] }> {
    const now = this.deps.clock.now().getTime();
    const rows = await this.deps.queries.replicas();
    return {
      self: this.id,
      replicas: rows.map((r) => ({
        id: r.id,
        host: r.host,
        pid: r.pid,
        startedAt: r.startedAt.toISOString(),
        beatAt: r.beatAt.toISOString(),
        beatAgoSeconds: Math.max(0, Math.round((now - r.beatAt.getTime()) / 100) / 10),
      })),
    };
  }

  /** Beats now and every `beatMs` until stopped. */
  start(): void {
    if (this.#timer) return;
    this.#turn();
    this.#timer = setInterval(() => this.#turn(), this.#beatMs);
    this.#timer.unref();
  }

  /** Stops beating and deletes this replica's row: it is not silent, it is gone, and holds nothing (stop it last). */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#beating;
    await this.deps.queries.forget(this.id).catch(() => {});
  }

  /**
   * One beat: this replica's row, then a look at the others'; a replica silent for long enough has its work
   * released and its row forgotten. Answers the takeovers.
   */
  async beat(): Promise<Takeover[]> {
    const { queries, clock } = this.deps;
    const now = clock.now();
    this.#startedAt ??= now;
    let others;
    try {
      await queries.beat({ id: this.id, host: this.host, pid: this.pid, startedAt: this.#startedAt, beatAt: now });
      others = (await queries.replicas()).filter((r) => r.id !== this.id);
    } catch (err) {
      this.#silence.missed();
      throw err;
    }
    const out: Takeover[] = [];
    for (const id of this.#silence.observe(others, now)) {
      const row = others.find((r) => r.id === id)!;
      const work = await this.deps.release(id, now);
      await queries.forget(id, row.beatAt);
      this.deps.onReleased?.(work);
      const takeover = { id, host: row.host, pid: row.pid, lastBeatAt: row.beatAt, ...work };
      this.#report(takeover);
      out.push(takeover);
    }
    return out;
  }

  #turn(): void {
    if (this.#beating) return; // the last beat is still waiting on the database
    this.#beating = this.beat()
      .then(
        () => {
          if (this.#failing) this.deps.log.info({ replica: this.id }, "replicas: beating again");
          this.#failing = false;
        },
        (err: unknown) => {
          if (!this.#failing)
            this.deps.log.warn(
              { replica: this.id, err: String(err) },
              "replicas: could not write this replica's beat (database unavailable?); " +
                "no other replica is judged until it is written again",
            );
          this.#failing = true;
        },
      )
      .finally(() => (this.#beating = undefined));
  }

  #report(t: Takeover): void {
    const fields = { replica: t.id, host: t.host, pid: t.pid, lastBeatAt: t.lastBeatAt.toISOString() };
    if (t.deliveries + t.effects === 0) {
      this.deps.log.info(fields, "replicas: a replica stopped beating and held nothing; its row was removed");
      return;
    }
    this.deps.log.warn(
      { ...fields, deliveries: t.deliveries, effects: t.effects },
      "replicas: a replica stopped beating; what it held was released to the running replicas " +
        "(each effect that may have reached GitHub is read there before it is sent again)",
    );
  }
}
