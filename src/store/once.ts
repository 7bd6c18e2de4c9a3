/**
 * Effects that must happen once however often a delivery or a sweep repeats:
 * the key is recorded before the effect and removed again if the effect fails,
 * so a failed comment is retried and a posted one is never posted twice.
 */
import type { Db } from "./db.js";

export async function once(db: Db, key: string, effect: () => Promise<void>): Promise<boolean> {
  try {
    await db.notice.create({ data: { key, createdAt: new Date() } });
  } catch (err) {
    if ((err as { code?: string }).code === "P2002") return false;
    throw err;
  }
  try {
    await effect();
    return true;
  } catch (err) {
    await db.notice.delete({ where: { key } }).catch(() => {});
    throw err;
  }
}
