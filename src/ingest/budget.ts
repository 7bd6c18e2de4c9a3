/**
 * The allowance of bytes for request bodies that are not verified yet. Until
 * its signature is checked a body could come from anyone, so what such bodies
 * may hold at once is bounded three ways:
 *
 * - in all (the budget, ORCHESTRA_INGEST_BUFFER_MB);
 * - for large bodies, all but a reserve: the first bytes of every body (a
 *   typical delivery is a few kilobytes) draw on the whole budget, so large
 *   bodies, however many and however slow, cannot take the room a signed
 *   delivery needs;
 * - per client address: the large bytes one address holds, and the number of
 *   unverified bodies it is sending at once.
 *
 * Pure bookkeeping, no I/O. The timing of bodies (how long one may take to
 * arrive) is body.ts's.
 */

/** The bytes of a body up to this size are "small": they may use the reserve. */
export const SMALL_BODY = 1024 * 1024;

export interface BudgetLimits {
  /** Bytes held at once for all unverified bodies. */
  totalBytes: number;
  /** Of those, what only the small part of bodies may use. */
  reserveBytes: number;
  /** Large bytes one client address may hold at once. */
  perAddressBytes: number;
  /** Unverified bodies one client address may be sending at once. */
  perAddressBodies: number;
}

/** GitHub caps webhook payloads at 25 MB: one address must be able to send one whole. */
const MAX_PAYLOAD = 25 * 1024 * 1024;

/** The limits that follow from a total budget (at least GitHub's 25 MB payload cap plus the reserve). */
export function budgetLimits(totalBytes: number): BudgetLimits {
  if (!Number.isSafeInteger(totalBytes) || totalBytes < 1)
    throw new RangeError(`byte budget must be a positive whole number, got ${totalBytes}`);
  const reserveBytes = Math.floor(totalBytes / 8);
  return {
    totalBytes,
    reserveBytes,
    perAddressBytes: Math.max(
      Math.min(MAX_PAYLOAD, totalBytes - reserveBytes),
      Math.floor((totalBytes - reserveBytes) / 2),
    ),
    perAddressBodies: 64,
  };
}

interface AddressShare {
  large: number;
  bodies: number;
}

export type Refusal = "budget" | "address-bytes" | "address-bodies";

/** One body's claim on the budget: what it took, given back once on release. */
export interface Allowance {
  /** Takes `n` more bytes of the body (small while the body is within SMALL_BODY); the refusal when they do not fit. */
  take(n: number): Refusal | null;
  /** Takes the whole declared length of a large body at once: it is admitted whole or not at all. */
  promise(n: number): Refusal | null;
  release(): void;
}

export class UnverifiedBudget {
  #held = 0;
  #large = 0;
  readonly #addresses = new Map<string, AddressShare>();

  constructor(readonly limits: BudgetLimits) {}

  /** Bytes currently taken, in all and by large bodies. */
  get held(): number {
    return this.#held;
  }

  get heldLarge(): number {
    return this.#large;
  }

  /** Starts a body from `address`; a refusal when that address is sending too many already. */
  open(address: string): Allowance | Refusal {
    const share = this.#addresses.get(address) ?? { large: 0, bodies: 0 };
    if (share.bodies >= this.limits.perAddressBodies) return "address-bodies";
    share.bodies++;
    this.#addresses.set(address, share);
    let small = 0;
    let large = 0;
    let released = false;
    const takeLarge = (n: number): Refusal | null => {
      if (this.#held + n > this.limits.totalBytes) return "budget";
      if (this.#large + n > this.limits.totalBytes - this.limits.reserveBytes) return "budget";
      if (share.large + n > this.limits.perAddressBytes) return "address-bytes";
      this.#held += n;
      this.#large += n;
      share.large += n;
      large += n;
      return null;
    };
    return {
      take: (n) => {
        if (released || n < 0 || this.#held + n > this.limits.totalBytes) return "budget";
        const asSmall = Math.min(n, Math.max(0, SMALL_BODY - small - large));
        const rest = n - asSmall;
        if (rest > 0) {
          const refused = takeLarge(rest);
          if (refused) return refused;
        }
        this.#held += asSmall;
        small += asSmall;
        return null;
      },
      promise: (n) => (released || n < 0 ? "budget" : takeLarge(n)),
      release: () => {
        if (released) return;
        released = true;
        this.#held -= small + large;
        this.#large -= large;
        share.large -= large;
        share.bodies--;
        if (share.bodies === 0) this.#addresses.delete(address);
      },
    };
  }
}
