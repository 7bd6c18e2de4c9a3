/**
 * The breaker: when runs in one repository keep ending in the same failure
 * class (`breaker.failures` within `breaker.windowSeconds`), something
 * outside the agents is usually broken, and every further claim there only
 * burns budget. The breaker opens — claims there stop, one comment says which
 * class and which runs — and after `breaker.coolDownSeconds` one probe run
 * may be claimed. The probe ending in the same class opens it again (the
 * cool-down doubles, up to 8×); anything else closes it.
 *
 * The decisions are pure functions below; the breaker's state lives on the
 * repository's row, changed in the same transaction as the comment's effect.
 */
import type { Logger } from "pino";
import type { Database } from "../store/db.js";
import type { ConfigResult, RepoConfig } from "../config/repo.js";
import type { Tasks } from "../apply/tasks.js";
import { select, dateOf, type Step } from "../store/sql.js";
import type { Repo } from "../store/generated/sqlite/client.js";
import { textOf } from "../texts/value.js";
import type { GateQueries } from "./queries.js";
import { neverStarted } from "../machine/model.js";

/** Classes that say a run failed (a PR, a question or publishable work do not). */
export const COUNTED_CLASSES: ReadonlySet<string> = new Set([
  "phantom",
  "debris-empty",
  "debris-half-done",
  "turn-cap-spinning",
  "unknown",
  "infra",
]);

export interface EndedRun {
  id: string;
  taskId: string;
  class: string | null;
  endedAt: Date;
}

/**
 * The class and runs that open the breaker, or null. `since`:
 * runs that ended before do not count (the breaker closed then).
 */
export function tripOf(
  runs: readonly EndedRun[],
  cfg: RepoConfig["breaker"],
  now: Date,
  since: Date | null,
): { klass: string; runs: EndedRun[] } | null {
  const from = Math.max(now.getTime() - cfg.windowSeconds * 1000, since?.getTime() ?? 0);
  const byClass = new Map<string, EndedRun[]>();
  for (const r of runs) {
    if (!r.class || !COUNTED_CLASSES.has(r.class) || r.endedAt.getTime() < from) continue;
    byClass.set(r.class, [...(byClass.get(r.class) ?? []), r]);
  }
  for (const [klass, list] of byClass) {
    if (list.length >= cfg.failures)
      return { klass, runs: [...list].sort((a, b) => a.endedAt.getTime() - b.endedAt.getTime()) };
  }
  return null;
}

export type ProbeOutcome = "wait" | "close" | "reopen" | "again";

/** What the probe run's state means for the breaker. */
export function probeOutcome(
  probe: { state: string; class: string | null } | null,
  breakerClass: string | null,
): ProbeOutcome {
  if (!probe || neverStarted(probe.state)) return "again"; // it never ran: the next claim probes
  if (probe.state === "review") return "close";
  if (probe.class === null) return "wait"; // live, or ended and not classified yet
  return probe.class === breakerClass ? "reopen" : "close";
}

/** The cool-down after the n-th trip in a row: doubling, at most 8× the configured one. */
export function coolDownMs(cfg: RepoConfig["breaker"], trips: number): number {
  return cfg.coolDownSeconds * 1000 * Math.min(8, 2 ** Math.max(0, trips - 1));
}

export interface BreakerDeps {
  queries: Pick<GateQueries, "repo" | "probing" | "probeRun" | "probeAgain" | "closeBreaker" | "reopenBreaker">;
  database: Pick<Database, "raw" | "provider">;
  tasks: Tasks;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  clock: { now(): Date };
  log: Logger;
}

export class Breaker {
  constructor(readonly deps: BreakerDeps) {}

  /** After a run in `repo` was classified: opens the breaker when its runs keep failing the same way. */
  async check(installationId: number, repo: string): Promise<boolean> {
    const { queries, clock } = this.deps;
    const row = await queries.repo(repo);
    if (!row || row.breakerUntil) return false; // not recorded yet, or already open
    const cfg = await this.deps.configs.get(installationId, repo);
    if (!cfg.ok) return false;
    const now = clock.now();
    const since = new Date(now.getTime() - cfg.config.breaker.windowSeconds * 1000);
    const rows = await select(
      this.deps.database,
      `SELECT r."id", r."taskId", r."class", r."endedAt" FROM "Run" r JOIN "Task" t ON t."id" = r."taskId" ` +
        `WHERE t."repo" = ? AND r."endedAt" >= ? AND r."class" IS NOT NULL ORDER BY r."endedAt" DESC LIMIT 500`,
      [repo, since],
    );
    const runs = rows.map((r) => ({
      id: String(r["id"]),
      taskId: String(r["taskId"]),
      class: r["class"] === null ? null : textOf(r["class"]),
      endedAt: dateOf(r["endedAt"])!,
    }));
    const trip = tripOf(runs, cfg.config.breaker, now, row.breakerClosedAt);
    if (!trip) return false;
    const trips = row.breakerTrips + 1;
    const until = new Date(now.getTime() + coolDownMs(cfg.config.breaker, trips));
    const ids = trip.runs.map((r) => r.id);
    const open: Step = {
      sql:
        `UPDATE "Repo" SET "breakerClass" = ?, "breakerWhy" = NULL, "breakerRuns" = ?, "breakerOpenedAt" = ?, ` +
        `"breakerUntil" = ?, ` +
        `"breakerTrips" = ?, "probeRunId" = NULL, "updatedAt" = ? WHERE "id" = ? AND "breakerUntil" IS NULL`,
      args: [trip.klass, JSON.stringify(ids), now, until, trips, now, repo],
      check: (r) => (r.changes === 1 ? null : "the breaker is already open"),
    };
    // The comment goes on the issue of the run that tripped it, in the same transaction.
    const last = trip.runs[trip.runs.length - 1]!;
    const r = await this.deps.tasks.raise(
      { taskId: last.taskId },
      { kind: "breaker-opened", klass: trip.klass, runs: ids, until },
      { steps: [open], attempts: 3 },
    );
    if (!r.stepsRan) return false;
    this.deps.log.warn(
      { repo, class: trip.klass, runs: ids, until: until.toISOString() },
      "breaker open: claims in this repository stop until the cool-down ends, then one probe run",
    );
    return true;
  }

  /** Half-open breakers whose probe has an outcome: closed, opened again, or probing again. */
  async sweep(): Promise<{ closed: number; reopened: number }> {
    const { queries } = this.deps;
    const out = { closed: 0, reopened: 0 };
    const waiting = await queries.probing();
    for (const row of waiting) {
      const probe = await queries.probeRun(row.probeRunId!);
      const outcome = probeOutcome(probe, row.breakerClass);
      if (outcome === "wait") continue;
      const settled = await this.#settle(row, outcome);
      if (settled && outcome === "reopen") out.reopened++;
      if (settled && outcome === "close") out.closed++;
    }
    return out;
  }

  async #settle(row: Repo, outcome: Exclude<ProbeOutcome, "wait">): Promise<boolean> {
    const { queries, clock } = this.deps;
    const now = clock.now();
    if (outcome === "again") return queries.probeAgain(row.id, row.probeRunId, now);
    if (outcome === "close") {
      const closed = await queries.closeBreaker(row.id, row.probeRunId, now);
      if (closed)
        this.deps.log.info(
          { repo: row.id, probe: row.probeRunId },
          "breaker closed: the probe run did not fail the same way; claims go on",
        );
      return closed;
    }
    const cfg = await this.deps.configs.get(row.installationId, row.id);
    const breaker = cfg.ok ? cfg.config.breaker : { failures: 5, windowSeconds: 600, coolDownSeconds: 600 };
    const trips = row.breakerTrips + 1;
    const until = new Date(now.getTime() + coolDownMs(breaker, trips));
    const reopened = await queries.reopenBreaker(row.id, row.probeRunId, trips, until, now);
    if (reopened)
      this.deps.log.warn(
        { repo: row.id, class: row.breakerClass, until: until.toISOString() },
        "breaker open again: the probe run failed the same way",
      );
    return reopened;
  }
}
