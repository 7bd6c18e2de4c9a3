// bench:fleet: N tasks queue -> claim -> PR -> merge -> done through the real service (production settings,
// GitHub's pacing on) and real `orchestra worker` processes, on SQLite with one replica and, with
// --database-url, on PostgreSQL with one and two replicas (one of them killed with SIGKILL midway and started
// again). See bench/README.md.
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runBench } from "../lifecycle.js";
import { runFacts, writeResults } from "../results.js";
import { dropAllDatabases } from "../claims/world.js";
import { render, summarize, type Summary } from "./report.js";
import { runScenario } from "./scenario.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const USAGE = `Usage: npm run bench:fleet -- [options]
  --tasks <n>          issues queued at once [20]
  --workers <n>        orchestra worker processes [4]
  --backlog <n>        GitHub writes already waiting in the installation's outbox (replies, stale branches) [0]
  --database-url <u>   a PostgreSQL server where the role may create databases: adds pg-1 and pg-2
  --scenarios <list>   any of sqlite-1, pg-1, pg-2 [sqlite-1, and pg-1,pg-2 with --database-url]
  --max-minutes <n>    hard limit for the whole run [40]
  --json <file>        where the results go [bench/results/fleet-<time>.json]`;

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "20" },
    workers: { type: "string", default: "4" },
    backlog: { type: "string", default: "0" },
    "database-url": { type: "string" },
    scenarios: { type: "string" },
    "max-minutes": { type: "string", default: "40" },
    json: { type: "string" },
    help: { type: "boolean" },
  },
});
if (values.help) {
  process.stdout.write(USAGE + "\n");
  process.exit(0);
}
const int = (name: string, v: string, min: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`bench:fleet: --${name} must be an integer of at least ${min}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
};
const tasks = int("tasks", values.tasks, 1);
const workers = int("workers", values.workers, 1);
const backlog = int("backlog", values.backlog, 0);
const maxMinutes = int("max-minutes", values["max-minutes"], 1);
const pgUrl = values["database-url"] ?? null;
const scenarios = (values.scenarios ?? (pgUrl ? "sqlite-1,pg-1,pg-2" : "sqlite-1")).split(",");
for (const s of scenarios) {
  if (!/^(sqlite-1|pg-[12])$/.test(s)) {
    process.stderr.write(`bench:fleet: unknown scenario ${s}\n${USAGE}\n`);
    process.exit(2);
  }
  if (s.startsWith("pg") && !pgUrl) {
    process.stderr.write(`bench:fleet: ${s} needs --database-url\n`);
    process.exit(2);
  }
}
const startedAt = Date.now();
const deadlineAt = startedAt + maxMinutes * 60_000;
const stamp = new Date(startedAt).toISOString().replace(/[:.]/g, "-");

async function main(): Promise<number> {
  const loadAtStart = os.loadavg();
  const progress = (line: string) => process.stderr.write(`bench:fleet: ${line}\n`);
  const summaries: Summary[] = [];
  for (const name of scenarios) {
    const raw = await runScenario(
      {
        name,
        replicas: Number(name.split("-")[1]),
        pgUrl: name.startsWith("pg") ? pgUrl : null,
        tasks,
        workers,
        backlog,
        root,
        timeoutMs: Math.max(60_000, deadlineAt - Date.now() - 30_000),
      },
      progress,
    );
    const s = summarize(raw);
    summaries.push(s);
    progress(render([s]).split("\n")[0]!);
  }
  const one = summaries.find((s) => s.name === "pg-1");
  const two = summaries.find((s) => s.name === "pg-2");
  const ratio = one && two ? Math.round((two.claimsPerSecond / one.claimsPerSecond) * 100) / 100 : null;
  process.stdout.write(render(summaries) + "\n");
  if (ratio !== null) process.stdout.write(`\npg-2 / pg-1 claims per second: ${ratio}x (target >= 1.7x)\n`);
  const targets = summaries.map((s) => ({
    name: s.name,
    callsPerTaskAtMost10: s.callsPerTask <= 10,
    interlockLagP99AtMost5s: s.interlockLagMs.p99 <= 5000,
    noDoubleClaims: s.doubleClaims === 0,
  }));
  const file = writeResults(values.json ?? join(root, "bench", "results", `fleet-${stamp}.json`), {
    run: runFacts({ root, startedAt, loadAtStart }),
    options: { tasks, workers, backlog, scenarios },
    summaries,
    twoReplicasOverOne: ratio,
    targets,
  });
  process.stdout.write(`results: ${file}\n`);
  return summaries.some((s) => s.doubleClaims > 0 || s.violations > 0) ? 1 : 0;
}

runBench("fleet", main, { deadlineAt: () => deadlineAt, dropDatabases: dropAllDatabases });
