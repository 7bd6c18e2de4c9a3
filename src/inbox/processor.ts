/**
 * Drains the inbox: claims due deliveries at the head of their task key, hands
 * each to the dispatcher with bounded concurrency across keys, and records the
 * outcome. A delivery that keeps failing is retried on the retry schedule
 * (src/retry/schedule.ts): through a GitHub outage for the retry window, a
 * deterministic failure only a few times; then it is parked with its errors
 * and the reason. Nothing is dropped silently and nothing retries in a hot
 * loop.
 */
import { errorClass, failureOf } from "../github/errors.js";
import type { ClaimedDelivery, Inbox } from "./store.js";
import { PROCESSING_LEASE_MS } from "../config/defaults.js";
import { ownerId, whileRenewed } from "../store/renewal.js";

export type DispatchResult = "done" | "ignored";

/** Runs the capability handlers for one delivery; throws to have it retried. */
export type Dispatch = (delivery: ClaimedDelivery) => Promise<DispatchResult>;

export interface ProcessorLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ProcessorOptions {
  concurrency?: number;
  /** How long a claim lasts without renewal; a crashed processor's claims expire after it. */
  leaseMs?: number;
  /** Poll interval when idle (deliveries stored by another replica, retries coming due). */
  pollMs?: number;
  owner?: string;
  /** Time for claims, leases and retry times (tests move it forward to simulate hours). */
  clock?: { now(): Date };
  /** Told when a delivery was processed and completed, with when it arrived (metrics). */
  onDone?: (receivedAt: Date, at: Date) => void;
}

export class Processor {
  readonly owner: string;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #pollMs: number;
  readonly #clock: { now(): Date };
  readonly #onDone: ProcessorOptions["onDone"];
  readonly #busy = new Set<string>();
  readonly #inflight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #draining = false;
  #drainDone: Promise<void> = Promise.resolve();
  #again = false;
  #processed = 0;

  constructor(
    readonly inbox: Inbox,
    readonly dispatch: Dispatch,
    readonly log: ProcessorLog,
    opts: ProcessorOptions = {},
  ) {
    this.owner = opts.owner ?? ownerId();
    this.#concurrency = opts.concurrency ?? 4;
    this.#leaseMs = opts.leaseMs ?? PROCESSING_LEASE_MS;
    this.#pollMs = opts.pollMs ?? 1_000;
    this.#clock = opts.clock ?? { now: () => new Date() };
    this.#onDone = opts.onDone;
  }

  get processed(): number {
    return this.#processed;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  /**
   * Stops claiming and waits for deliveries in flight to finish; one that
   * fails from now on (its GitHub calls abandoned by the shutdown) is left
   * pending with its attempt given back, not recorded as a failure.
   */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    // A claim in progress may still add deliveries to the in-flight set.
    await this.#drainDone;
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  /** A new delivery was stored: look now rather than at the next poll. */
  poke(): void {
    if (!this.#running) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#tick(), 0);
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#draining) {
      this.#again = true; // the drain under way schedules the next one
      return;
    }
    this.#drainDone = this.#drain().finally(() => {
      if (!this.#running) return;
      const soon = this.#again;
      this.#again = false;
      this.#timer = setTimeout(() => this.#tick(), soon ? 0 : this.#pollMs);
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      const free = this.#concurrency - this.#inflight.size;
      if (free <= 0) return;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await this.inbox.claim(this.owner, free, this.#leaseMs, this.#busy, this.#clock.now());
      } catch (err) {
        this.log.error(
          { err: String(err) },
          "inbox: could not claim deliveries (database unavailable?); retrying at the next poll",
        );
        return;
      }
      for (const d of claimed) {
        this.#busy.add(d.taskKey);
        const p = this.#run(d).finally(() => {
          this.#busy.delete(d.taskKey);
          this.#inflight.delete(p);
          this.poke();
        });
        this.#inflight.add(p);
      }
      if (claimed.length === free) this.#again = true;
    } finally {
      this.#draining = false;
    }
  }

  async #run(d: ClaimedDelivery): Promise<void> {
    try {
      const result = await whileRenewed(
        {
          leaseMs: this.#leaseMs,
          renew: () => this.inbox.renew(d.seq, this.owner, this.#leaseMs, this.#clock.now()),
          lost: () => this.log.warn({ delivery: d.deliveryId }, "inbox: lost the claim on a delivery still running"),
        },
        () => this.dispatch(d),
      );
      const at = this.#clock.now();
      if (!(await this.inbox.complete(d.seq, this.owner, result, at))) {
        this.log.warn(
          { delivery: d.deliveryId },
          "inbox: delivery finished after its claim expired; another processor may run it again",
        );
      } else if (d.receivedAt) this.#onDone?.(d.receivedAt, at);
      this.#processed++;
    } catch (err) {
      if (!this.#running) {
        // Stopping: its GitHub calls were abandoned, which says nothing about the delivery. It waits, pending.
        await this.inbox.release(d.seq, this.owner, this.#clock.now()).catch(() => {});
        this.log.info({ delivery: d.deliveryId }, "inbox: stopping; the delivery in flight stays pending");
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      const failure = failureOf(err);
      try {
        const out = await this.inbox.fail(
          d,
          this.owner,
          {
            failure,
            class:
              failure.class === "rate-limit"
                ? "rate-limit"
                : errorClass(err, err instanceof Error ? err.name : "Error"),
            message,
          },
          this.#clock.now(),
        );
        const fields = {
          delivery: d.deliveryId,
          event: d.event,
          attempt: d.attempts,
          failure: failure.class,
          firstFailedAt: out.firstFailedAt.toISOString(),
          error: message,
        };
        if (out.state === "parked") {
          this.log.error(
            fields,
            `inbox: delivery parked after ${d.attempts} attempts (${out.why}); fix the cause, then run: ` +
              `orchestra replay ${d.deliveryId} (parked ones: GET /api/v1/deliveries?state=parked)`,
          );
        } else {
          this.log.warn(
            { ...fields, retryAt: out.retryAt.toISOString() },
            "inbox: delivery failed; it will be retried with backoff",
          );
        }
      } catch (recordErr) {
        // The claim stays; it expires and the delivery is retried then.
        this.log.error({ delivery: d.deliveryId, err: String(recordErr) }, "inbox: could not record a failed attempt");
      }
    }
  }
}
