/**
 * Admission for an expensive route (a claim is a fenced transaction and some
 * two dozen statements): at most `concurrency` run at once in this process,
 * at most `queue` wait for a turn, in arrival order, and the rest are refused
 * at once with 503 and Retry-After. Under more load than the database can
 * take, a refused caller hears so in a millisecond and comes back later,
 * instead of every caller waiting behind all the others until its own
 * timeout, when the work done for it is wasted.
 */
import { HttpError } from "./router.js";

export interface AdmissionOptions {
  /** Calls running at once. */
  concurrency: number;
  /** Calls waiting for a turn; one more is refused. */
  queue: number;
  /** The Retry-After of a refusal. */
  retryAfterSeconds: number;
  /** What is refused, for the answer ("claims"). */
  what: string;
  /** Told of each refusal (a metric). */
  onShed?: () => void;
}

/** A refusal because the process is at its limit: 503, retryable, Retry-After. */
export class Overloaded extends HttpError {
  constructor(o: AdmissionOptions) {
    super(
      503,
      `this replica is at its limit for ${o.what} (${o.concurrency} running, ${o.queue} waiting); ` +
        `try again in ${o.retryAfterSeconds} s, or run another replica on the same database`,
      { reason: "busy", retryable: true, retryAfterSeconds: o.retryAfterSeconds },
    );
  }
}

export class Admission {
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  #shed = 0;

  constructor(readonly options: AdmissionOptions) {
    if (options.concurrency < 1 || options.queue < 0) throw new Error("admission: concurrency ≥ 1 and queue ≥ 0");
  }

  /** Runs `fn` in its turn; throws Overloaded at once when the queue is full. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running < this.options.concurrency) this.#running++;
    else if (this.#waiting.length < this.options.queue) await new Promise<void>((turn) => this.#waiting.push(turn));
    else {
      this.#shed++;
      this.options.onShed?.();
      throw new Overloaded(this.options);
    }
    try {
      return await fn();
    } finally {
      // The slot passes to the longest waiting, or is freed.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /** Now: calls running and waiting; since start: calls refused. */
  stats(): { running: number; waiting: number; shed: number } {
    return { running: this.#running, waiting: this.#waiting.length, shed: this.#shed };
  }
}
