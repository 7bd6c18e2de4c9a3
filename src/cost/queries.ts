/** What the cost ledger reads and writes: one row of GitHub call counts per task. */
import type { Db } from "../store/db.js";
import type { TaskLedger } from "../store/generated/sqlite/client.js";

export interface LedgerQueries {
  /** Adds the counts to the task's row; the number of rows changed (0: it has none yet). */
  addCalls(taskId: string, reads: number, writes: number): Promise<number>;
  /** Creates the task's row with these counts (fails with P2002 when it exists). */
  createEntry(taskId: string, reads: number, writes: number): Promise<void>;
  entryOf(taskId: string): Promise<TaskLedger | null>;
}

export function ledgerQueries(db: Db): LedgerQueries {
  return {
    addCalls: async (taskId, reads, writes) =>
      (
        await db.taskLedger.updateMany({
          where: { taskId },
          data: { githubReads: { increment: reads }, githubWrites: { increment: writes } },
        })
      ).count,
    createEntry: async (taskId, reads, writes) => {
      await db.taskLedger.create({ data: { taskId, githubReads: reads, githubWrites: writes } });
    },
    entryOf: (taskId) => db.taskLedger.findUnique({ where: { taskId } }),
  };
}
