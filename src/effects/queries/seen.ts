/** What GitHub already said, as effects/seen.ts keeps it (queries.ts re-exports it). */
import type { Db } from "../../store/db.js";
import { isUniqueViolation } from "../../store/sql.js";

/** What GitHub already said (effects/seen.ts): issues' labels, Orchestra's check runs by commit. */
export interface SeenQueries {
  labelsOf(repo: string, issue: number): Promise<string | null>;
  setLabels(repo: string, issue: number, labels: string, at: Date): Promise<void>;
  forgetLabels(repo: string, issue: number): Promise<void>;
  /** The check run's row: undefined when there is none, a null id while its creation is under way. */
  checkRunOf(repo: string, headSha: string): Promise<{ checkRunId: bigint | null } | undefined>;
  setCheckRun(repo: string, headSha: string, checkRunId: number | null, at: Date): Promise<void>;
}

/** An upsert that a concurrent insert of the same key turns into the update it should have been. */
async function upsert(create: () => Promise<unknown>, update: () => Promise<unknown>): Promise<void> {
  const n = (await update()) as { count: number };
  if (n.count > 0) return;
  try {
    await create();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    await update();
  }
}

export function seenQueries(db: Db): SeenQueries {
  return {
    labelsOf: async (repo, issue) =>
      (await db.issueLabelsSeen.findUnique({ where: { repo_issue: { repo, issue } } }))?.labels ?? null,
    setLabels: (repo, issue, labels, seenAt) =>
      upsert(
        () => db.issueLabelsSeen.create({ data: { repo, issue, labels, seenAt } }),
        () => db.issueLabelsSeen.updateMany({ where: { repo, issue }, data: { labels, seenAt } }),
      ),
    forgetLabels: async (repo, issue) => {
      await db.issueLabelsSeen.deleteMany({ where: { repo, issue } });
    },
    checkRunOf: async (repo, headSha) =>
      (await db.checkRunSeen.findUnique({ where: { repo_headSha: { repo, headSha } } })) ?? undefined,
    setCheckRun: (repo, headSha, id, seenAt) => {
      const checkRunId = id === null ? null : BigInt(id);
      return upsert(
        () => db.checkRunSeen.create({ data: { repo, headSha, checkRunId, seenAt } }),
        () => db.checkRunSeen.updateMany({ where: { repo, headSha }, data: { checkRunId, seenAt } }),
      );
    },
  };
}
