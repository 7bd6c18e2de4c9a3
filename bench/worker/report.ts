// The worker benchmark's figures: one progress line per run, then the table
// (the cold run, the median of the warm runs, the median of the baselines),
// the ratios against the baseline, and the target's verdict.
import type { BaselineTimes, WorkerTimes } from "./measure.js";

export interface RunPair {
  run: number;
  /** which went first in this run (they alternate) */
  first: "baseline" | "worker";
  baseline: BaselineTimes;
  worker: WorkerTimes;
}

export interface Summary {
  baseline: BaselineTimes;
  cold: WorkerTimes;
  warm: WorkerTimes;
  warmRuns: number;
  /** git overhead over the baseline's total, medians */
  gitRatio: { cold: number; warm: number };
  wallRatio: { cold: number; warm: number };
  /** the git overhead ratio with the fake GitHub's own push work taken out of both sides */
  gitRatioWithoutFake: { cold: number; warm: number };
  target: number;
  met: boolean;
}

const ms = (n: number): string => `${Math.round(n)}`;
const x = (n: number): string => `${n.toFixed(2)}×`;

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Field by field: each figure is its own median, so the steps need not add up to the median total. */
function medianOf<T extends object>(rows: T[]): T {
  const first = rows[0]!;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(first))
    out[k] = typeof v === "number" ? median(rows.map((r) => (r as Record<string, number>)[k]!)) : v;
  return out as T;
}

export function progressLine(p: RunPair, total: number): string {
  const b = p.baseline;
  const w = p.worker;
  const kind = p.run === 1 ? "cold" : "warm";
  return (
    `[run ${p.run}/${total}] baseline ${ms(b.totalMs)} ms (clone ${ms(b.cloneMs)}, commit ${ms(b.commitMs)}, ` +
    `push ${ms(b.pushMs)})  worker (${kind}) git ${ms(w.gitMs)} ms (mirror ${ms(w.mirrorMs)}, worktree ` +
    `${ms(w.worktreeMs)}, facts+push ${ms(w.pushMs)}), whole run ${ms(w.wallMs)} ms, ${w.outcome ?? "?"}  ` +
    `(${p.first} first)`
  );
}

export function summarise(pairs: RunPair[], target: number): Summary {
  const baseline = medianOf(pairs.map((p) => p.baseline));
  const cold = pairs[0]!.worker;
  const warmRows = pairs.slice(1).map((p) => p.worker);
  const warm = medianOf(warmRows);
  const gitRatio = { cold: cold.gitMs / baseline.totalMs, warm: warm.gitMs / baseline.totalMs };
  const wallRatio = { cold: cold.wallMs / baseline.totalMs, warm: warm.wallMs / baseline.totalMs };
  const fb = baseline.totalMs - (baseline.fakePushMs ?? 0);
  const gitRatioWithoutFake = {
    cold: (cold.gitMs - (cold.fakePushMs ?? 0)) / fb,
    warm: (warm.gitMs - (warm.fakePushMs ?? 0)) / fb,
  };
  return {
    baseline,
    cold,
    warm,
    warmRuns: warmRows.length,
    gitRatio,
    wallRatio,
    gitRatioWithoutFake,
    target,
    met: gitRatio.warm <= target,
  };
}

export function table(s: Summary, runs: number): string {
  const rows: [string, string, string][] = [
    ["worker step (ms)", "cold (run 1)", `warm (median of ${s.warmRuns})`],
    ["start → claimed (node, claim)", ms(s.cold.startMs), ms(s.warm.startMs)],
    ["mirror (clone --bare / fetch)", ms(s.cold.mirrorMs), ms(s.warm.mirrorMs)],
    ["worktree (spare or add, task file)", ms(s.cold.worktreeMs), ms(s.warm.worktreeMs)],
    ["agent start", ms(s.cold.agentStartMs), ms(s.warm.agentStartMs)],
    ["agent (change + commit)", ms(s.cold.agentMs), ms(s.warm.agentMs)],
    ["facts + push", ms(s.cold.pushMs), ms(s.warm.pushMs)],
    ["pull request (REST)", ms(s.cold.prMs), ms(s.warm.prMs)],
    ["exit call + parking the worktree", ms(s.cold.exitMs), ms(s.warm.exitMs)],
    ["process shutdown", ms(s.cold.shutdownMs), ms(s.warm.shutdownMs)],
    ["git overhead (mirror + worktree + facts/push)", ms(s.cold.gitMs), ms(s.warm.gitMs)],
    ["whole run (spawn to exit)", ms(s.cold.wallMs), ms(s.warm.wallMs)],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  const w2 = rows[0]![2].length;
  const line = (r: [string, string, string]) => `${r[0].padEnd(w0)}  ${r[1].padStart(w1)}  ${r[2].padStart(w2)}`;
  const b = s.baseline;
  return [
    ...rows.map(line),
    "",
    `baseline (median of ${runs}): clone ${ms(b.cloneMs)} ms, commit ${ms(b.commitMs)} ms, push ${ms(b.pushMs)} ms, ` +
      `total ${ms(b.totalMs)} ms`,
    "",
    `git overhead / baseline:  cold ${x(s.gitRatio.cold)}, warm ${x(s.gitRatio.warm)}`,
    `whole run / baseline:     cold ${x(s.wallRatio.cold)}, warm ${x(s.wallRatio.warm)}`,
    `the fake GitHub's own work per push after receive-pack (its model, the push webhook to the App), in both: ` +
      `baseline ${ms(b.fakePushMs ?? 0)} ms, worker warm ${ms(s.warm.fakePushMs ?? 0)} ms; without it, git overhead / ` +
      `baseline: cold ${x(s.gitRatioWithoutFake.cold)}, warm ${x(s.gitRatioWithoutFake.warm)}`,
    `this process's CPU (the App and the fake GitHub, on the same CPUs as git) during one: baseline ` +
      `${ms(b.rigCpuMs ?? 0)} ms, worker cold ${ms(s.cold.rigCpuMs ?? 0)} ms, warm ${ms(s.warm.rigCpuMs ?? 0)} ms`,
    `target: warm git overhead ≤ ${s.target}× a fresh clone per run: ${s.met ? "PASS" : "FAIL"} (${x(s.gitRatio.warm)})`,
  ].join("\n");
}
