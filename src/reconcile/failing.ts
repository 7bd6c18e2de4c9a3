/**
 * A reconcile that keeps failing is escalated once. Each run reports, per
 * scope (a repository, or an installation whose repositories could not be
 * listed), whether it could be read. A scope that fails `after` runs in a row
 * is escalated: one error line in the log saying what to do, and one
 * `reconcile-escalated` sweep report the operator API shows. Nothing more is
 * said until it has been read again (one `reconcile-recovered` report), so a
 * day-long outage is one escalation, not one per run. The streaks live in a
 * checkpoint row, so a restart neither repeats nor forgets an escalation.
 *
 * The escalation does not go to GitHub: what fails here is reading GitHub,
 * and a comment through the same broken path would not arrive.
 */
import type { Logger } from "pino";
import type { ReconcileQueries } from "./queries.js";

export interface Streak {
  since: string;
  runs: number;
  error: string;
  escalatedAt: string | null;
}

/** What one run saw per scope: null when the scope was read, else the error. */
export type RunOutcome = Map<string, string | null>;

const CHECKPOINT = "reconcile:failing";

/**
 * The pure part: the streaks after one run, and which scopes escalate or
 * recover now. A scope absent from the run keeps its streak (it was skipped,
 * e.g. held, not read).
 */
export function nextStreaks(
  before: Readonly<Record<string, Streak>>,
  outcome: RunOutcome,
  now: Date,
  after: number,
): { streaks: Record<string, Streak>; escalate: string[]; recovered: string[] } {
  const streaks: Record<string, Streak> = { ...before };
  const escalate: string[] = [];
  const recovered: string[] = [];
  for (const [scope, error] of outcome) {
    const prev = streaks[scope];
    if (error === null) {
      if (prev) {
        delete streaks[scope];
        if (prev.escalatedAt !== null) recovered.push(scope);
      }
      continue;
    }
    const next: Streak = {
      since: prev?.since ?? now.toISOString(),
      runs: (prev?.runs ?? 0) + 1,
      error,
      escalatedAt: prev?.escalatedAt ?? null,
    };
    if (next.escalatedAt === null && next.runs >= after) {
      next.escalatedAt = now.toISOString();
      escalate.push(scope);
    }
    streaks[scope] = next;
  }
  return { streaks, escalate, recovered };
}

export class FailureStreaks {
  constructor(
    readonly queries: Pick<ReconcileQueries, "checkpoint" | "upsertCheckpoint" | "report">,
    readonly clock: { now(): Date },
    readonly log: Logger,
    /** Failed runs in a row before a scope is escalated (3 runs: 15 minutes at the default interval). */
    readonly after = 3,
  ) {}

  async current(): Promise<Record<string, Streak>> {
    const row = await this.queries.checkpoint(CHECKPOINT);
    return row ? (JSON.parse(row.value) as Record<string, Streak>) : {};
  }

  async record(outcome: RunOutcome): Promise<{ escalated: string[]; recovered: string[] }> {
    const now = this.clock.now();
    const before = await this.current();
    const { streaks, escalate, recovered } = nextStreaks(before, outcome, now, this.after);
    const value = JSON.stringify(streaks);
    if (value !== JSON.stringify(before)) {
      await this.queries.upsertCheckpoint(CHECKPOINT, value, now);
    }
    for (const scope of escalate) {
      const s = streaks[scope]!;
      this.log.error(
        { scope, since: s.since, runs: s.runs, err: s.error },
        `reconcile: ${scope} could not be read in ${s.runs} runs since ${s.since}; ` +
          `its labels and tasks are not being repaired. ` +
          "Check the App's installation and its permissions there, " +
          "and GitHub's status; this is said once until it recovers",
      );
      await this.queries.report({
        kind: "reconcile-escalated",
        at: now,
        counts: JSON.stringify({ runs: s.runs }),
        detail: JSON.stringify({ scope, ...s }),
      });
    }
    for (const scope of recovered) {
      this.log.info({ scope }, `reconcile: ${scope} is read again`);
      await this.queries.report({
        kind: "reconcile-recovered",
        at: now,
        counts: JSON.stringify({}),
        detail: JSON.stringify({ scope, since: before[scope]!.since }),
      });
    }
    return { escalated: escalate, recovered };
  }
}
