// What every benchmark's results file says about the run itself, and where
// the file goes: bench/results/<name>-<stamp>.json.
import os from "node:os";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The checked-out commit, or null outside a git checkout. */
export function gitCommit(root: string): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

/** When the run started and took, which commit, and on what machine under what load. */
export function runFacts(o: { root: string; startedAt: number; loadAtStart: number[] }) {
  const cpus = os.cpus();
  return {
    startedAt: new Date(o.startedAt).toISOString(),
    durationS: (Date.now() - o.startedAt) / 1000,
    commit: gitCommit(o.root),
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? null,
      node: process.version,
      loadAverageAtStart: o.loadAtStart,
      loadAverageAtEnd: os.loadavg(),
    },
  };
}

/** Writes the results as JSON to `file` (its folder created) and answers the path. */
export function writeResults(file: string, results: unknown): string {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
  return file;
}
