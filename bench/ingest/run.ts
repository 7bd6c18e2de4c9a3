// Ingest benchmark: the same signed deliveries, at the same concurrency and
// rate, against Orchestra and against a bare Probot app, one after the other
// in a single run, so the ratio between them is what the numbers mean.
// See bench/README.md for how to run it and how to read the output.
import { gitCommit } from "../results.js";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { PhaseResult } from "./load.js";
import { buildPool, type Pool } from "./payloads.js";
import { StartError } from "./targets.js";
import { maskedDatabase, parseConfig, USAGE, type Config } from "./config.js";
import { fmt, READY_TARGET_MS, roundLines, RSS_TARGET_MB, summarise, table, type SessionResult } from "./report.js";
import { makeSecrets, runSession } from "./session.js";
import { runBench } from "../lifecycle.js";
import { hotMain } from "./hot-run.js";

const here = dirname(fileURLToPath(import.meta.url));
// dist/bench/ingest/run.js -> repository root
const root = resolve(here, "../../..");

const log = (line: string): void => {
  process.stdout.write(line + "\n");
};

async function main(): Promise<number> {
  let cfg: Config;
  try {
    cfg = parseConfig(process.argv.slice(2), root);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  // However the run goes wrong, it ends: this fires even if a phase hangs.
  deadlineAt = Date.now() + cfg.maxMinutes * 60_000;

  for (const kind of new Set(cfg.targets)) {
    const script = kind === "orchestra" ? cfg.orchestraMain : join(here, "bare-app.js");
    if (!existsSync(script)) {
      process.stderr.write(
        `${relative(root, script)} is missing: run \`npm run build\` first (npm run bench:ingest does)\n`,
      );
      return 2;
    }
  }

  const labels = cfg.targets[0] === cfg.targets[1] ? [cfg.targets[0]!, `${cfg.targets[1]!}#2`] : [...cfg.targets];
  const cpus = os.cpus();
  log(
    `bench:ingest  ${labels[0]} vs ${labels[1]}  node ${process.version}, ${cpus.length} CPU (${cpus[0]?.model ?? "?"})` +
      `, database ${cfg.databaseUrl ? cfg.databaseUrl.replace(/\/\/[^@/]*@/, "//***@") : "fresh SQLite file per start"}`,
  );
  // Other work on the machine skews one target more than the other; say so
  // up front instead of leaving it to be guessed from odd numbers.
  const loadAtStart = os.loadavg()[0] ?? 0;
  if (loadAtStart >= cpus.length * 0.5) {
    log(
      `warning: load average ${loadAtStart.toFixed(2)} on ${cpus.length} CPUs before starting; expect noise (try --rounds 3)`,
    );
  }
  const secrets = makeSecrets();
  const t0 = Date.now();
  if (cfg.hotKey) return hotMain({ log, here, root }, cfg, secrets, { startedAt: t0, loadAtStart });
  // One body per delivery unless --distinct says otherwise: a body Orchestra
  // has stored before, under another delivery id, is a replay it acknowledges
  // without storing. Each round has its own bodies (a PostgreSQL database
  // outlives a round); both targets of a round get the same ones.
  const perSession = cfg.warmup + Math.round(cfg.rate * cfg.seconds) + cfg.count;
  const poolFor = (round: number): Pool => {
    const started = Date.now();
    const distinct = cfg.distinct ?? perSession;
    const pool = buildPool({ secret: secrets.webhookSecret, distinct, keys: cfg.keys, seed: cfg.seed, round });
    log(
      `payloads: ${pool.bodies.length} distinct bodies (mean ${pool.meanBytes} B) over ${cfg.keys} issue/PR numbers, ` +
        `signed in ${Date.now() - started} ms; mix ${Object.entries(pool.mix)
          .map(([k, v]) => `${k} ${Math.round((100 * v) / pool.bodies.length)}%`)
          .join(", ")}`,
    );
    if (distinct < perSession)
      log(`note: ${perSession} deliveries per target reuse ${distinct} bodies; Orchestra stores the repeats as none`);
    return pool;
  };
  let pool: Pool | null = null;

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const profileRoot = cfg.profile ? join(root, "bench/results", `profiles-${stamp}`) : null;
  if (profileRoot) log(`profiles: ${relative(process.cwd(), profileRoot) || profileRoot}`);
  const sessions: SessionResult[] = [];
  for (let round = 1; round <= cfg.rounds; round++) {
    // Alternate who goes first so slow drift (thermal, page cache, a noisy
    // neighbour) does not always favour the same target.
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    pool = poolFor(round);
    for (const i of order) {
      sessions.push(
        await runSession({ log, here, root }, profileRoot, cfg, secrets, pool, cfg.targets[i]!, labels[i]!, round),
      );
    }
  }

  const a = summarise(sessions.filter((s) => s.label === labels[0]));
  const b = summarise(sessions.filter((s) => s.label === labels[1]));
  log("");
  if (cfg.rounds > 1) {
    roundLines(sessions, labels, cfg.rounds).forEach(log);
    log(`medians over ${cfg.rounds} rounds`);
  }
  log(table(cfg, a, b));
  log("");

  const throughputRatio = a.saturation.throughputPerS / b.saturation.throughputPerS;
  const openClean = a.open.bad === 0;
  const p99Pass = a.open.p99Ms <= cfg.p99TargetMs && openClean;
  const stores = sessions.filter((s) => s.store).map((s) => s.store!);
  const storeOk = stores.every((s) => s.ackedMissing === 0 && !s.error);
  const verdict = (ok: boolean): string => (ok ? "PASS" : "FAIL");
  log("targets");
  log(`  ${a.label} throughput >= 1.00x ${b.label}:  ${fmt(throughputRatio, 2)}x  ${verdict(throughputRatio >= 1)}`);
  log(
    `  ${a.label} p99 ack at ${cfg.rate}/s <= ${cfg.p99TargetMs} ms:  ${fmt(a.open.p99Ms, 2)} ms` +
      `${openClean ? "" : ` with ${a.open.bad} non-2xx/failed`}  ${verdict(p99Pass)}` +
      `  (${b.label}: ${fmt(b.open.p99Ms, 2)} ms)`,
  );
  const rssPass = a.steadyRssMb !== null && a.steadyRssMb <= RSS_TARGET_MB;
  log(
    `  ${a.label} RSS under ${cfg.rate}/s <= ${RSS_TARGET_MB} MB:  ${a.steadyRssMb ?? "-"} MB  ${verdict(rssPass)}` +
      `  (${b.label}: ${b.steadyRssMb ?? "-"} MB)`,
  );
  const readyPass = a.readyMs <= READY_TARGET_MS;
  log(
    `  ${a.label} start to ready <= ${READY_TARGET_MS} ms:  ${fmt(a.readyMs, 0)} ms  ${verdict(readyPass)}` +
      `  (${b.label}: ${fmt(b.readyMs, 0)} ms)`,
  );
  if (stores.length > 0) {
    const stored = stores.reduce((n, s) => n + s.storedRows, 0);
    const acked = stores.reduce((n, s) => n + s.acked, 0);
    const missing = stores.reduce((n, s) => n + s.ackedMissing, 0);
    log(
      `  every acked delivery stored (checked after SIGKILL):  ${stored} rows / ${acked} acked, ${missing} missing  ${verdict(storeOk)}`,
    );
  }

  const out = cfg.out ? resolve(cfg.out) : join(root, "bench/results", `ingest-${stamp}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const strip = <T extends PhaseResult>(r: T): Omit<T, "ackedIds"> => {
    const { ackedIds: _ids, ...rest } = r;
    return rest;
  };
  const report = {
    startedAt: new Date(t0).toISOString(),
    commit: gitCommit(root),
    machine: {
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: os.loadavg()[0] ?? null,
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? null,
    },
    config: {
      ...cfg,
      databaseUrl: maskedDatabase(cfg.databaseUrl),
    },
    payloads: pool ? { distinct: pool.bodies.length, meanBytes: pool.meanBytes, mix: pool.mix } : null,
    summary: { subject: a, baseline: b },
    targets: {
      throughputRatio,
      throughputPass: throughputRatio >= 1,
      p99TargetMs: cfg.p99TargetMs,
      subjectOpenP99Ms: a.open.p99Ms,
      p99Pass,
      rssTargetMb: RSS_TARGET_MB,
      subjectSteadyRssMb: a.steadyRssMb,
      rssPass,
      readyTargetMs: READY_TARGET_MS,
      subjectReadyMs: a.readyMs,
      readyPass,
      storeChecked: stores.length > 0,
      storePass: stores.length > 0 ? storeOk : null,
    },
    sessions: sessions.map((s) => ({
      ...s,
      warmup: strip(s.warmup),
      open: { ...s.open, result: strip(s.open.result) },
      saturation: { ...s.saturation, result: strip(s.saturation.result) },
    })),
  };
  writeFileSync(out, JSON.stringify(report, null, 2) + "\n");
  log(`\nresults: ${relative(process.cwd(), out) || out}`);
  // Lost or failed deliveries are a correctness failure and always fail the
  // run; missed performance targets only with --strict, since a noisy machine
  // should not turn a measurement into a red build by default.
  const correct = storeOk && a.open.bad + a.saturation.bad + b.open.bad + b.saturation.bad === 0;
  const fast = throughputRatio >= 1 && p99Pass && rssPass && readyPass;
  return correct && (fast || !cfg.strict) ? 0 : 1;
}

let deadlineAt = Infinity;
runBench("ingest", main, {
  deadlineAt: () => deadlineAt,
  dropDatabases: async () => {},
  explain: (e) => (e instanceof StartError ? e.message : null),
});
