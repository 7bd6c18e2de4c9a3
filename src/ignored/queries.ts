/** What the ignored counters read: the `ignored.*` rows of the counter table. */
import type { Db } from "../store/db.js";
import type { Counter } from "../store/generated/sqlite/client.js";

export interface IgnoredQueries {
  /** Every counter named `ignored.<reason>`. */
  ignoredCounters(): Promise<Counter[]>;
}

export function ignoredQueries(db: Db): IgnoredQueries {
  return {
    ignoredCounters: () => db.counter.findMany({ where: { name: { startsWith: "ignored." } } }),
  };
}
