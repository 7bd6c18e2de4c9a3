/**
 * What the dashboard keeps in the database: the sessions signed out before
 * their cookies expired (session.ts), so that a copy of a signed-out cookie
 * is refused by every replica, and the sign-in links already taken, so that
 * each signs in once.
 */
import type { Db } from "../store/db.js";
import { isUniqueViolation } from "../store/sql.js";

export interface DashboardQueries {
  /** Records a signed-out session until its expiry, and deletes the records of sessions that have expired. */
  signOut(nonce: string, expiresAt: Date, now: Date): Promise<void>;
  isSignedOut(nonce: string): Promise<boolean>;
  /**
   * Records a sign-in link's nonce as spent until its expiry: true the first time, false after (then, until the
   * link expires and is refused anyway).
   */
  spendLink(nonce: string, expiresAt: Date, now: Date): Promise<boolean>;
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
    async spendLink(nonce, expiresAt, now) {
      // The same table as signed-out sessions (a nonce refused until its expiry), under a prefix of its own.
      try {
        await db.signedOutSession.create({ data: { nonce: `link:${nonce}`, expiresAt } });
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
      await db.signedOutSession.deleteMany({ where: { expiresAt: { lte: now } } });
      return true;
    },
  };
}
