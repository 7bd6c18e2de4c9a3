/**
 * Decisions a run is owed: recorded human input delivered at the run's next
 * boundary (its claim or a heartbeat answer), each to one run, and receipts
 * the worker posts for them. Worker questions are recorded here too. (Human
 * input from GitHub comments arrives with the human-input capability.)
 */
import { randomUUID } from "node:crypto";
import type { Database, Db } from "../store/db.js";
import { select } from "../store/sql.js";
import { QUESTION_TTL_MS } from "../machine/model.js";

export interface DecisionOut {
  id: string;
  kind: string;
  subject?: string;
  body: string;
  author: string;
}

export class Decisions {
  constructor(
    readonly db: Db,
    readonly database: Pick<Database, "raw" | "provider">,
    readonly clock: { now(): Date },
  ) {}

  async deliver(taskId: string, runId: string): Promise<DecisionOut[]> {
    // Every claim and heartbeat asks; almost always there is nothing: plain SQL, no planning.
    const pending = (await select(
      this.database,
      `SELECT "id", "kind", "subject", "body", "author" FROM "Decision" WHERE "taskId" = ? AND "kind" <> 'question' AND "deliveredRunId" IS NULL AND "supersededAt" IS NULL ORDER BY "createdAt"`,
      [taskId],
    )) as Array<{ id: string; kind: string; subject: string | null; body: string; author: string }>;
    const out: DecisionOut[] = [];
    for (const d of pending) {
      const r = await this.db.decision.updateMany({ where: { id: d.id, deliveredRunId: null }, data: { deliveredRunId: runId, deliveredAt: this.clock.now() } });
      if (r.count === 1) out.push({ id: d.id, kind: d.kind, ...(d.subject ? { subject: d.subject } : {}), body: d.body, author: d.author });
    }
    return out;
  }

  /** true when the decision was delivered to this run (its receipt is recorded once). */
  async receipt(runId: string, decisionId: string): Promise<boolean> {
    const d = await this.db.decision.findUnique({ where: { id: decisionId } });
    if (!d || d.deliveredRunId !== runId) return false;
    await this.db.decision.updateMany({ where: { id: decisionId, receiptAt: null }, data: { receiptAt: this.clock.now() } });
    return true;
  }

  async ask(taskId: string, runId: string, worker: string, q: { question: string; blocks?: string; condition?: string }): Promise<string> {
    const id = randomUUID();
    const now = this.clock.now();
    await this.db.decision.create({
      data: {
        id,
        taskId,
        runId,
        kind: "question",
        subject: q.blocks ?? null,
        body: q.question,
        author: `worker:${worker}`,
        condition: q.condition ?? null,
        createdAt: now,
        expiresAt: new Date(now.getTime() + QUESTION_TTL_MS),
      },
    });
    return id;
  }
}
