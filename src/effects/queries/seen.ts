/** What GitHub already said, as effects/seen.ts keeps it (queries.ts re-exports it). */
import type { Db } from "../../store/db.js";
import { isUniqueViolation } from "../../store/sql.js";

/**
 * What GitHub already said (effects/seen.ts): issues' labels, the node ids of issues and labels, Orchestra's check
 * runs by commit.
 */
export interface SeenQueries {
  labelsOf(repo: string, issue: number): Promise<string | null>;
  /** The issue's labels as JSON, and its node id when the answer or delivery gave it. */
  setLabels(repo: string, issue: number, labels: string, at: Date, nodeId?: string): Promise<void>;
  forgetLabels(repo: string, issue: number): Promise<void>;
  issueNodeOf(repo: string, issue: number): Promise<string | null>;
  /** The node ids of the labels named (lowercased), those known. */
  labelNodesOf(repo: string, names: readonly string[]): Promise<Array<{ name: string; nodeId: string }>>;
  setLabelNodes(repo: string, labels: ReadonlyArray<{ name: string; nodeId: string }>, at: Date): Promise<void>;
  forgetLabelNodes(repo: string, names: readonly string[]): Promise<void>;
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
    setLabels: (repo, issue, labels, seenAt, nodeId) =>
      upsert(
        () => db.issueLabelsSeen.create({ data: { repo, issue, labels, seenAt, ...(nodeId ? { nodeId } : {}) } }),
        () =>
          db.issueLabelsSeen.updateMany({
            where: { repo, issue },
            data: { labels, seenAt, ...(nodeId ? { nodeId } : {}) },
          }),
      ),
    forgetLabels: async (repo, issue) => {
      await db.issueLabelsSeen.deleteMany({ where: { repo, issue } });
    },
    issueNodeOf: async (repo, issue) =>
      (await db.issueLabelsSeen.findUnique({ where: { repo_issue: { repo, issue } } }))?.nodeId ?? null,
    labelNodesOf: async (repo, names) =>
      names.length === 0
        ? []
        : db.labelSeen.findMany({ where: { repo, name: { in: [...names] } }, select: { name: true, nodeId: true } }),
    setLabelNodes: async (repo, labels, seenAt) => {
      if (labels.length === 0) return;
      // Read first: a label's id seldom changes, so most deliveries write nothing here.
      const rows = await db.labelSeen.findMany({ where: { repo, name: { in: labels.map((l) => l.name) } } });
      const known = new Map(rows.map((r) => [r.name, r.nodeId]));
      for (const { name, nodeId } of labels) {
        if (known.get(name) === nodeId) continue;
        await upsert(
          () => db.labelSeen.create({ data: { repo, name, nodeId, seenAt } }),
          () => db.labelSeen.updateMany({ where: { repo, name }, data: { nodeId, seenAt } }),
        );
      }
    },
    forgetLabelNodes: async (repo, names) => {
      await db.labelSeen.deleteMany({ where: { repo, name: { in: [...names] } } });
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
