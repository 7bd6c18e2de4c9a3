/**
 * Failed token attempts per client address (the admin token on the API and
 * the dashboard's sign-in, worker tokens, the metrics token). After `limit`
 * wrong tokens from one address within `windowMs` of its first, further
 * wrong tokens from it are answered 429 with Retry-After until the window
 * ends. Only failures are counted and only failures are refused: a correct
 * token is checked first and goes through at once, so a worker or operator
 * that shares an address (a NAT, a proxy) with a misconfigured or hostile
 * client is never locked out by it.
 *
 * The counts are kept in memory, per replica, for at most `maxAddresses`
 * addresses (the oldest window is dropped first). An IPv6 client is counted
 * by its /64, which one host usually holds whole.
 */
import type { IncomingMessage } from "node:http";

export interface ThrottleOptions {
  limit: number;
  windowMs: number;
  maxAddresses: number;
}

export const ADMIN_HINT = "the admin token is ORCHESTRA_ADMIN_TOKEN in the service's environment";

export const DEFAULT_THROTTLE: ThrottleOptions = { limit: 10, windowMs: 60_000, maxAddresses: 10_000 };

interface Window {
  startedAt: number;
  failures: number;
}

/** The address a client's failures are counted against: IPv4 as is (also when mapped into IPv6), IPv6 by its /64. */
export function throttleKey(address: string | undefined): string {
  if (!address) return "unknown";
  if (address.startsWith("::ffff:") && address.includes(".")) return address.slice(7);
  if (!address.includes(":")) return address;
  const [head, tail] = address.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0")];
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

export class TokenThrottle {
  readonly #windows = new Map<string, Window>();

  constructor(
    private readonly clock: { now(): Date },
    readonly options: ThrottleOptions = DEFAULT_THROTTLE,
  ) {}

  /**
   * Counts one wrong token from the request's client. Null while the client
   * is within its limit; else the seconds until its window ends (Retry-After).
   */
  failed(req: IncomingMessage): number | null {
    const key = throttleKey(req.socket.remoteAddress);
    const now = this.clock.now().getTime();
    let window = this.#windows.get(key);
    if (!window || now - window.startedAt >= this.options.windowMs) {
      this.#windows.delete(key);
      this.#makeRoom(now);
      window = { startedAt: now, failures: 0 };
      this.#windows.set(key, window);
    }
    window.failures++;
    if (window.failures <= this.options.limit) return null;
    return Math.max(1, Math.ceil((window.startedAt + this.options.windowMs - now) / 1000));
  }

  /** How many addresses are being counted (for tests of the bound). */
  get size(): number {
    return this.#windows.size;
  }

  #makeRoom(now: number): void {
    if (this.#windows.size < this.options.maxAddresses) return;
    for (const [key, w] of this.#windows) if (now - w.startedAt >= this.options.windowMs) this.#windows.delete(key);
    // Still full: drop the oldest windows (a Map keeps insertion order, and a window is re-inserted when it opens).
    for (const key of this.#windows.keys()) {
      if (this.#windows.size < this.options.maxAddresses) break;
      this.#windows.delete(key);
    }
  }
}

/** The answer to a wrong token from a client over its limit; `hint` says which token is the right one. */
export function tooManyMessage(retryAfterSeconds: number, hint: string): string {
  return `too many wrong tokens from this address: wait ${retryAfterSeconds} s before trying again; ${hint}`;
}
