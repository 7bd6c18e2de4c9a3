/**
 * A claim kept while its work runs: a row claimed until a time (a delivery
 * being processed, an effect being performed) is renewed every third of its
 * lease until the work ends, so a short lease, which lets another replica
 * take over a dead one's work soon, still holds through slow work.
 */
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";

/**
 * The owner a process claims rows under (a delivery's or an effect's
 * lockedBy, its replica's beat row): it says where the process runs, so an
 * operator can read it.
 */
export function ownerId(): string {
  return `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/** How often a claim of `leaseMs` is renewed: every third of it, at most once a second. */
export const renewEveryMs = (leaseMs: number): number => Math.max(1_000, Math.floor(leaseMs / 3));

/**
 * Runs `work` while renewing its claim: `renew` answers false when the claim
 * was lost (its lease ran out and another took it), and `lost` is told so; a
 * renewal that fails is tried again at the next turn.
 */
export async function whileRenewed<T>(
  o: { leaseMs: number; renew: () => Promise<boolean>; lost: () => void },
  work: () => Promise<T>,
): Promise<T> {
  const timer = setInterval(() => {
    o.renew().then(
      (held) => {
        if (!held) o.lost();
      },
      () => {},
    );
  }, renewEveryMs(o.leaseMs));
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
