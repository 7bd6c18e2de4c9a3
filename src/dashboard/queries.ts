/**
 * What the dashboard keeps in the database: the sessions signed out before
 * their cookies expired (session.ts), so that a copy of a signed-out cookie
 * is refused by every replica.
 */
import type { Db } from "../store/db.js";

export interface DashboardQueries {
  /** Records a signed-out session until its expiry, and deletes the records of sessions that have expired. */
  signOut(nonce: string, expiresAt: Date, now: Date): Promise<void>;
  isSignedOut(nonce: string): Promise<boolean>;
}

export function dashboardQueries(db: Db): DashboardQueries {
  return {
    async signOut(nonce, expiresAt, now) {
      await db.signedOutSession.upsert({ where: { nonce }, create: { nonce, expiresAt }, update: {} });
      await db.signedOutSession.deleteMany({ where: { expiresAt: { lte: now } } });
    },
    async isSignedOut(nonce) {
      return (await db.signedOutSession.findUnique({ where: { nonce }, select: { nonce: true } })) !== null;
    },
  };
}
