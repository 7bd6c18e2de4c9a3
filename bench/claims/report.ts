// The claim benchmark's report: one table column per configuration (rows for
// the baseline, the closed loop and the open loop), the targets with
// PASS/FAIL, the correctness verdict (it decides the exit status) and the
// results JSON in bench/results/.
import { gitCommit } from "../results.js";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative } from "node:path";
import { redact } from "../../src/store/db.js";
import type { LoopResult } from "./load.js";
import type { OpenResult } from "./open.js";
import type { Config } from "./options.js";
import type { Plan, StoreCheck } from "./world.js";
import type { LabelFigures, PerClaim, PhaseCost } from "./observe.js";

export type Kind = "sqlite" | "pg1" | "pg2";

export interface ConfigRun {
  name: Kind;
  processes: number;
  concurrency: number;
  database: string;
  seedS: number;
  plan: Plan;
  healthWarmup: LoopResult;
  health: LoopResult;
  claimWarmup: LoopResult;
  /** Closed loop at --concurrency: capacity and latency at saturation; no target. */
  closed: LoopResult;
  closedCost: PhaseCost;
  /** Per claim request: App processes' CPU (summed), this process's, PostgreSQL's (null on SQLite). */
  closedCpu: PerClaim;
  /** Open loop at --rate: latency from the scheduled send time; the p99 target. */
  open: OpenResult;
  openCost: PhaseCost;
  openCpu: PerClaim;
  /** Task ids answered more than once (warm-up, closed and open loop together). */
  doubleAnswers: number;
  store: StoreCheck;
  /** No task with two runs, and Run rows == 200 answers. */
  storeOk: boolean;
  labels: LabelFigures;
  serverOutputLines: number;
  serverOutputTail: string;
  fakeViolations: string[];
}

interface Context {
  root: string;
  stamp: string;
  startedAt: number;
  loadAtStart: number[];
  log: (line: string) => void;
}

const fmt = (n: number | null | undefined, d = 1): string =>
  n !== null && n !== undefined && Number.isFinite(n) ? n.toFixed(d) : "-";
const verdict = (ok: boolean): string => (ok ? "PASS" : "FAIL");

function table(cfg: Config, runs: ConfigRun[], pg1: ConfigRun | undefined): string {
  const rows: string[][] = [];
  const add = (name: string, cell: (r: ConfigRun) => string): void => void rows.push([name, ...runs.map(cell)]);
  const section = (title: string): void => void rows.push([title]);
  const pair = (a: number, b: number, d = 2): string => `${fmt(a, d)}/${fmt(b, d)}`;
  add("App processes", (r) => String(r.processes));
  add(`health p50/p99 (c=${cfg.concurrency})`, (r) => pair(r.health.p50Ms, r.health.p99Ms));
  section(`closed loop: ${cfg.claims} claims at concurrency ${cfg.concurrency} (capacity; no latency target)`);
  add("  closed claims/s", (r) => fmt(r.closed.throughputPerS, 0));
  add("  closed p50/p99", (r) => pair(r.closed.p50Ms, r.closed.p99Ms));
  add("  closed max", (r) => fmt(r.closed.maxMs, 1));
  add("  closed p99 claim/health", (r) => `${fmt(r.closed.p99Ms / r.health.p99Ms, 1)}x`);
  add("  closed 204s, other", (r) => `${r.closed.empty}, ${r.closed.bad}`);
  if (pg1 && runs.some((r) => r.name === "pg2"))
    add("  closed claims/s vs pg1", (r) =>
      r.name === "pg2" ? `${fmt(r.closed.throughputPerS / pg1.closed.throughputPerS, 2)}x` : "",
    );
  add("  closed App CPU/claim", (r) => fmt(r.closedCpu.app, 1));
  add("  closed DB CPU/claim", (r) => fmt(r.closedCpu.db, 1));
  section(`open loop: ${cfg.rate} claims/s for ${cfg.seconds} s (claim p99 target <= ${cfg.p99TargetMs} ms)`);
  add("  open sent/s", (r) => fmt(r.open.sendRatePerS, 1));
  add("  open claims/s (200s)", (r) => fmt(r.open.throughputPerS, 1));
  add("  open p50/p99", (r) => pair(r.open.p50Ms, r.open.p99Ms));
  add("  open max", (r) => fmt(r.open.maxMs, 1));
  add("  open 204s, other", (r) => `${r.open.empty}, ${r.open.bad}`);
  add("  open client lag p99", (r) => fmt(r.open.sendLagP99Ms, 2));
  add("  open connections in use/open", (r) => r.open.connections.map((c) => `${c.peakBusy}/${c.open}`).join(" + "));
  add("  open App CPU/claim", (r) => fmt(r.openCpu.app, 1));
  add("  open DB CPU/claim", (r) => fmt(r.openCpu.db, 1));
  const head = ["", ...runs.map((r) => r.name)];
  const cells = [head, ...rows.filter((r) => r.length > 1)];
  const widths = head.map((_, i) => Math.max(i === 0 ? 0 : 9, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]): string =>
    r.length === 1 ? r[0]! : r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return (
    [head, ...rows].map(line).join("\n") +
    "\n(latencies in ms, nearest-rank percentiles over the 200 answers; the open loop's from each claim's scheduled send time; claims/s = HTTP 200 answers per second;" +
    "\n other = any status but 200/204, or no answer; connections: most in use at once / opened, per App process; CPU in ms per claim request, App summed over its processes, DB = PostgreSQL backends)"
  );
}

export function report(cfg: Config, runs: ConfigRun[], skipped: string[], ctx: Context): number {
  const { log } = ctx;
  const pg1 = runs.find((r) => r.name === "pg1");
  const pg2 = runs.find((r) => r.name === "pg2");
  log("");
  log(
    `${cfg.tasks} queued tasks; closed loop: ${cfg.claims} measured claims after ${cfg.warmup} warm-up, concurrency ${cfg.concurrency}; ` +
      `open loop: ${cfg.rate} claims/s for ${cfg.seconds} s`,
  );
  if (runs.length) log(table(cfg, runs, pg1));
  if (skipped.length) log(`skipped: ${skipped.join(", ")} (no --database-url)`);
  log("");
  log("targets");
  const p99Pass = (r: ConfigRun): boolean => r.open.p99Ms <= cfg.p99TargetMs && r.open.bad === 0 && !r.open.timedOut;
  for (const r of runs) {
    const clean = r.open.bad === 0 && !r.open.timedOut;
    log(
      `  ${r.name.padEnd(6)} claim p99 <= ${cfg.p99TargetMs} ms (open loop, ${cfg.rate}/s):  ${fmt(r.open.p99Ms, 2)} ms` +
        `${clean ? "" : ` (${r.open.bad} failed requests${r.open.timedOut ? ", deadline hit" : ""})`}  ${verdict(p99Pass(r))}`,
    );
  }
  const ratio = pg1 && pg2 ? pg2.closed.throughputPerS / pg1.closed.throughputPerS : null;
  if (ratio !== null) log(`  pg2/pg1 closed-loop claims/s >= 1.70x:  ${fmt(ratio, 2)}x  ${verdict(ratio >= 1.7)}`);
  for (const r of runs)
    log(`  ${r.name.padEnd(6)} candidate query indexed:  ${r.plan.key}  ${verdict(!r.plan.fullScanSort)}`);
  const correct = runs.every((r) => r.doubleAnswers === 0 && r.storeOk);
  for (const r of runs) {
    log(
      `  ${r.name.padEnd(6)} no double claims:  ${r.doubleAnswers} task ids answered twice, ${r.store.tasksWithSeveralRuns} tasks with several runs, ` +
        `${r.store.runs} runs / ${r.claimWarmup.claims.length + r.closed.claims.length + r.open.claims.length} answers (warm-up, closed and open loop)  ${verdict(r.doubleAnswers === 0 && r.storeOk)}`,
    );
  }
  const violations = runs.flatMap((r) => r.fakeViolations.map((v) => `${r.name}: ${v}`));
  if (violations.length) log(`fake GitHub violations (first ${violations.length}):\n  ${violations.join("\n  ")}`);

  const out = join(ctx.root, "bench/results", `claims-${ctx.stamp}.json`);
  mkdirSync(join(ctx.root, "bench/results"), { recursive: true });
  const strip = <T extends LoopResult>(r: T): Omit<T, "claims"> => {
    const { claims: _c, ...rest } = r;
    return rest;
  };
  const cpus = os.cpus();
  const results = {
    startedAt: new Date(ctx.startedAt).toISOString(),
    durationS: (Date.now() - ctx.startedAt) / 1000,
    commit: gitCommit(ctx.root),
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? null,
      node: process.version,
      loadAverageAtStart: ctx.loadAtStart,
      loadAverageAtEnd: os.loadavg(),
    },
    config: { ...cfg, databaseUrl: cfg.databaseUrl ? redact(cfg.databaseUrl) : null },
    skipped,
    targets: {
      claimP99Ms: cfg.p99TargetMs,
      claimP99Phase: "open loop",
      claimP99Pass: Object.fromEntries(runs.map((r) => [r.name, p99Pass(r)])),
      pg2OverPg1Throughput: ratio,
      pg2OverPg1Pass: ratio === null ? null : ratio >= 1.7,
      indexed: Object.fromEntries(runs.map((r) => [r.name, !r.plan.fullScanSort])),
      noDoubleClaims: correct,
    },
    configurations: runs.map((r) => ({
      ...r,
      healthWarmup: strip(r.healthWarmup),
      health: strip(r.health),
      claimWarmup: strip(r.claimWarmup),
      closed: strip(r.closed),
      closedClaimsPerLane: countBy(r.closed.claims.map((c) => c.lane)),
      open: strip(r.open),
    })),
  };
  writeFileSync(out, JSON.stringify(results, null, 2) + "\n");
  log(
    `\nload average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  log(`results: ${relative(process.cwd(), out) || out}`);
  // Double claims (or runs that do not match the answers) fail the run; missed
  // performance targets are reported, not turned into an exit status.
  return correct ? 0 : 1;
}

function countBy(xs: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[String(x)] = (out[String(x)] ?? 0) + 1;
  return out;
}
