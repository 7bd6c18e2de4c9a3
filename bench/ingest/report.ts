// bench:ingest results: per-session records, progress lines, medians over
// rounds, each round's own ratio, and the table.
import type { Config, Kind } from "./config.js";
import type { OpenLoopResult, PhaseResult } from "./load.js";
import type { ProfileSummary } from "./profile.js";
import type { Settle } from "./targets.js";
import type { StoreCheck } from "./verify.js";

export interface PhaseWithCost<T extends PhaseResult> {
  result: T;
  serverCpuMs: number | null;
  clientCpuMs: number;
}

export interface SessionResult {
  label: string;
  kind: Kind;
  round: number;
  readyMs: number;
  warmup: PhaseResult;
  settleAfterWarmup: Settle;
  open: PhaseWithCost<OpenLoopResult>;
  settleAfterOpen: Settle;
  saturation: PhaseWithCost<PhaseResult>;
  serverPeakRssMb: number | null;
  /** Resident memory once ready, before any delivery. */
  serverIdleRssMb: number | null;
  /** Resident memory under the open loop: the highest sample of its second half. */
  serverSteadyRssMb: number | null;
  profile: ProfileSummary | null;
  serverOutputLines: number;
  serverOutputTail: string;
  store: StoreCheck | null;
}

/** Start to ready, for every target of bench:ingest. */
export const READY_TARGET_MS = 2000;
/** Resident memory under the open loop's rate (500/s by default). */
export const RSS_TARGET_MB = 150;

export const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : "-");

export function phaseLine(label: string, phase: string, r: PhaseResult, extra = ""): string {
  const problems = r.non2xx + r.failed > 0 ? `  non-2xx ${r.non2xx} failed ${r.failed}` : "";
  const cut = r.timedOut ? "  DEADLINE HIT" : "";
  return (
    `[${label}] ${phase.padEnd(10)} ${String(r.acked).padStart(6)}/${r.sent} acked in ${fmt(r.elapsedS, 2)} s` +
    `  ${fmt(r.throughputPerS, 0)}/s  p50 ${fmt(r.p50Ms, 2)} ms  p99 ${fmt(r.p99Ms, 2)} ms  max ${fmt(r.maxMs, 1)} ms` +
    extra +
    problems +
    cut
  );
}

export function settleLine(label: string, s: Settle): string {
  const cpu = s.lastCpuShare === null ? "" : ` (server at ${Math.round(s.lastCpuShare * 100)}% of a CPU)`;
  return `[${label}] settle     ${s.quiet ? "idle" : "STILL BUSY"} after ${fmt(s.seconds, 1)} s${cpu}`;
}

function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

export interface Summary {
  label: string;
  kind: Kind;
  saturation: {
    throughputPerS: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    bad: number;
    serverCpuMsPerDelivery: number | null;
  };
  open: {
    achievedPerS: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    bad: number;
    serverCpuMsPerDelivery: number | null;
    /** Seconds after the last ack until the server went idle (null: it never did). */
    idleAfterS: number | null;
  };
  peakRssMb: number | null;
  idleRssMb: number | null;
  steadyRssMb: number | null;
  readyMs: number;
}

export function summarise(sessions: SessionResult[]): Summary {
  const first = sessions[0]!;
  const perDelivery = (p: PhaseWithCost<PhaseResult>): number =>
    p.serverCpuMs === null || p.result.sent === 0 ? NaN : p.serverCpuMs / p.result.sent;
  const orNull = (n: number): number | null => (Number.isFinite(n) ? n : null);
  const m = (f: (s: SessionResult) => number): number => median(sessions.map(f));
  // Medians of one phase's latency, errors summed, cost per delivery.
  const phase = (pick: (s: SessionResult) => PhaseWithCost<PhaseResult>) => ({
    p50Ms: m((s) => pick(s).result.p50Ms),
    p99Ms: m((s) => pick(s).result.p99Ms),
    maxMs: m((s) => pick(s).result.maxMs),
    bad: sessions.reduce((n, s) => n + pick(s).result.non2xx + pick(s).result.failed, 0),
    serverCpuMsPerDelivery: orNull(m((s) => perDelivery(pick(s)))),
  });
  return {
    label: first.label,
    kind: first.kind,
    saturation: {
      throughputPerS: m((s) => s.saturation.result.throughputPerS),
      ...phase((s) => s.saturation),
    },
    open: {
      achievedPerS: m((s) => s.open.result.throughputPerS),
      ...phase((s) => s.open),
      idleAfterS: sessions.every((s) => s.settleAfterOpen.quiet) ? m((s) => s.settleAfterOpen.seconds) : null,
    },
    peakRssMb: orNull(m((s) => s.serverPeakRssMb ?? NaN)),
    idleRssMb: orNull(m((s) => s.serverIdleRssMb ?? NaN)),
    steadyRssMb: orNull(m((s) => s.serverSteadyRssMb ?? NaN)),
    readyMs: m((s) => s.readyMs),
  };
}

export function table(cfg: Config, a: Summary, b: Summary): string {
  const rows: [string, string, string, string][] = [];
  const ratio = (x: number, y: number): string => (y > 0 && Number.isFinite(x) ? `${(x / y).toFixed(2)}x` : "-");
  const cpu = (n: number | null): string => (n === null ? "-" : n.toFixed(3));
  const add = (name: string, x: number | string, y: number | string, r = "", digits = 1): void => {
    const cell = (v: number | string): string => (typeof v === "number" ? fmt(v, digits) : v);
    rows.push([name, cell(x), cell(y), r]);
  };
  rows.push([`closed loop: ${cfg.count} deliveries, concurrency ${cfg.concurrency}`, "", "", ""]);
  add(
    "  throughput (acked/s)",
    a.saturation.throughputPerS,
    b.saturation.throughputPerS,
    ratio(a.saturation.throughputPerS, b.saturation.throughputPerS),
    0,
  );
  add(
    "  ack latency p50 (ms)",
    a.saturation.p50Ms,
    b.saturation.p50Ms,
    ratio(a.saturation.p50Ms, b.saturation.p50Ms),
    2,
  );
  add(
    "  ack latency p99 (ms)",
    a.saturation.p99Ms,
    b.saturation.p99Ms,
    ratio(a.saturation.p99Ms, b.saturation.p99Ms),
    2,
  );
  add("  ack latency max (ms)", a.saturation.maxMs, b.saturation.maxMs, "", 1);
  add("  non-2xx + failed", String(a.saturation.bad), String(b.saturation.bad));
  add("  server CPU ms/delivery", cpu(a.saturation.serverCpuMsPerDelivery), cpu(b.saturation.serverCpuMsPerDelivery));
  rows.push([`open loop: ${cfg.rate}/s for ${cfg.seconds} s`, "", "", ""]);
  add("  achieved (acked/s)", a.open.achievedPerS, b.open.achievedPerS, "", 0);
  add("  ack latency p50 (ms)", a.open.p50Ms, b.open.p50Ms, ratio(a.open.p50Ms, b.open.p50Ms), 2);
  add("  ack latency p99 (ms)", a.open.p99Ms, b.open.p99Ms, ratio(a.open.p99Ms, b.open.p99Ms), 2);
  add("  ack latency max (ms)", a.open.maxMs, b.open.maxMs, "", 1);
  add("  non-2xx + failed", String(a.open.bad), String(b.open.bad));
  add("  server CPU ms/delivery", cpu(a.open.serverCpuMsPerDelivery), cpu(b.open.serverCpuMsPerDelivery));
  const idle = (s: Summary): string => (s.open.idleAfterS === null ? "never" : fmt(s.open.idleAfterS, 1));
  add("  idle again after (s)", idle(a), idle(b));
  const mb = (n: number | null): string => (n === null ? "-" : String(n));
  add("server RSS when ready (MB)", mb(a.idleRssMb), mb(b.idleRssMb), ratio(a.idleRssMb ?? NaN, b.idleRssMb ?? NaN));
  add(
    `server RSS at ${cfg.rate}/s (MB)`,
    mb(a.steadyRssMb),
    mb(b.steadyRssMb),
    ratio(a.steadyRssMb ?? NaN, b.steadyRssMb ?? NaN),
  );
  add("server peak RSS (MB)", mb(a.peakRssMb), mb(b.peakRssMb), ratio(a.peakRssMb ?? NaN, b.peakRssMb ?? NaN));

  add("start to ready (ms)", a.readyMs, b.readyMs, ratio(a.readyMs, b.readyMs), 0);

  const header: [string, string, string, string] = ["", a.label, b.label, `${a.label}/${b.label}`];
  const all = [header, ...rows];
  const w0 = Math.max(...all.map((r) => r[0].length));
  const w = [1, 2, 3].map((i) => Math.max(10, ...all.map((r) => r[i as 1].length)));
  return all
    .map((r) =>
      r[1] === "" && r[2] === "" && r !== header
        ? r[0]
        : `${r[0].padEnd(w0)}  ${r[1].padStart(w[0]!)}  ${r[2].padStart(w[1]!)}  ${r[3].padStart(w[2]!)}`,
    )
    .join("\n");
}

/** Each round's own ratio, so the spread (and any effect of who went first) is visible. */
export function roundLines(sessions: SessionResult[], labels: string[], rounds: number): string[] {
  const out: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    const sa = sessions.find((s) => s.round === round && s.label === labels[0]);
    const sb = sessions.find((s) => s.round === round && s.label === labels[1]);
    if (!sa || !sb) continue;
    const first = round % 2 === 1 ? labels[0] : labels[1];
    out.push(
      `round ${round} (${first} first): throughput ${fmt(sa.saturation.result.throughputPerS, 0)} vs ${fmt(sb.saturation.result.throughputPerS, 0)}/s` +
        ` = ${fmt(sa.saturation.result.throughputPerS / sb.saturation.result.throughputPerS, 2)}x;` +
        ` open-loop p99 ${fmt(sa.open.result.p99Ms, 2)} vs ${fmt(sb.open.result.p99Ms, 2)} ms; peak RSS ${sa.serverPeakRssMb ?? "-"} vs ${sb.serverPeakRssMb ?? "-"} MB`,
    );
  }
  return out;
}
