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

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const USAGE = `Usage: npm run bench:faults -- [options]
  --deliveries <n>     deliveries in each deliveries scenario, duplicates included [2000]
  --issues <n>         issues labelled by someone without write access [30]
  --duplicates <f>     share of deliveries sent twice [0.1]
  --kills <n>          SIGKILLs of the service while delivering [5]
  --malformed <n>      malformed or mis-signed requests [1000]
  --database-url <u>   PostgreSQL (a database of its own is created) instead of SQLite
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

async function withWorld<T>(fn: (w: FaultWorld) => Promise<T>): Promise<{ result: T; leaked: string[] }> {
  const w = await startWorld({ root, pgUrl, issues: o.issues });
  try {
    await w.start();
    const result = await fn(w);
    const secrets = w.secrets().filter((s) => s.length >= 8);
    const leaked = w.lines.filter((line) => secrets.some((s) => line.includes(s)));
    return { result, leaked };
  } finally {
    await w.close();
  }
}

async function main(): Promise<number> {
  const loadAtStart = os.loadavg();
  const timeoutMs = () => Math.max(60_000, deadlineAt - Date.now() - 60_000);
  const clean = await withWorld(async (w) => {
    const d = await deliveriesScenario(w, { ...o, timeoutMs: timeoutMs() }, progress);
    progress(deliveriesLine("deliveries", d));
    const m = await malformedScenario(w, { count: o.malformed });
    return { d, m };
  });
  const m = clean.result.m;
  const malformedLine =
    `malformed: ${m.sent} malformed or mis-signed requests: ${m.serverErrors} 5xx or dropped, ` +
    `${m.crashed ? "crashed" : "0 crashes"}, rows ${m.rowsBefore} -> ${m.rowsAfter}, ` +
    `GitHub's HMAC test vector ${m.testVectorHolds ? "holds" : "DOES NOT HOLD"}`;
  progress(malformedLine);
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
  const f = faulty.result;
  const faultsLine =
    deliveriesLine("github-faults", f.d) +
    ` (${f.chaos.failed502} answered 502, ${f.chaos.performed502} of them performed, ${f.chaos.rateLimited} rate-limited)`;
  progress(faultsLine);
  const leaked = [...clean.leaked, ...faulty.leaked];
  const secretsLine = `secrets: ${leaked.length} log lines with a secret, of every line the service printed`;
  process.stdout.write(
    [deliveriesLine("deliveries", clean.result.d), malformedLine, faultsLine, secretsLine].join("\n") + "\n",
  );
  const ok = {
    exactlyOnce: clean.result.d.wrongIssues.length === 0 && clean.result.d.stored === clean.result.d.uniqueSent,
    exactlyOnceUnderGitHubFaults: f.d.wrongIssues.length === 0 && f.d.stored === f.d.uniqueSent,
    malformedHarmless: m.serverErrors === 0 && !m.crashed && m.rowsBefore === m.rowsAfter && m.testVectorHolds,
    noSecretInLogs: leaked.length === 0,
  };
  const stamp = new Date(startedAt).toISOString().replace(/[:.]/g, "-");
  const file = writeResults(values.json ?? join(root, "bench", "results", `faults-${stamp}.json`), {
    run: runFacts({ root, startedAt, loadAtStart }),
    options: { ...o, database: pgUrl ? "postgresql" : "sqlite" },
    deliveries: clean.result.d,
    malformed: m,
    githubFaults: f,
    leakedLines: leaked.slice(0, 20),
    ok,
  });
  process.stdout.write(`results: ${file}\n`);
  return Object.values(ok).every(Boolean) ? 0 : 1;
}

runBench("faults", main, { deadlineAt: () => deadlineAt, dropDatabases: dropAllDatabases });
