/**
 * What the fleet did over time, for the dashboard's charts: runs that ended
 * in each hour by their class, and GitHub calls in each hour.
 */
import type { ViewsQueries } from "./queries.js";
import type { CallHour } from "../metrics/call-hours.js";

export interface HourSeries {
  /** Start of each hour, oldest first. */
  hours: Date[];
  /** One row of counts per series, aligned with `hours`. */
  series: Array<{ name: string; counts: number[] }>;
}

/** A run that ended and has no class yet (in review, or not classified yet). */
export const UNCLASSIFIED = "unclassified";

const HOUR = 3_600_000;

function hourStarts(now: Date, hours: number): Date[] {
  const top = Math.floor(now.getTime() / HOUR) * HOUR;
  return Array.from({ length: hours }, (_, i) => new Date(top - (hours - 1 - i) * HOUR));
}

/** Runs that ended in each of the last `hours` hours, one series per class (most frequent first). */
export async function runsByClass(
  q: Pick<ViewsQueries, "runsEndedSince">,
  now: Date,
  hours: number,
): Promise<HourSeries> {
  const starts = hourStarts(now, hours);
  const runs = await q.runsEndedSince(starts[0]!);
  return {
    hours: starts,
    series: bucket(
      starts,
      runs.map((r) => ({ at: r.endedAt!, name: r.class ?? UNCLASSIFIED })),
    ),
  };
}

/** Counts of named points per hour; series ordered by their total, largest first, then by name. */
export function bucket(starts: Date[], points: Array<{ at: Date; name: string }>): HourSeries["series"] {
  const first = starts[0]?.getTime() ?? 0;
  const byName = new Map<string, number[]>();
  for (const p of points) {
    const i = Math.floor((p.at.getTime() - first) / HOUR);
    if (i < 0 || i >= starts.length) continue;
    const counts = byName.get(p.name) ?? new Array<number>(starts.length).fill(0);
    counts[i]!++;
    byName.set(p.name, counts);
  }
  const total = (c: number[]) => c.reduce((a, b) => a + b, 0);
  return [...byName.entries()]
    .map(([name, counts]) => ({ name, counts }))
    .sort((a, b) => total(b.counts) - total(a.counts) || a.name.localeCompare(b.name));
}

/** The stored hourly call counts as two series. */
export function callSeries(hours: CallHour[]): HourSeries {
  return {
    hours: hours.map((h) => h.hour),
    series: [
      { name: "reads", counts: hours.map((h) => h.reads) },
      { name: "writes", counts: hours.map((h) => h.writes) },
    ],
  };
}
