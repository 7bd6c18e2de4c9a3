/**
 * Decisions a run is owed: recorded human input — sign-offs, corrections,
 * answers — handed to a run at its boundaries. A claim carries the task's
 * standing decisions (superseded ones marked as history), so a resumed,
 * rebased or fixed-up run still knows what the human said; a heartbeat
 * carries every standing decision this run has not receipted yet, so a
 * correction made during the run reaches it until it says it has it, and
 * never again in that run. A sign-off says whether it is stale: the head it
 * was given for is no longer the head.
 */
import type { Database } from "../store/db.js";
import { select } from "../store/sql.js";
import type { ClaimQueries } from "./queries.js";

export interface DecisionOut {
  id: string;
  kind: string;
  subject?: string;
  body: string;
  author: string;
  at: string;
  /** A sign-off: the head it was given for, and whether new commits came since. */
  headSha?: string;
  stale?: boolean;
  /** Superseded by a later one: kept so the run knows what changed. */
  history?: true;
}

/** Handed out this often without a receipt: flagged in the task view. */
export const UNRECEIPTED_FLAG = 3;

/** Kinds a run is handed (questions are asked by the run; approvals are for people). */
const HANDED = `('correction', 'verify', 'answer')`;

type Row = {
  id: string;
  kind: string;
  subject: string | null;
  body: string;
  author: string;
  createdAt: unknown;
  headSha: string | null;
  supersededAt: unknown;
};

export class Decisions {
  constructor(
    readonly queries: Pick<ClaimQueries, "decision" | "delivery" | "handed" | "receipted">,
    readonly database: Pick<Database, "raw" | "provider">,
    readonly clock: { now(): Date },
  ) {}

  /** At a claim: every standing decision of the task, superseded ones as history. */
  async forClaim(taskId: string, runId: string, headSha: string | null): Promise<DecisionOut[]> {
    const rows = (await select(
      this.database,
      `SELECT "id", "kind", "subject", "body", "author", "createdAt", "headSha", "supersededAt" ` +
        `FROM "Decision" WHERE "taskId" = ? AND "kind" IN ${HANDED} ORDER BY "createdAt"`,
      [taskId],
    )) as Row[];
    await this.#handed(
      rows.filter((r) => r.supersededAt === null).map((r) => r.id),
      runId,
    );
    return rows.map((r) => out(r, headSha));
  }

  /**
   * At a heartbeat: the standing decisions this run has not receipted. Every claim
   * and heartbeat asks; almost always there is nothing: plain SQL, no planning.
   */
  async forHeartbeat(taskId: string, runId: string, headSha: string | null): Promise<DecisionOut[]> {
    const rows = (await select(
      this.database,
      `SELECT d."id", d."kind", d."subject", d."body", d."author", d."createdAt", d."headSha", d."supersededAt" ` +
        `FROM "Decision" d WHERE d."taskId" = ? AND d."kind" IN ${HANDED} AND d."supersededAt" IS NULL
         AND NOT EXISTS (SELECT 1 FROM "DecisionDelivery" x WHERE x."decisionId" = d."id" AND x."runId" = ? ` +
        `AND x."receiptAt" IS NOT NULL) ORDER BY d."createdAt"`,
      [taskId, runId],
    )) as Row[];
    await this.#handed(
      rows.map((r) => r.id),
      runId,
    );
    return rows.map((r) => out(r, headSha));
  }

  async #handed(ids: string[], runId: string): Promise<void> {
    const now = this.clock.now();
    for (const decisionId of ids) {
      await this.queries.handed(decisionId, runId, now);
    }
  }

  /**
   * The decision's source comment when it was handed to this run
   * (its receipt is recorded once); undefined when it was not.
   */
  async receipt(runId: string, decisionId: string): Promise<{ commentId: number | null; first: boolean } | undefined> {
    const d = await this.queries.decision(decisionId);
    const handed = d ? await this.queries.delivery(decisionId, runId) : null;
    if (!d || !handed) return undefined;
    const first = await this.queries.receipted(decisionId, runId, this.clock.now());
    const m = /^comment:(\d+)/.exec(d.source ?? "");
    return { commentId: m ? Number(m[1]) : null, first };
  }
}

function out(r: Row, headSha: string | null): DecisionOut {
  const at = r.createdAt instanceof Date ? r.createdAt : new Date(String(r.createdAt));
  return {
    id: r.id,
    kind: r.kind,
    ...(r.subject ? { subject: r.subject } : {}),
    body: r.body,
    author: r.author,
    at: at.toISOString(),
    ...(r.kind === "verify" && r.headSha
      ? { headSha: r.headSha, stale: headSha !== null && headSha !== r.headSha }
      : {}),
    ...(r.supersededAt !== null ? { history: true as const } : {}),
  };
}
