/**
 * Reads what the Orchestra check run shows for a task's PR head, when the
 * check-run effect is performed: the task now, its runs, the reruns used on
 * this head, and the completion receipt.
 */
import type { Db } from "../store/db.js";
import { parseJson } from "../apply/views.js";
import type { Continuation } from "../machine/model.js";
import { renderCheckRun, type CheckRunView } from "../texts/check-run.js";

/** Distinct failures rerun on a PR head: rerun effects are keyed rerun:<pr>:<sha>:<target>:<failure>. */
export async function rerunsUsedOn(db: Db, taskId: string, prNumber: number, headSha: string): Promise<number> {
  const prefix = `rerun:${prNumber}:${headSha}:`;
  const rows = await db.effect.findMany({ where: { taskId, key: { startsWith: prefix } }, select: { key: true } });
  return new Set(rows.map((r) => r.key.split(":").slice(-1)[0])).size;
}

export function checkRunReader(db: Db): (taskId: string, headSha: string) => Promise<CheckRunView | null> {
  return async (taskId, headSha) => {
    const task = await db.task.findUnique({ where: { id: taskId } });
    if (!task || task.prNumber === null) return null;
    const [runs, receipt, reruns] = await Promise.all([
      db.run.findMany({ where: { taskId, state: { not: "aborted" } }, orderBy: { startedAt: "asc" } }),
      db.completionReceipt.findUnique({ where: { taskId } }),
      rerunsUsedOn(db, taskId, task.prNumber, headSha),
    ]);
    return renderCheckRun({ ...task, continuation: parseJson<Continuation>(task.continuation) }, runs, reruns, receipt);
  };
}
