/**
 * Gauges computed from the tables when Prometheus scrapes: deliveries, tasks,
 * runs, recoveries and effects by state, the ignored-input counters, and the
 * inbox lag. One read of the database serves every scrape for a few seconds
 * (and scrapes arriving while it runs share it), so a scrape storm is not a
 * query storm.
 */
import { Gauge, type Registry } from "prom-client";
import type { MetricsQueries } from "./queries.js";

/** The reads the gauges are computed from. */
export type GaugeQueries = Pick<
  MetricsQueries,
  | "deliveriesByState"
  | "retryingDeliveries"
  | "oldestPendingDelivery"
  | "ignoredCounters"
  | "tasksByStateAndRepo"
  | "runsByClass"
  | "runsByRecovery"
  | "effectsByStateAndKind"
>;

/** How long one read of the tables answers for. */
export const SCRAPE_CACHE_MS = 5_000;

type GaugeKey = Exclude<keyof Snapshot, "inboxLagSeconds">;

type Rows = Array<{ labels: Record<string, string>; value: number }>;

export interface Snapshot {
  deliveries: Rows;
  ignored: Rows;
  inboxLagSeconds: number;
  tasks: Rows;
  runs: Rows;
  recoveries: Rows;
  effects: Rows;
}

/** The pure part: the inbox's lag is the age of its oldest pending delivery (0 when none waits). */
export function lagSeconds(oldestPending: Date | null, now: Date): number {
  return oldestPending ? Math.max(0, (now.getTime() - oldestPending.getTime()) / 1000) : 0;
}

/** Counter rows named `ignored.<reason>` are the ignored inputs; others are not exported here. */
export function ignoredRows(counters: Array<{ name: string; value: number }>): Rows {
  return counters
    .filter((c) => c.name.startsWith("ignored."))
    .map((c) => ({ labels: { reason: c.name.slice("ignored.".length) }, value: c.value }));
}

async function read(q: GaugeQueries, now: Date): Promise<Snapshot> {
  const [deliveries, retrying, oldest, counters, tasks, runs, recoveries, effects] = await Promise.all([
    q.deliveriesByState(),
    q.retryingDeliveries(),
    q.oldestPendingDelivery(),
    q.ignoredCounters(),
    q.tasksByStateAndRepo(),
    q.runsByClass(),
    q.runsByRecovery(),
    q.effectsByStateAndKind(),
  ]);
  return {
    deliveries: [
      ...deliveries.map((d) => ({ labels: { state: d.state }, value: d._count._all })),
      { labels: { state: "retrying" }, value: retrying },
    ],
    ignored: ignoredRows(counters),
    inboxLagSeconds: lagSeconds(oldest?.receivedAt ?? null, now),
    tasks: tasks.map((t) => ({ labels: { state: t.state, repo: t.repo }, value: t._count._all })),
    runs: runs.map((r) => ({ labels: { class: r.class! }, value: r._count._all })),
    recoveries: recoveries.map((r) => ({ labels: { action: r.recovery! }, value: r._count._all })),
    effects: effects.map((e) => ({ labels: { state: e.state, kind: e.kind }, value: e._count._all })),
  };
}

export class TableGauges {
  readonly #gauges: Record<GaugeKey, Gauge>;
  readonly #lag: Gauge;
  #at = -Infinity;
  #running: Promise<void> | null = null;

  constructor(
    registry: Registry,
    private readonly queries: GaugeQueries,
    private readonly clock: { now(): Date },
    private readonly cacheMs = SCRAPE_CACHE_MS,
  ) {
    const gauge = (name: string, help: string, labelNames: string[]) =>
      new Gauge({ name, help, labelNames, registers: [registry] });
    this.#gauges = {
      deliveries: gauge(
        "orchestra_deliveries",
        "Inbox deliveries by state; retrying counts pending deliveries that failed at least once",
        ["state"],
      ),
      ignored: gauge("orchestra_ignored_inputs", "Inputs deliberately left alone, by reason (the ignored counters)", [
        "reason",
      ]),
      tasks: gauge("orchestra_tasks", "Tasks by state and repository", ["state", "repo"]),
      runs: gauge("orchestra_runs_by_class", "Classified runs by class", ["class"]),
      recoveries: gauge("orchestra_recoveries", "Runs by the recovery their class named", ["action"]),
      effects: gauge("orchestra_effects", "Outbox effects by state and kind", ["state", "kind"]),
    };
    this.#lag = gauge("orchestra_inbox_lag_seconds", "Age of the oldest pending delivery (0 when none waits)", []);
  }

  /** Sets the gauges from the tables, unless they were read less than `cacheMs` ago. */
  async refresh(): Promise<void> {
    const now = this.clock.now().getTime();
    if (now - this.#at < this.cacheMs && now >= this.#at) return;
    this.#running ??= read(this.queries, this.clock.now())
      .then((s) => {
        for (const key of Object.keys(this.#gauges) as GaugeKey[]) {
          const g = this.#gauges[key];
          g.reset();
          for (const row of s[key]) g.set(row.labels, row.value);
        }
        this.#lag.set(s.inboxLagSeconds);
        this.#at = this.clock.now().getTime();
      })
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }
}
