/**
 * Wraps a port for one piece of work: counts reads and writes (the cost
 * ledger), waits for the installation's write slot before each write
 * (GitHub's pace), and remembers whether a write was under way when a call
 * failed (its effect may have happened).
 */
import { WRITE_METHODS, type GitHub } from "./port.js";

export interface CallCounts {
  reads: number;
  writes: number;
  /** A write was in flight when the last failure happened. */
  writeFailed: boolean;
}

export function newCounts(): CallCounts {
  return { reads: 0, writes: 0, writeFailed: false };
}

export function instrument(github: GitHub, counts: CallCounts, beforeWrite?: () => Promise<void>): GitHub {
  return new Proxy(github, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      const write = WRITE_METHODS.has(prop as keyof GitHub);
      return async (...args: unknown[]) => {
        if (write) {
          if (beforeWrite) await beforeWrite();
          counts.writes++;
        } else counts.reads++;
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (err) {
          counts.writeFailed = write;
          throw err;
        }
      };
    },
  });
}
