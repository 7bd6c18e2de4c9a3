/**
 * Reads what the Orchestra check run shows for a task's PR head, when the
 * check-run effect is performed: the task now, its runs, the reruns used on
 * this head, and the completion receipt.
 */
import { parseJson } from "../apply/views.js";
import type { Continuation } from "../machine/model.js";
import { renderCheckRun, type CheckRunView } from "../texts/check-run.js";
import type { CheckRunQueries } from "./queries.js";

/** Distinct failures rerun on a PR head: rerun effects are keyed rerun:<pr>:<sha>:<target>:<failure>. */
export async function rerunsUsedOn(
  queries: Pick<CheckRunQueries, "effectKeys">,
  taskId: string,
  prNumber: number,
  headSha: string,
): Promise<number> {
  const rows = await queries.effectKeys(taskId, `rerun:${prNumber}:${headSha}:`);
  return new Set(rows.map((r) => r.key.split(":").slice(-1)[0])).size;
}

export function checkRunReader(
  queries: CheckRunQueries,
): (taskId: string, headSha: string) => Promise<CheckRunView | null> {
  return async (taskId, headSha) => {
    const task = await queries.task(taskId);
    if (!task || task.prNumber === null) return null;
    const [runs, receipt, reruns] = await Promise.all([
      queries.runsShown(taskId),
      queries.receiptOf(taskId),
      rerunsUsedOn(queries, taskId, task.prNumber, headSha),
    ]);
    return renderCheckRun({ ...task, continuation: parseJson<Continuation>(task.continuation) }, runs, reruns, receipt);
  };
}
