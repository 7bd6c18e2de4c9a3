// bench:faults: the fault figures users can rerun. One summary line per scenario, the JSON written. See
// bench/README.md.
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runBench } from "../lifecycle.js";
import { runFacts, writeResults } from "../results.js";
import { dropAllDatabases } from "../claims/world.js";
import { deliveriesScenario, type DeliveriesResult } from "./deliveries.js";
import { malformedScenario } from "./malformed.js";
import { startWorld, type FaultWorld } from "./world.js";
import { dbDownScenario, type DbDownResult } from "./dbdown.js";
import { PgCluster, postgresBin } from "./pgcluster.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const USAGE = `Usage: npm run bench:faults -- [options]
  --deliveries <n>     deliveries in each deliveries scenario, duplicates included [2000]
  --issues <n>         issues labelled by someone without write access [30]
  --duplicates <f>     share of deliveries sent twice [0.1]
  --kills <n>          SIGKILLs of the service while delivering [5]
  --malformed <n>      malformed or mis-signed requests [1000]
  --database-url <u>   PostgreSQL (a database of its own is created) instead of SQLite
  --scenarios <list>   of deliveries,malformed,github-faults,db-down [all]; secrets covers those run
  --db-down-seconds <n>  how long db-down keeps PostgreSQL stopped [30]
  --db-down-rate <n>   deliveries per second during db-down [5]
  --db-stop-mode <m>   fast (a clean stop) or immediate (a crash) [fast]
  --seed <n>           the shuffle's, the kill points' and GitHub's faults' seed [1]
  --max-minutes <n>    hard limit for the whole run [30]
  --json <file>        where the results go [bench/results/faults-<time>.json]`;

const { values } = parseArgs({
  options: {
    deliveries: { type: "string", default: "2000" },
    issues: { type: "string", default: "30" },
    duplicates: { type: "string", default: "0.1" },
    kills: { type: "string", default: "5" },
    malformed: { type: "string", default: "1000" },
    "database-url": { type: "string" },
    scenarios: { type: "string", default: "deliveries,malformed,github-faults,db-down" },
    "db-down-seconds": { type: "string", default: "30" },
    "db-down-rate": { type: "string", default: "5" },
    "db-stop-mode": { type: "string", default: "fast" },
    seed: { type: "string", default: "1" },
    "max-minutes": { type: "string", default: "30" },
    json: { type: "string" },
    help: { type: "boolean" },
  },
});
if (values.help) {
  process.stdout.write(USAGE + "\n");
  process.exit(0);
}
const num = (name: string, v: string, min: number, int = true): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || (int && !Number.isInteger(n)) || n < min) {
    process.stderr.write(`bench:faults: --${name} must be ${int ? "an integer" : "a number"} >= ${min}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
};
const o = {
  deliveries: num("deliveries", values.deliveries, 1),
  issues: num("issues", values.issues, 1),
  duplicateShare: num("duplicates", values.duplicates, 0, false),
  kills: num("kills", values.kills, 0),
  malformed: num("malformed", values.malformed, 0),
  seed: num("seed", values.seed, 1),
};
const SCENARIOS = ["deliveries", "malformed", "github-faults", "db-down"] as const;
const scenarios = new Set(values.scenarios.split(",").map((x) => x.trim()));
const stopMode = values["db-stop-mode"];
if ([...scenarios].some((x) => !(SCENARIOS as readonly string[]).includes(x)) || !/^(fast|immediate)$/.test(stopMode)) {
  process.stderr.write(`bench:faults: unknown scenario or --db-stop-mode\n${USAGE}\n`);
  process.exit(2);
}
const dbDown = {
  downSeconds: num("db-down-seconds", values["db-down-seconds"], 1),
  rate: num("db-down-rate", values["db-down-rate"], 0.1, false),
  stopMode: stopMode as "fast" | "immediate",
};
const pgUrl = values["database-url"] ?? null;
const startedAt = Date.now();
const deadlineAt = startedAt + num("max-minutes", values["max-minutes"], 1) * 60_000;
const progress = (line: string) => process.stderr.write(`bench:faults: ${line}\n`);

const deliveriesLine = (name: string, r: DeliveriesResult): string =>
  `${name}: ${r.deliveries} deliveries (${r.duplicates} duplicates, shuffled), ${r.kills} SIGKILLs ` +
  `(ready again in ${r.restartMs.join("/") || "-"} ms), ${r.refusedWhileDown} refused while down: ` +
  `${r.stored}/${r.uniqueSent} stored once, ${r.repliesPosted} replies for ${o.issues} issues, ` +
  `${r.wrongIssues.length} issues wrong, ${r.writesToGitHub} GitHub writes, converged in ` +
  `${(r.convergedAfterMs / 1000).toFixed(1)} s`;

const seconds = (ms: number | null) => (ms === null ? "never" : `${(ms / 1000).toFixed(1)} s`);
const dbDownLine = (r: DbDownResult): string =>
  `db-down: PostgreSQL stopped (${r.stopMode}) for ${(r.downMs / 1000).toFixed(1)} s with ${r.rate} deliveries/s ` +
  `arriving: ${r.sent} sent, ${r.answered2xx} answered 2xx, ${r.answered503} answered 503` +
  `${Object.keys(r.answeredOther).length ? ` (other: ${JSON.stringify(r.answeredOther)})` : ""}; ` +
  `${r.stored}/${r.sent} stored, ${r.ackedLost} acknowledged and lost, ${r.recoveredViaLog} recovered from ` +
  `GitHub's delivery log; not ready ${seconds(r.notReadyAfterMs)} after the stop, ready ` +
  `${seconds(r.readyAfterMs)} after the database was back, backlog recovered in ${seconds(r.recoveredAfterMs)}; ` +
  `${r.exits.length} exits; ${r.repliesPosted} replies for ${o.issues} issues, ${r.wrongIssues.length} issues wrong`;

async function withWorld<T>(
  fn: (w: FaultWorld) => Promise<T>,
  opts: { pgUrl: string | null; secrets?: string[] } = { pgUrl },
): Promise<{ result: T; leaked: string[] }> {
  const w = await startWorld({ root, pgUrl: opts.pgUrl, issues: o.issues });
  try {
    await w.start();
    const result = await fn(w);
    const secrets = [...w.secrets(), ...(opts.secrets ?? [])].filter((s) => s.length >= 8);
    const leaked = w.lines.filter((line) => secrets.some((s) => line.includes(s)));
    return { result, leaked };
  } finally {
    await w.close();
  }
}

/** db-down on a PostgreSQL server of its own: never the one --database-url names, which others may be using. */
async function runDbDown(): Promise<{ result: DbDownResult; leaked: string[] } | { skipped: string }> {
  const bin = postgresBin();
  if (!bin) return { skipped: "no PostgreSQL server binaries (pg_ctl) under /usr/lib/postgresql or $PG_BIN" };
  const cluster = await PgCluster.start(bin);
  progress(`db-down: a PostgreSQL server of its own on 127.0.0.1:${cluster.port} (${bin})`);
  try {
    return await withWorld(
      (w) =>
        dbDownScenario(w, cluster, { ...dbDown, issues: o.issues, seed: o.seed, timeoutMs: timeoutMs() }, progress),
      { pgUrl: cluster.url, secrets: [cluster.password] },
    );
  } finally {
    cluster.destroySync();
  }
}

const timeoutMs = () => Math.max(60_000, deadlineAt - Date.now() - 60_000);

async function main(): Promise<number> {
  const loadAtStart = os.loadavg();
  const lines: string[] = [];
  const ok: Record<string, boolean> = {};
  const results: Record<string, unknown> = {};
  const leaked: string[] = [];
  const say = (line: string) => {
    progress(line);
    lines.push(line);
  };
  if (scenarios.has("deliveries") || scenarios.has("malformed")) {
    const clean = await withWorld(async (w) => {
      const d = scenarios.has("deliveries")
        ? await deliveriesScenario(w, { ...o, timeoutMs: timeoutMs() }, progress)
        : null;
      if (d) say(deliveriesLine("deliveries", d));
      const m = scenarios.has("malformed") ? await malformedScenario(w, { count: o.malformed }) : null;
      return { d, m };
    });
    leaked.push(...clean.leaked);
    const { d, m } = clean.result;
    if (d) {
      results["deliveries"] = d;
      ok["exactlyOnce"] = d.wrongIssues.length === 0 && d.stored === d.uniqueSent;
    }
    if (m) {
      say(
        `malformed: ${m.sent} malformed or mis-signed requests: ${m.serverErrors} 5xx or dropped, ` +
          `${m.crashed ? "crashed" : "0 crashes"}, rows ${m.rowsBefore} -> ${m.rowsAfter}, ` +
          `GitHub's HMAC test vector ${m.testVectorHolds ? "holds" : "DOES NOT HOLD"}`,
      );
      results["malformed"] = m;
      ok["malformedHarmless"] = m.serverErrors === 0 && !m.crashed && m.rowsBefore === m.rowsAfter && m.testVectorHolds;
    }
  }
  if (scenarios.has("github-faults")) {
    const faulty = await withWorld(async (w) => {
      w.fake.chaos({
        seed: o.seed,
        failRate: 0.2,
        performedShare: 0.5,
        secondaryRateLimitRate: 0.1,
        retryAfterSeconds: 1,
      });
      const d = await deliveriesScenario(w, { ...o, kills: 0, timeoutMs: timeoutMs() }, progress);
      return { d, chaos: w.fake.chaosStats() };
    });
    leaked.push(...faulty.leaked);
    const f = faulty.result;
    say(
      deliveriesLine("github-faults", f.d) +
        ` (${f.chaos.failed502} answered 502, ${f.chaos.performed502} of them performed, ` +
        `${f.chaos.rateLimited} rate-limited)`,
    );
    results["githubFaults"] = f;
    ok["exactlyOnceUnderGitHubFaults"] = f.d.wrongIssues.length === 0 && f.d.stored === f.d.uniqueSent;
  }
  if (scenarios.has("db-down")) {
    const r = await runDbDown();
    if ("skipped" in r) {
      say(`db-down: skipped: ${r.skipped}`);
      results["dbDown"] = r;
    } else {
      leaked.push(...r.leaked);
      const d = r.result;
      say(dbDownLine(d));
      results["dbDown"] = d;
      ok["nothingAcknowledgedLostWithTheDatabaseDown"] = d.ackedLost === 0 && d.stored === d.sent;
      ok["refusedRecoveredWithoutAnOperator"] =
        d.recoveredViaLog === d.sent - d.answered2xx && d.readyAfterMs !== null && d.wrongIssues.length === 0;
    }
  }
  say(`secrets: ${leaked.length} log lines with a secret, of every line the service printed`);
  ok["noSecretInLogs"] = leaked.length === 0;
  process.stdout.write(lines.join("\n") + "\n");
  const stamp = new Date(startedAt).toISOString().replace(/[:.]/g, "-");
  const file = writeResults(values.json ?? join(root, "bench", "results", `faults-${stamp}.json`), {
    run: runFacts({ root, startedAt, loadAtStart }),
    options: { ...o, ...dbDown, scenarios: [...scenarios], database: pgUrl ? "postgresql" : "sqlite" },
    ...results,
    leakedLines: leaked.slice(0, 20),
    ok,
  });
  process.stdout.write(`results: ${file}\n`);
  return Object.values(ok).every(Boolean) ? 0 : 1;
}

runBench("faults", main, { deadlineAt: () => deadlineAt, dropDatabases: dropAllDatabases });
