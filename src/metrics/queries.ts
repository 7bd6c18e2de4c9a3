/**
 * What the metrics room reads and deletes: the tables the gauges count
 * (collector.ts) and the hourly GitHub call counters (call-hours.ts).
 */
import type { Db } from "../store/db.js";
import type { Counter } from "../store/generated/sqlite/client.js";

type Counted<K extends string> = { [key in K]: string } & { _count: { _all: number } };
type CountedOrNull<K extends string> = { [key in K]: string | null } & { _count: { _all: number } };

export interface MetricsQueries {
  deliveriesByState(): Promise<Array<Counted<"state">>>;
  /** Pending deliveries that failed at least once. */
  retryingDeliveries(): Promise<number>;
  oldestPendingDelivery(): Promise<{ receivedAt: Date } | null>;
  ignoredCounters(): Promise<Array<{ name: string; value: number }>>;
  tasksByStateAndRepo(): Promise<Array<Counted<"state" | "repo">>>;
  /** Runs with a class, by class. */
  runsByClass(): Promise<Array<CountedOrNull<"class">>>;
  /** Runs with a recovery, by recovery. */
  runsByRecovery(): Promise<Array<CountedOrNull<"recovery">>>;
  effectsByStateAndKind(): Promise<Array<Counted<"state" | "kind">>>;
  /** Deletes the call counters (names starting with `prefix`) that sort before `before`. */
  deleteCallCountersBefore(prefix: string, before: string): Promise<void>;
  /** The call counters (names starting with `prefix`) that sort from `first` on. */
  callCountersFrom(prefix: string, first: string): Promise<Counter[]>;
}

export function metricsQueries(db: Db): MetricsQueries {
  // The groupBy rows are read into a constant before they are returned: given
  // the method's return type as context, Prisma's groupBy types its arguments wrong.
  return {
    deliveriesByState: async () => {
      const rows = await db.delivery.groupBy({ by: ["state"], _count: { _all: true } });
      return rows;
    },
    retryingDeliveries: () => db.delivery.count({ where: { state: "pending", attempts: { gt: 0 } } }),
    oldestPendingDelivery: () =>
      db.delivery.findFirst({ where: { state: "pending" }, orderBy: { seq: "asc" }, select: { receivedAt: true } }),
    ignoredCounters: () =>
      db.counter.findMany({ where: { name: { startsWith: "ignored." } }, select: { name: true, value: true } }),
    tasksByStateAndRepo: async () => {
      const rows = await db.task.groupBy({ by: ["state", "repo"], _count: { _all: true } });
      return rows;
    },
    runsByClass: async () => {
      const rows = await db.run.groupBy({ by: ["class"], where: { class: { not: null } }, _count: { _all: true } });
      return rows;
    },
    runsByRecovery: async () => {
      const rows = await db.run.groupBy({
        by: ["recovery"],
        where: { recovery: { not: null } },
        _count: { _all: true },
      });
      return rows;
    },
    effectsByStateAndKind: async () => {
      const rows = await db.effect.groupBy({ by: ["state", "kind"], _count: { _all: true } });
      return rows;
    },
    deleteCallCountersBefore: async (prefix, before) => {
      await db.counter.deleteMany({ where: { name: { startsWith: prefix, lt: before } } });
    },
    callCountersFrom: (prefix, first) => db.counter.findMany({ where: { name: { startsWith: prefix, gte: first } } }),
  };
}
