// bench:ingest --hot-key results: progress lines, each round's line, the
// drain rates by backlog length, and the targets with their verdicts.
import type { DrainSpan } from "./backlog.js";
import type { HotResult, HotRound } from "./hot.js";
import { fmt, READY_TARGET_MS } from "./report.js";

/** The median drain rate over the longer half of the backlogs measured, against the shorter half's. */
export const DRAIN_FLAT_TARGET = 0.75;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export function drainLine(label: string, what: string, from: number, to: number, d: DrainSpan | null): string {
  if (from === 0) return `[${label}] ${what.padEnd(10)} no backlog: kept up`;
  const rate = d ? `${fmt(d.perS, 0)}/s over ${fmt(d.seconds, 1)} s` : "-";
  return `[${label}] ${what.padEnd(10)} backlog ${from} -> ${to}, drained ${rate}`;
}

export function roundLine(r: HotRound): string {
  const s = r.subject.result;
  const b = r.baseline.result;
  return (
    `round ${r.round}: ingest ${fmt(s.throughputPerS, 0)} vs ${fmt(b.throughputPerS, 0)}/s = ${fmt(r.ratio, 2)}x;` +
    ` ack p99 ${fmt(s.p99Ms, 1)} vs ${fmt(b.p99Ms, 1)} ms; ${r.closedDuringIngest} processed during ingest;` +
    ` backlog ${r.backlogAfterIngest} after ingest,` +
    ` ${r.backlogAtEnd} at the round's end; drain ${r.drain ? `${fmt(r.drain.perS, 0)}/s` : "-"}`
  );
}

/** Every drain rate measured, round windows and final drain, with the backlog it was measured at. */
export function drainPoints(h: HotResult): { backlog: number; perS: number; seconds: number; where: string }[] {
  const points = h.rounds.flatMap((r) =>
    r.drain ? [{ ...r.drain, where: `round ${r.round}` }] : ([] as (DrainSpan & { where: string })[]),
  );
  h.finalDrain.spans.forEach((s, i) => points.push({ ...s, where: `final ${i + 1}` }));
  // A span of under a second holds too few 250 ms samples to give a rate.
  return points
    .filter((p) => p.seconds >= 1 && p.fromOpen > 0)
    .map((p) => ({
      backlog: Math.round((p.fromOpen + p.toOpen) / 2),
      perS: p.perS,
      seconds: p.seconds,
      where: p.where,
    }));
}

export interface HotVerdicts {
  ratios: number[];
  ratioPass: boolean;
  /** Median drain rate at the longer half of the backlogs over the shorter half's; null when too few. */
  drainFlatness: number | null;
  drainPass: boolean;
  readyMs: number;
  readyPass: boolean;
  storePass: boolean;
}

export function hotVerdicts(h: HotResult): HotVerdicts {
  const ratios = h.rounds.map((r) => r.ratio);
  const points = drainPoints(h);
  let drainFlatness: number | null = null;
  if (points.length >= 2) {
    // Halves, not the two ends: one short span's rate is too noisy to judge on.
    const byBacklog = [...points].sort((a, b) => a.backlog - b.backlog).map((p) => p.perS);
    const half = Math.floor(byBacklog.length / 2);
    drainFlatness = median(byBacklog.slice(-half)) / median(byBacklog.slice(0, half));
  }
  const anyBacklog = h.rounds.some((r) => r.backlogAfterIngest > 0);
  return {
    ratios,
    ratioPass: ratios.length > 0 && ratios.every((r) => r >= 1),
    drainFlatness,
    // No backlog ever formed: there was nothing to drain, and nothing waited.
    drainPass: anyBacklog ? drainFlatness !== null && drainFlatness >= DRAIN_FLAT_TARGET : true,
    readyMs: h.readyMs.orchestra,
    readyPass: h.readyMs.orchestra <= READY_TARGET_MS,
    storePass: h.store !== null && !h.store.error && h.store.ackedMissing === 0,
  };
}

/** One line per figure: each round's values side by side, then the targets' verdicts. */
export function hotLines(h: HotResult, v: HotVerdicts, cfg: { count: number; drainS: number }): string[] {
  const verdict = (ok: boolean): string => (ok ? "PASS" : "FAIL");
  const each = (f: (r: HotRound) => string): string => h.rounds.map(f).join(", ");
  const out = [`hot key ${h.shape}: ${h.rounds.length} rounds of ${cfg.count}, ${h.describe}`];
  out.push(
    `  ingest ratio to bare Probot per round (>= 1.00x):  ${each((r) => `${fmt(r.ratio, 2)}x`)}  ${verdict(v.ratioPass)}`,
  );
  out.push(
    `  ingest per round (orchestra / bare):  ${each((r) => `${fmt(r.subject.result.throughputPerS, 0)}/${fmt(r.baseline.result.throughputPerS, 0)}`)} deliveries/s`,
  );
  out.push(
    `  ack p99 per round (orchestra / bare):  ${each((r) => `${fmt(r.subject.result.p99Ms, 1)}/${fmt(r.baseline.result.p99Ms, 1)}`)} ms`,
  );
  const cpu = (x: number | null): string => (x === null ? "-" : fmt(x, 2));
  out.push(
    `  server CPU ms/delivery per round (orchestra / bare):  ${each((r) => `${cpu(r.subject.serverCpuMsPerDelivery)}/${cpu(r.baseline.serverCpuMsPerDelivery)}`)}`,
  );
  out.push(
    `  pending backlog per round (after its ingest / after ${cfg.drainS} s of drain):  ${each((r) => `${r.backlogAfterIngest}/${r.backlogAtEnd}`)}`,
  );
  const points = [...drainPoints(h)].sort((a, b) => b.backlog - a.backlog);
  const flat =
    v.drainFlatness === null
      ? h.rounds.some((r) => r.backlogAfterIngest > 0)
        ? "too few measurements"
        : "no backlog formed"
      : `longer/shorter half ${fmt(v.drainFlatness, 2)}x`;
  out.push(
    `  drain rate by backlog (longer/shorter half >= ${DRAIN_FLAT_TARGET}):  ` +
      `${points.map((p) => `${fmt(p.perS, 0)}/s at ~${p.backlog}`).join(", ") || "-"}; ${flat}  ${verdict(v.drainPass)}`,
  );
  const left = h.finalDrain.samples[h.finalDrain.samples.length - 1];
  out.push(
    `  final drain:  ${h.finalDrain.empty ? "empty" : `${left?.open ?? "?"} still open`} after ${fmt(left?.atS ?? NaN, 1)} s`,
  );
  out.push(
    `  start to ready (<= ${READY_TARGET_MS} ms):  ${v.readyMs} ms  ${verdict(v.readyPass)}  (bare ${h.readyMs.bare} ms)`,
  );
  out.push(
    `  RSS:  ${h.idleRssMb.orchestra ?? "-"} MB when ready, ${h.peakRssMb.orchestra ?? "-"} MB peak` +
      `  (bare ${h.idleRssMb.bare ?? "-"} / ${h.peakRssMb.bare ?? "-"} MB; the 150 MB target is at 500/s, without --hot)`,
  );
  out.push(
    `  every acked delivery stored (checked after SIGKILL):  ${h.store?.storedRows ?? "-"} rows / ` +
      `${h.store?.acked ?? "-"} acked, ${h.store?.ackedMissing ?? "-"} missing  ${verdict(v.storePass)}`,
  );
  return out;
}
