/**
 * The cost ledger: GitHub calls made for each task (reads and writes), beside
 * the model usage its runs report (kept on the task and run rows by the state
 * machine). The seeds' fleets found half their spend produced no merged PR;
 * the task view is where an operator sees what each task cost.
 */
import type { CallCounts } from "../github/instrument.js";
import type { LedgerQueries } from "./queries.js";

export class Ledger {
  constructor(readonly queries: LedgerQueries) {}

  async add(taskId: string | null, counts: Pick<CallCounts, "reads" | "writes">): Promise<void> {
    if (!taskId || counts.reads + counts.writes === 0) return;
    for (let i = 0; i < 3; i++) {
      const changed = await this.queries.addCalls(taskId, counts.reads, counts.writes);
      if (changed === 1) return;
      try {
        await this.queries.createEntry(taskId, counts.reads, counts.writes);
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== "P2002") throw err; // created meanwhile: increment it
      }
    }
  }

  async of(taskId: string): Promise<{ githubReads: number; githubWrites: number }> {
    const row = await this.queries.entryOf(taskId);
    return { githubReads: row?.githubReads ?? 0, githubWrites: row?.githubWrites ?? 0 };
  }
}
