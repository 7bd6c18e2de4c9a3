/**
 * The sweep (every few seconds and at start-up): expires leases, settles runs
 * still owed a class, and dispatches queued tasks of repositories in dispatch
 * mode. It writes nothing to GitHub itself — effects go through the outbox —
 * and it cannot starve: every item that fails gets its own next-attempt time
 * with backoff, so a broken item (a deleted issue, an installation that is
 * gone) never holds the head of a list, and installations whose token GitHub
 * will not mint are skipped until their pause ends.
 */
import type { Logger } from "pino";
import type { ConfigResult } from "../config/repo.js";
import type { Tasks } from "../apply/tasks.js";
import { GitHubError } from "../github/port.js";
import { errorText as errText } from "../github/errors.js";
import type { Installations } from "../effects/installations.js";
import type { Settler } from "../exits/settle.js";
import type { Claims } from "../claims/claims.js";
import type { Blockers } from "../blockers/blockers.js";
import type { Breaker } from "../gates/breaker.js";
import type { Questions } from "../human/conditions.js";
import type { ReconcileCounts } from "../reconcile/drift.js";
import type { DeliveriesReport } from "../reconcile/deliveries-model.js";
import { totalOf, type Retention } from "../retention/retention.js";
import type { SweepQueries } from "./queries.js";

export interface SweepReport {
  expired: number;
  classified: number;
  dispatched: number;
  errors: number;
  /** Installations skipped because they are paused or rate limited. */
  held: number;
  /** Tasks whose blockers were read. */
  blockersRead: number;
  /** Breakers closed or opened again after their probe. */
  breakers: number;
  /** Questions expired, or answered by a condition that came true. */
  questions: number;
  /** Differences reconcile repaired (when it ran). */
  reconciled?: number;
  /** Missed webhook deliveries GitHub was asked to deliver again. */
  redelivered: number;
  /** Old rows retention deleted (it runs at most once an interval). */
  pruned: number;
}

export interface SweeperDeps {
  queries: SweepQueries;
  tasks: Tasks;
  settler: Settler;
  claims: Pick<Claims, "next">;
  blockers: Pick<Blockers, "sweep">;
  breaker: Pick<Breaker, "sweep">;
  questions: Pick<Questions, "sweep">;
  /** Drift repair: compares GitHub's agent labels with the tasks when due (optional). */
  reconcile?: { sweep(held: ReadonlySet<number>): Promise<ReconcileCounts | null> };
  /**
   * Missed deliveries (src/reconcile/deliveries.ts), swept at most every `deliveriesEveryMs` (default 60 s) of `clock`.
   */
  deliveries?: { sweep(): Promise<DeliveriesReport> };
  deliveriesEveryMs?: number;
  /** Retention: prunes old rows when due (optional). */
  retention?: Pick<Retention, "sweep">;
  installations: Installations;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  clock: { now(): Date };
  log: Logger;
  /** Told when a worker's lease expired without an exit (workers that keep dying are paused). */
  leaseLost?: (workerId: string) => Promise<unknown>;
  /** Told when a sweep, or the reconcile or missed-deliveries part of it, finished (metrics). */
  onSuccess?: (kind: "sweep" | "reconcile" | "deliveries", at: Date, report?: SweepReport) => void;
}

/** Items per sweep and list: a sweep is bounded; what is left waits for the next one. */
const BATCH = { expired: 50, owed: 20, dispatch: 25 };

export class Sweeper {
  #deliveriesAt: number | undefined;
  constructor(readonly deps: SweeperDeps) {}

  async sweep(): Promise<SweepReport> {
    const { queries, clock } = this.deps;
    const now = clock.now();
    const held = await this.deps.installations.held();
    const notHeld = held.size ? { installationId: { notIn: [...held.keys()] } } : {};
    const out: SweepReport = {
      expired: 0,
      classified: 0,
      dispatched: 0,
      errors: 0,
      held: held.size,
      blockersRead: 0,
      breakers: 0,
      questions: 0,
      redelivered: 0,
      pruned: 0,
    };

    const expired = await queries.expiredLeases(notHeld, now, BATCH.expired);
    for (const task of expired) {
      try {
        const r = await this.deps.tasks.raise(
          { task },
          { kind: "lease-expired", runId: task.runId!, leaseEpoch: task.leaseEpoch! },
        );
        if (r.outcome === "applied") {
          out.expired++;
          if (task.workerId)
            await this.deps
              .leaseLost?.(task.workerId)
              .catch((err: unknown) =>
                this.deps.log.warn(
                  { worker: task.workerId, err: errText(err) },
                  "sweep: could not count the lost lease against its worker",
                ),
              );
        }
      } catch (err) {
        await this.#failed(out, task.installationId, err);
        this.deps.log.warn({ task: task.id, err: errText(err) }, "sweep: lease expiry failed; next sweep retries");
      }
    }

    // Runs that ended without a PR and are still owed a class: their tasks are claimed with no lease.
    const settling = await queries.settling(notHeld);
    const installationOf = new Map(settling.map((t) => [t.runId!, t.installationId]));
    const owed = await queries.owedRuns(
      settling.map((t) => t.runId!),
      now,
      BATCH.owed,
    );
    for (const run of owed) {
      try {
        if (await this.deps.settler.settle(run.id)) out.classified++;
      } catch (err) {
        await this.#failed(out, installationOf.get(run.id), err);
        this.deps.log.warn({ run: run.id, err: errText(err) }, "sweep: classification failed; next sweep retries");
      }
    }

    const blockers = await this.deps.blockers.sweep(notHeld);
    out.blockersRead = blockers.read;
    out.errors += blockers.errors;
    const asked = await this.deps.questions.sweep().catch((err: unknown) => {
      out.errors++;
      this.deps.log.warn({ err: errText(err) }, "sweep: questions could not be checked; the next sweep retries");
      return { expired: 0, met: 0 };
    });
    out.questions = asked.expired + asked.met;
    const breaker = await this.deps.breaker.sweep();
    out.breakers = breaker.closed + breaker.reopened;
    const reconciled = await this.deps.reconcile?.sweep(new Set(held.keys())).catch((err: unknown) => {
      out.errors++;
      this.deps.log.warn({ err: errText(err) }, "sweep: reconcile failed; it runs again after its interval");
      return null;
    });
    if (reconciled) {
      this.deps.onSuccess?.("reconcile", clock.now());
      out.reconciled =
        reconciled.queued +
        reconciled.untrusted +
        reconciled.closed +
        reconciled.cleared +
        reconciled.restored +
        reconciled.superseded;
      out.errors += reconciled.errors;
    }
    out.dispatched = await this.#dispatch(notHeld, out);
    await this.#deliveries(now, out);
    const pruned = await this.deps.retention?.sweep().catch((err: unknown) => {
      out.errors++;
      this.deps.log.warn(
        { err: errText(err) },
        "sweep: retention could not prune old rows; it tries again after its interval",
      );
      return null;
    });
    out.pruned = pruned ? totalOf(pruned.counts) : 0;
    this.deps.onSuccess?.("sweep", clock.now(), out);
    return out;
  }

  /**
   * The configuration of every repository with queued work is read (from
   * the cache, or GitHub once it is old), which keeps the gates the claim
   * query reads current; then queued tasks of repositories in dispatch mode
   * are claimed for a workflow through the same query workers claim with.
   */
  async #dispatch(notHeld: object, out: SweepReport): Promise<number> {
    const repos = await this.deps.queries.queuedRepos(notHeld);
    let dispatching = false;
    for (const r of repos) {
      const cfg = await this.deps.configs.get(r.installationId, r.repo).catch(async (err: unknown) => {
        await this.#failed(out, r.installationId, err);
        return null;
      });
      if (cfg?.ok && cfg.config.dispatch) dispatching = true;
    }
    if (!dispatching) return 0;
    let dispatched = 0;
    for (let i = 0; i < BATCH.dispatch; i++) {
      const won = await this.deps.claims.next("dispatch", null, null).catch((err: unknown) => {
        out.errors++;
        this.deps.log.warn({ err: errText(err) }, "sweep: dispatch claim failed; the next sweep retries");
        return null;
      });
      if (!won) break;
      dispatched++;
    }
    return dispatched;
  }

  /** Missed deliveries, at most every `deliveriesEveryMs` of the clock: each sweep reads GitHub's delivery log. */
  async #deliveries(now: Date, out: SweepReport): Promise<void> {
    const { deliveries, deliveriesEveryMs = 60_000 } = this.deps;
    if (!deliveries || (this.#deliveriesAt !== undefined && now.getTime() - this.#deliveriesAt < deliveriesEveryMs))
      return;
    this.#deliveriesAt = now.getTime();
    let failed = false;
    const r = await deliveries.sweep().catch((err: unknown) => {
      failed = true;
      this.deps.log.warn(
        { err: errText(err) },
        "sweep: missed deliveries could not be checked; the next sweep retries",
      );
      return { errors: 1, redelivered: 0 };
    });
    if (!failed) this.deps.onSuccess?.("deliveries", this.deps.clock.now());
    out.errors += r.errors;
    out.redelivered = r.redelivered;
  }

  /** Counts a failed item; a token GitHub will not mint pauses the whole installation. */
  async #failed(out: SweepReport, installationId: number | undefined, err: unknown): Promise<void> {
    out.errors++;
    if (installationId !== undefined && err instanceof GitHubError && err.tokenFailure) {
      const until = await this.deps.installations.tokenFailed(installationId, err.message);
      this.deps.log.warn(
        { installationId, until: until.toISOString(), err: err.message },
        "sweep: GitHub would not mint the installation's token; it is skipped until then (is the App still installed?)",
      );
    }
  }
}

/** Runs the sweep now and then every `everyMs`, never two at once. `settled` waits for a sweep under way. */
export function startSweeper(
  sweeper: Sweeper,
  log: Logger,
  everyMs: number,
): { stop(): Promise<void>; settled(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = sweeper
      .sweep()
      .then((r) => {
        if (r.expired || r.dispatched || r.errors || r.classified || r.blockersRead || r.breakers || r.redelivered)
          log.info(r, "sweep");
      })
      .catch((err: unknown) => log.error({ err: errText(err) }, "sweep failed; next one retries"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    async settled() {
      await running;
    },
  };
}
