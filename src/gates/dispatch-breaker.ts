/**
 * The breaker, for dispatches GitHub refuses for the whole repository (no
 * such workflow, no `workflow_dispatch` trigger, Actions disabled, no
 * permission: outcomes/dispatch-refusal.ts). Every task there would be
 * refused the same way, so instead of each one backing off with a comment of
 * its own, the first refusal opens the repository's breaker — with one
 * comment, on its issue — and every queued task there waits behind it
 * (`waitingFor: breaker`), charged nothing. After the cool-down one task is
 * dispatched as the probe: GitHub accepting it closes the breaker at once;
 * refusing it again opens it with a doubled cool-down, silently.
 *
 * The breaker's row changes in the same transaction as the refused task.
 */
import type { Logger } from "pino";
import type { ConfigResult } from "../config/repo.js";
import type { RaiseResult, Tasks } from "../apply/tasks.js";
import type { EventOf } from "../machine/events.js";
import type { Step } from "../store/sql.js";
import { coolDownMs } from "./breaker.js";
import type { GateQueries } from "./queries.js";

/** The breaker class of a repository whose dispatches GitHub refuses. */
export const DISPATCH_REFUSED = "dispatch-refused";

const DEFAULT_BREAKER = { failures: 5, windowSeconds: 600, coolDownSeconds: 600 };

export interface DispatchBreakerDeps {
  queries: Pick<GateQueries, "repo" | "closeBreaker">;
  tasks: Pick<Tasks, "raise">;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  clock: { now(): Date };
  log: Pick<Logger, "info" | "warn">;
}

export class DispatchBreaker {
  constructor(readonly deps: DispatchBreakerDeps) {}

  /**
   * Raises a refusal for the whole repository, opening its breaker in the
   * same transaction (or opening it again when the refused run was its
   * probe). `steps`: the caller's own (finishing the effect). A repository
   * with no row of gates (never read) cannot hold its tasks: its refusal is
   * the task's, backing off with a comment.
   */
  async refused(
    where: { taskId: string; installationId: number; repo: string },
    event: EventOf<"dispatch-refused">,
    steps: Step[],
  ): Promise<RaiseResult> {
    const { queries, tasks, clock } = this.deps;
    for (let i = 0; ; i++) {
      const row = await queries.repo(where.repo);
      if (!row) return tasks.raise({ taskId: where.taskId }, { ...event, scope: "task" }, { steps });
      const probe = row.probeRunId === event.runId;
      if (row.breakerUntil && !probe) {
        // Already open: this task only goes back to wait behind it.
        const until = row.breakerUntil;
        return tasks.raise({ taskId: where.taskId }, { ...event, breaker: { opened: false, until } }, { steps });
      }
      const cfg = await this.deps.configs.get(where.installationId, where.repo);
      const now = clock.now();
      const trips = row.breakerTrips + 1;
      const until = new Date(now.getTime() + coolDownMs(cfg.ok ? cfg.config.breaker : DEFAULT_BREAKER, trips));
      const open: Step = {
        sql:
          `UPDATE "Repo" SET "breakerClass" = ?, "breakerWhy" = ?, "breakerRuns" = ?, "breakerOpenedAt" = ?, ` +
          `"breakerUntil" = ?, "breakerTrips" = ?, "probeRunId" = NULL, "updatedAt" = ? ` +
          `WHERE "id" = ? AND "breakerTrips" = ? AND ("breakerUntil" IS NULL OR "probeRunId" = ?)`,
        args: [
          DISPATCH_REFUSED,
          event.why,
          JSON.stringify([event.runId]),
          now,
          until,
          trips,
          now,
          where.repo,
          row.breakerTrips,
          event.runId,
        ],
        check: (r) => (r.changes === 1 ? null : "the breaker changed meanwhile"),
      };
      // A breaker that opens for this reason says so once; its probe refused again says nothing new.
      const opened = row.breakerClass !== DISPATCH_REFUSED;
      const r = await tasks.raise(
        { taskId: where.taskId },
        { ...event, breaker: { opened, until } },
        { steps: [...steps, open], attempts: 3 },
      );
      if (r.outcome === "refused" && r.reason === "rolled-back" && i < 3) continue;
      if (r.stepsRan)
        this.deps.log.warn(
          { repo: where.repo, until: until.toISOString(), why: event.why, probe },
          "breaker open: GitHub refuses workflow dispatches in this repository; its tasks wait, one probe after the " +
            "cool-down",
        );
      return r;
    }
  }

  /** GitHub accepted a dispatch: when it was the probe of a dispatch breaker, the breaker closes. */
  async accepted(repo: string, runId: string): Promise<boolean> {
    const row = await this.deps.queries.repo(repo);
    if (!row || row.probeRunId !== runId || row.breakerClass !== DISPATCH_REFUSED) return false;
    const closed = await this.deps.queries.closeBreaker(repo, runId, this.deps.clock.now());
    if (closed)
      this.deps.log.info(
        { repo, probe: runId },
        "breaker closed: GitHub accepted the probe's dispatch; dispatching goes on",
      );
    return closed;
  }
}
