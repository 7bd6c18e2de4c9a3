/**
 * Counts of ignored input: everything Orchestra received and deliberately
 * let have no effect. Untrusted input has no effect, so without a count it
 * would leave no trace an operator can watch (a bot re-adding a label all
 * night, a stranger trying commands). The audit log keeps the recent entries
 * with who and why; these counters keep the totals, for
 * `GET /api/v1/ignored` and for /metrics, which reads the same table.
 *
 * A count is taken in the same transaction as the decision it belongs to
 * when there is one (`step`), else on its own (`bump`).
 */
import type { Database } from "../store/db.js";
import { atomically, type Step } from "../store/sql.js";
import type { RaiseResult, TaskRef, Tasks } from "../apply/tasks.js";
import type { TaskEvent } from "../machine/events.js";
import type { IgnoredQueries } from "./queries.js";

/** The closed set of counter names, each with what it counts. */
export const IGNORED = {
  /** An agent:* label added or removed by someone who is not trusted: undone, or without effect. */
  "ignored.untrusted-label":
    "agent:* label changes by people or bots that are not trusted " +
    "(undone where the label is Orchestra's, else without effect)",
  /** An `orchestra …` command from someone who is not trusted (Orchestra's own comments included). */
  "ignored.untrusted-command": "`orchestra …` commands from people or bots that are not trusted",
  /** Any other comment on a managed issue or its PR from someone who is not trusted. */
  "ignored.untrusted-comment":
    "other comments on managed issues and their pull requests from people or bots that are not trusted",
  "ignored.untrusted-review": "reviews of task pull requests from people or bots that are not trusted",
  /** Echoes of Orchestra's own writes (recognised by their sender, never re-trigger it). */
  "ignored.own-echo": "Orchestra's own label changes and comments, delivered back to it",
  /** Webhooks for an installation the App is not (or no longer) installed on, or without an installation. */
  "ignored.unmanaged": "events for installations Orchestra does not manage (uninstalled, suspended, or none named)",
  /** Events a handler looked at that concern nothing Orchestra tracks. */
  "ignored.irrelevant":
    "events about nothing Orchestra tracks (labels other than agent:*, " +
    "labels on pull requests or closed issues, comments on issues without a task)",
  /** Deliveries of events no capability handles, stored as ignored at ingest. */
  "ignored.unhandled-event": "webhook deliveries of events or actions no capability handles",
  /** Deliveries of a run on one task key that said what the newest says again: processed once, as the newest. */
  "ignored.collapsed":
    "webhook deliveries that said what the next one on their issue or pull request says again " +
    "(a backlog processed once, as its newest)",
  /** A signed body stored before, sent again under a new delivery id: a replay, never processed twice. */
  "ignored.replayed-body": "signed webhook bodies sent again under a new delivery id (replays), not processed again",
} as const;

export type IgnoredName = keyof typeof IGNORED;
export const IGNORED_NAMES = Object.keys(IGNORED) as IgnoredName[];

/** The statement that adds one to `name` (creating it at 1), for a caller's transaction. */
export function countStep(name: IgnoredName, now: Date, by = 1): Step {
  return counterStep(name, now, by);
}

/** The statement that adds `by` to any named counter (creating it), e.g. the hourly GitHub call counts. */
export function counterStep(name: string, now: Date, by = 1): Step {
  return {
    sql:
      `INSERT INTO "Counter" ("name","value","updatedAt") VALUES (?,?,?) ` +
      `ON CONFLICT ("name") DO UPDATE SET "value" = "Counter"."value" + ?, "updatedAt" = ?`,
    args: [name, by, now, by, now],
  };
}

export interface IgnoredCount {
  name: IgnoredName;
  value: number;
  /** When it last moved; null: never. */
  updatedAt: string | null;
  what: string;
}

export class Counters {
  constructor(
    readonly deps: {
      database: Pick<Database, "raw" | "provider">;
      queries: Pick<IgnoredQueries, "ignoredCounters">;
      clock: { now(): Date };
    },
  ) {}

  step(name: IgnoredName): Step {
    return countStep(name, this.deps.clock.now());
  }

  /** Counts one on its own (no decision to join). */
  async bump(name: IgnoredName, by = 1): Promise<void> {
    await atomically(this.deps.database, [countStep(name, this.deps.clock.now(), by)]);
  }

  /** Every known counter, zero when it never moved, in the order of IGNORED. */
  async list(): Promise<IgnoredCount[]> {
    const rows = await this.deps.queries.ignoredCounters();
    const byName = new Map(rows.map((r) => [r.name, r]));
    return IGNORED_NAMES.map((name) => {
      const r = byName.get(name);
      return { name, value: r?.value ?? 0, updatedAt: r ? r.updatedAt.toISOString() : null, what: IGNORED[name] };
    });
  }
}

/**
 * Raises an event about ignored input with its count in the same
 * transaction; when the decision writes nothing (nothing to undo), the count
 * is taken on its own.
 */
export async function raiseCounted(
  tasks: Pick<Tasks, "raise">,
  counters: Counters,
  ref: TaskRef,
  event: TaskEvent,
  name: IgnoredName,
): Promise<RaiseResult> {
  const r = await tasks.raise(ref, event, { steps: [counters.step(name)] });
  if (!r.stepsRan) await counters.bump(name);
  return r;
}

/**
 * The inbox's record, counting new deliveries stored as ignored (no
 * capability handles their event, or their installation is unmanaged or
 * missing) and replayed bodies. A count that cannot be
 * written is logged, never turned into a failed delivery: GitHub would only
 * send it again.
 */
export function countingIgnored<D extends { state?: string; why?: "unhandled" | "unmanaged" }>(
  record: (d: D) => Promise<"new" | "duplicate" | "replay">,
  counters: Pick<Counters, "bump">,
  log: { warn(obj: object, msg: string): void },
): (d: D) => Promise<"new" | "duplicate" | "replay"> {
  return async (d) => {
    const recorded = await record(d);
    const name: IgnoredName | null =
      recorded === "replay"
        ? "ignored.replayed-body"
        : recorded === "new" && d.state === "ignored"
          ? d.why === "unmanaged"
            ? "ignored.unmanaged"
            : "ignored.unhandled-event"
          : null;
    if (name) {
      await counters
        .bump(name)
        .catch((err: unknown) =>
          log.warn(
            { err: err instanceof Error ? err.message : String(err), counter: name },
            "could not count an ignored delivery; the delivery itself is handled",
          ),
        );
    }
    return recorded;
  };
}
