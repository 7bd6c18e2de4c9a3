/** Each installation's pace and holds, as effects/installations.ts reads and writes them (queries.ts composes all). */
import type { Db } from "../../store/db.js";
import type { Installation } from "../../store/generated/sqlite/client.js";

export interface InstallationQueries {
  /** Rejects with Prisma's P2002 when the row exists. */
  createInstallation(id: number, now: Date): Promise<void>;
  /** Uninstalled or suspended at `now`. */
  installationGone(id: number, mark: { deletedAt: Date } | { suspendedAt: Date }, now: Date): Promise<void>;
  /** Managed again, with a clean slate. */
  installationBack(id: number, now: Date): Promise<void>;
  /** Takes the installation's write slot when it is due; false when it is not (or there is no row). */
  takeWriteSlot(id: number, next: Date, now: Date): Promise<boolean>;
  nextWriteAt(id: number): Promise<{ nextWriteAt: Date } | null>;
  rateLimited(id: number, until: Date, now: Date): Promise<void>;
  installationFailures(id: number): Promise<{ failures: number } | null>;
  pauseInstallation(id: number, failures: number, until: Date, why: string, now: Date): Promise<void>;
  clearInstallationPause(id: number, now: Date): Promise<void>;
  /** Installations rate limited or paused after `now`, uninstalled or suspended. */
  heldInstallations(now: Date): Promise<Installation[]>;
  installationStanding(id: number): Promise<{ deletedAt: Date | null; suspendedAt: Date | null } | null>;
}

export function installationQueries(db: Db): InstallationQueries {
  return {
    async createInstallation(id, now) {
      await db.installation.create({ data: { id, nextWriteAt: now, updatedAt: now } });
    },
    async installationGone(id, mark, now) {
      await db.installation.upsert({
        where: { id },
        create: { id, nextWriteAt: now, updatedAt: now, ...mark },
        update: { ...mark, updatedAt: now },
      });
    },
    async installationBack(id, now) {
      await db.installation.upsert({
        where: { id },
        create: { id, nextWriteAt: now, updatedAt: now },
        update: { suspendedAt: null, deletedAt: null, pausedUntil: null, failures: 0, updatedAt: now },
      });
    },
    async takeWriteSlot(id, next, now) {
      const took = await db.installation.updateMany({
        where: { id, nextWriteAt: { lte: now } },
        data: { nextWriteAt: next, updatedAt: now },
      });
      return took.count === 1;
    },
    nextWriteAt: (id) => db.installation.findUnique({ where: { id }, select: { nextWriteAt: true } }),
    async rateLimited(id, until, now) {
      await db.installation.updateMany({
        where: { id },
        data: { rateLimitedUntil: until, updatedAt: now },
      });
    },
    installationFailures: (id) => db.installation.findUnique({ where: { id }, select: { failures: true } }),
    async pauseInstallation(id, failures, until, why, now) {
      await db.installation.updateMany({
        where: { id },
        data: { failures, pausedUntil: until, pauseReason: why, updatedAt: now },
      });
    },
    async clearInstallationPause(id, now) {
      await db.installation.updateMany({
        where: { id },
        data: { failures: 0, pausedUntil: null, pauseReason: null, updatedAt: now },
      });
    },
    heldInstallations: (now) =>
      db.installation.findMany({
        where: {
          OR: [
            { rateLimitedUntil: { gt: now } },
            { pausedUntil: { gt: now } },
            { deletedAt: { not: null } },
            { suspendedAt: { not: null } },
          ],
        },
      }),
    installationStanding: (id) =>
      db.installation.findUnique({ where: { id }, select: { deletedAt: true, suspendedAt: true } }),
  };
}
