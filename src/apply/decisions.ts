/**
 * The statements that record a human decision (a sign-off, a correction, an
 * answer, a question) inside a transition's transaction.
 */
import type { Applied } from "../machine/decision.js";
import type { Step } from "../store/sql.js";

/**
 * Recording a decision: once per source (the same comment delivered twice is
 * one row), superseding what it replaces — only rows recorded before it, so
 * an old comment delivered again never supersedes a newer one.
 */
export function decisionSteps(taskId: string | null, x: NonNullable<Applied["decisions"]>[number], now: Date): Step[] {
  const steps: Step[] = [
    {
      sql:
        `INSERT INTO "Decision" ("id","taskId","runId","kind","subject","body","author","condition","awaits",` +
        `"source","createdAt","expiresAt","headSha") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ` +
        `ON CONFLICT ("source") DO NOTHING`,
      args: [
        x.id,
        taskId,
        x.runId,
        x.kind,
        x.subject,
        x.body,
        x.author,
        x.condition ?? null,
        x.awaits ?? null,
        x.source,
        now,
        x.expiresAt ?? null,
        x.headSha ?? null,
      ],
    },
  ];
  if (x.supersedes) {
    // Same subject, or the same source and its edits (`comment:7` and `comment:7:…`, never `comment:70`).
    const [clause, args] =
      "subject" in x.supersedes
        ? [`"subject" = ?`, [x.supersedes.subject]]
        : [`("source" = ? OR "source" LIKE ?)`, [x.supersedes.source, `${x.supersedes.source}:%`]];
    steps.push({
      sql:
        `UPDATE "Decision" SET "supersededAt" = ? WHERE "taskId" = ? AND "kind" = ? AND ${clause} ` +
        `AND "supersededAt" IS NULL AND "source" <> ? ` +
        `AND "createdAt" <= (SELECT "createdAt" FROM "Decision" WHERE "source" = ?)`,
      args: [now, taskId, x.kind, ...args, x.source, x.source],
    });
  }
  return steps;
}
