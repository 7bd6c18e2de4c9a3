// bench:ingest --hot-key: each shape in turn on fresh targets, then the
// targets and the JSON results file.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { gitCommit } from "../results.js";
import type { Config } from "./config.js";
import { runHot, type HotResult } from "./hot.js";
import { hotLines, hotVerdicts, drainPoints, DRAIN_FLAT_TARGET } from "./hot-report.js";
import { READY_TARGET_MS } from "./report.js";
import type { Secrets, SessionPlace } from "./session.js";

export async function hotMain(
  place: SessionPlace,
  cfg: Config,
  secrets: Secrets,
  run: { startedAt: number; loadAtStart: number },
): Promise<number> {
  const { log, root } = place;
  const results: HotResult[] = [];
  for (const shape of cfg.hotKey ?? []) results.push(await runHot(place, cfg, secrets, shape));

  const verdicts = results.map((h) => hotVerdicts(h));
  log("");
  results.forEach((h, i) => {
    hotLines(h, verdicts[i]!, cfg).forEach(log);
    log("");
  });

  const stamp = new Date(run.startedAt).toISOString().replace(/[:.]/g, "-");
  const out = cfg.out ? resolve(cfg.out) : join(root, "bench/results", `ingest-hot-${stamp}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const cpus = os.cpus();
  const report = {
    startedAt: new Date(run.startedAt).toISOString(),
    commit: gitCommit(root),
    machine: {
      loadAverageAtStart: run.loadAtStart,
      loadAverageAtEnd: os.loadavg()[0] ?? null,
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? null,
    },
    config: {
      ...cfg,
      databaseUrl: cfg.databaseUrl ? cfg.databaseUrl.replace(/\/\/[^@/]*@/, "//***@") : "sqlite (fresh file per start)",
    },
    targets: { readyMs: READY_TARGET_MS, ratio: 1, drainFlatness: DRAIN_FLAT_TARGET },
    shapes: results.map((h, i) => ({ ...h, drainPoints: drainPoints(h), verdicts: verdicts[i] })),
  };
  writeFileSync(out, JSON.stringify(report, null, 2) + "\n");
  log(`results: ${relative(process.cwd(), out) || out}`);
  // As without --hot-key: a lost or failed delivery always fails the run,
  // a missed performance target only with --strict.
  const bad = (r: HotResult["rounds"][number]["subject"]): number => r.result.non2xx + r.result.failed;
  const failedRequests = results.some((h) => h.rounds.some((r) => bad(r.subject) + bad(r.baseline) > 0));
  const correct = !failedRequests && verdicts.every((v) => v.storePass);
  const fast = verdicts.every((v) => v.ratioPass && v.drainPass && v.readyPass);
  return correct && (fast || !cfg.strict) ? 0 : 1;
}
