// The claim benchmark's report: one table row per configuration, the targets
// with PASS/FAIL, the correctness verdict (it decides the exit status) and the
// results JSON in bench/results/.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, relative } from "node:path";
import { redact } from "../../src/store/db.js";
import type { LoopResult } from "./load.js";
import type { Config } from "./run.js";
import type { Plan, StoreCheck } from "./world.js";
import type { LabelFigures, PhaseCost } from "./observe.js";

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
  claims: LoopResult;
  cost: PhaseCost;
  /** CPU of all App processes during the measured claims, per claim request. */
  serverCpuMsPerClaim: number | null;
  /** PostgreSQL backends' CPU per claim request (null on SQLite). */
  dbCpuMsPerClaim: number | null;
  /** This process (load generator and fake GitHub) per claim request. */
  benchCpuMsPerClaim: number | null;
  /** Task ids answered more than once (warm-up and measured claims together). */
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

const fmt = (n: number | null | undefined, d = 1): string => (n !== null && n !== undefined && Number.isFinite(n) ? n.toFixed(d) : "-");
const verdict = (ok: boolean): string => (ok ? "PASS" : "FAIL");

function gitCommit(root: string): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

function table(runs: ConfigRun[], pg1: ConfigRun | undefined): string {
  const head = ["config", "procs", "health p50", "health p99", "claims/s", "claim p50", "claim p99", "claim max", "p99 claim/health", "204s", "other", "vs pg1", "App CPU/claim", "DB CPU/claim"];
  const rows = runs.map((r) => [
    r.name,
    String(r.processes),
    fmt(r.health.p50Ms, 2),
    fmt(r.health.p99Ms, 2),
    fmt(r.claims.throughputPerS, 0),
    fmt(r.claims.p50Ms, 2),
    fmt(r.claims.p99Ms, 2),
    fmt(r.claims.maxMs, 1),
    `${fmt(r.claims.p99Ms / r.health.p99Ms, 1)}x`,
    String(r.claims.empty),
    String(r.claims.bad),
    r.name === "pg2" && pg1 ? `${fmt(r.claims.throughputPerS / pg1.claims.throughputPerS, 2)}x` : "",
    fmt(r.serverCpuMsPerClaim, 1),
    fmt(r.dbCpuMsPerClaim, 1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(head), ...rows.map(line)].join("\n") + "\n(latencies in ms, nearest-rank percentiles; claims/s = HTTP 200 answers per second; CPU in ms per claim request, App summed over its processes, DB = PostgreSQL backends)";
}

export function report(cfg: Config, runs: ConfigRun[], skipped: string[], ctx: Context): number {
  const { log } = ctx;
  const pg1 = runs.find((r) => r.name === "pg1");
  const pg2 = runs.find((r) => r.name === "pg2");
  log("");
  log(`${cfg.claims} measured claims per configuration after ${cfg.warmup} warm-up, concurrency ${cfg.concurrency}, ${cfg.tasks} queued tasks`);
  if (runs.length) log(table(runs, pg1));
  if (skipped.length) log(`skipped: ${skipped.join(", ")} (no --database-url)`);
  log("");
  log("targets");
  for (const r of runs) {
    const clean = r.claims.bad === 0 && !r.claims.timedOut;
    log(`  ${r.name.padEnd(6)} claim p99 <= ${cfg.p99TargetMs} ms:  ${fmt(r.claims.p99Ms, 2)} ms${clean ? "" : ` (${r.claims.bad} failed requests)`}  ${verdict(r.claims.p99Ms <= cfg.p99TargetMs && clean)}`);
  }
  const ratio = pg1 && pg2 ? pg2.claims.throughputPerS / pg1.claims.throughputPerS : null;
  if (ratio !== null) log(`  pg2/pg1 throughput >= 1.70x:  ${fmt(ratio, 2)}x  ${verdict(ratio >= 1.7)}`);
  for (const r of runs) log(`  ${r.name.padEnd(6)} candidate query indexed:  ${r.plan.key}  ${verdict(!r.plan.fullScanSort)}`);
  const correct = runs.every((r) => r.doubleAnswers === 0 && r.storeOk);
  for (const r of runs) {
    log(
      `  ${r.name.padEnd(6)} no double claims:  ${r.doubleAnswers} task ids answered twice, ${r.store.tasksWithSeveralRuns} tasks with several runs, ` +
        `${r.store.runs} runs / ${r.claimWarmup.claims.length + r.claims.claims.length} answers  ${verdict(r.doubleAnswers === 0 && r.storeOk)}`,
    );
  }
  const violations = runs.flatMap((r) => r.fakeViolations.map((v) => `${r.name}: ${v}`));
  if (violations.length) log(`fake GitHub violations (first ${violations.length}):\n  ${violations.join("\n  ")}`);

  const out = join(ctx.root, "bench/results", `claims-${ctx.stamp}.json`);
  mkdirSync(join(ctx.root, "bench/results"), { recursive: true });
  const strip = (r: LoopResult): Omit<LoopResult, "claims"> => {
    const { claims: _c, ...rest } = r;
    return rest;
  };
  const cpus = os.cpus();
  const results = {
    startedAt: new Date(ctx.startedAt).toISOString(),
    durationS: (Date.now() - ctx.startedAt) / 1000,
    commit: gitCommit(ctx.root),
    machine: { cpus: cpus.length, cpuModel: cpus[0]?.model ?? null, node: process.version, loadAverageAtStart: ctx.loadAtStart, loadAverageAtEnd: os.loadavg() },
    config: { ...cfg, databaseUrl: cfg.databaseUrl ? redact(cfg.databaseUrl) : null },
    skipped,
    targets: {
      claimP99Ms: cfg.p99TargetMs,
      claimP99Pass: Object.fromEntries(runs.map((r) => [r.name, r.claims.p99Ms <= cfg.p99TargetMs && r.claims.bad === 0])),
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
      claims: strip(r.claims),
      claimsPerLane: countBy(r.claims.claims.map((c) => c.lane)),
    })),
  };
  writeFileSync(out, JSON.stringify(results, null, 2) + "\n");
  log(`\nload average at end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
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
