/**
 * A shared allowance of bytes for request bodies that are not verified yet.
 * Until its signature is checked a body could come from anyone, so the bytes
 * held for such bodies at once are capped: a burst of large unsigned posts
 * cannot grow the process without bound. Pure bookkeeping, no I/O.
 */
export class ByteBudget {
  #held = 0;

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`byte budget must be a positive whole number, got ${limit}`);
  }

  /** Bytes currently taken. */
  get held(): number {
    return this.#held;
  }

  /** Takes `n` bytes if they fit; false (and nothing taken) when they do not. */
  take(n: number): boolean {
    if (n < 0 || this.#held + n > this.limit) return false;
    this.#held += n;
    return true;
  }

  give(n: number): void {
    this.#held = Math.max(0, this.#held - n);
  }
}
