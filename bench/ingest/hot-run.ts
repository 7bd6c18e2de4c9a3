// bench:ingest --hot-key: each shape in turn on fresh targets, then the
// targets and the JSON results file.
import { join, relative, resolve } from "node:path";
import { runFacts, writeResults } from "../results.js";
import { maskedDatabase, type Config } from "./config.js";
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
  const out = writeResults(cfg.out ? resolve(cfg.out) : join(root, "bench/results", `ingest-hot-${stamp}.json`), {
    ...runFacts({ root, startedAt: run.startedAt, loadAtStart: [run.loadAtStart] }),
    config: { ...cfg, databaseUrl: maskedDatabase(cfg.databaseUrl) },
    targets: { readyMs: READY_TARGET_MS, ratio: 1, drainFlatness: DRAIN_FLAT_TARGET },
    shapes: results.map((h, i) => ({ ...h, drainPoints: drainPoints(h), verdicts: verdicts[i] })),
  });
  log(`results: ${relative(process.cwd(), out) || out}`);
  // As without --hot-key: a lost or failed delivery always fails the run,
  // a missed performance target only with --strict.
  const bad = (r: HotResult["rounds"][number]["subject"]): number => r.result.non2xx + r.result.failed;
  const failedRequests = results.some((h) => h.rounds.some((r) => bad(r.subject) + bad(r.baseline) > 0));
  const correct = !failedRequests && verdicts.every((v) => v.storePass);
  const fast = verdicts.every((v) => v.ratioPass && v.drainPass && v.readyPass);
  return correct && (fast || !cfg.strict) ? 0 : 1;
}
