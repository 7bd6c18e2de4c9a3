// Claim benchmark at a deep backlog: does a claim stay as fast with 10,000
// queued tasks as with 100, including when the oldest 10,000 all sit in a
// repository at its limit (the claim query has to skip them in SQL) and when
// they are spread over 100 repositories and 5 installations? It calls the
// service's own Claims.next("worker", null, workerId) in this process, on a
// database seeded directly, and puts each claimed task back before the next
// claim, so every claim sees the same world. Figures are ratios against the
// baseline (100 queued tasks in one repository) measured in the same run, on
// the same database server; absolute milliseconds are for information.
// Scenarios, seeding and plans are in ./backlog-world.ts. See bench/README.md.
import os from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { redact } from "../../src/store/db.js";
import { makeTempDir, removeTempDir } from "../ingest/targets.js";
import { integerOption, root, stamp, UsageError } from "./options.js";
import {
  buildWorld,
  claimQueries,
  CLAIM_INDEX,
  dropAllCreated,
  explain,
  queuedScan,
  release,
  runQuery,
  scenarios,
  type QueuedScan,
  type Scenario,
  type ScenarioName,
  type World,
} from "./backlog-world.js";
import { runBench } from "../lifecycle.js";
import { nearestRank } from "../ingest/load.js";
import { runFacts, writeResults } from "../results.js";

const USAGE = `Usage: npm run bench:backlog -- [options]

  --database-url URL   PostgreSQL server where the role may create databases
                       (postgresql://...; default $BENCH_DATABASE_URL); without
                       it PostgreSQL is skipped
  --providers LIST     of sqlite,postgresql (default both)
  --claims N           measured claims per scenario (default 200)
  --warmup N           claims before measuring, not counted (default 50)
  --process-warmup N   claims on a baseline world of its own before any
                       scenario, per provider, not reported (default 500):
                       the first scenario measured is not the one that pays
                       for this process's JIT and caches
  --tasks N            queued tasks in scenarios A and B (default 10000)
  --max-minutes N      hard limit for the whole run (default 5)
`;

type Provider = "sqlite" | "postgresql";

interface Options {
  databaseUrl: string | null;
  providers: Provider[];
  claims: number;
  warmup: number;
  processWarmup: number;
  tasks: number;
  maxMinutes: number;
}

function parseOptions(argv: string[]): Options {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      "database-url": { type: "string" },
      providers: { type: "string", default: "sqlite,postgresql" },
      claims: { type: "string", default: "200" },
      warmup: { type: "string", default: "50" },
      "process-warmup": { type: "string", default: "500" },
      tasks: { type: "string", default: "10000" },
      "max-minutes": { type: "string", default: "5" },
      help: { type: "boolean" },
    },
  });
  if (v.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const num = (name: string, min: number): number => integerOption(v, name, min);
  const providers = String(v.providers)
    .split(",")
    .map((s) => s.trim()) as Provider[];
  if (providers.length === 0 || providers.some((p) => p !== "sqlite" && p !== "postgresql"))
    throw new UsageError("--providers takes a comma list of sqlite,postgresql");
  const databaseUrl = v["database-url"] ?? process.env["BENCH_DATABASE_URL"] ?? null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new UsageError("--database-url must be postgresql://...");
  return {
    databaseUrl,
    providers,
    claims: num("claims", 1),
    warmup: num("warmup", 0),
    processWarmup: num("process-warmup", 0),
    tasks: num("tasks", 1),
    maxMinutes: num("max-minutes", 1),
  };
}

const log = (line: string): void => void process.stdout.write(line + "\n");
const fmt = (n: number | null | undefined, d = 2): string =>
  n !== null && n !== undefined && Number.isFinite(n) ? n.toFixed(d) : "-";

interface Stats {
  n: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest rank: every percentile is a latency some claim actually had. */
function stats(nanos: number[]): Stats {
  const { n, p50Ms, p95Ms, p99Ms, maxMs } = nearestRank(nanos);
  return { n, p50Ms, p95Ms, p99Ms, maxMs };
}

interface ScenarioRun {
  name: ScenarioName | "baseline again";
  title: string;
  queued: number;
  seedS: number;
  /** Claims.next, claim and release one at a time; release not timed. */
  next: Stats;
  /** Claims answered null (nothing claimable): must be 0. */
  empty: number;
  /** Claims from another repository than the scenario allows: must be 0. */
  wrong: number;
  /** Claims per repository, measured and warm-up together. */
  claimedFrom: Record<string, number>;
  /** Each statement of a claim's first look, alone, as often as the claims. */
  alone: { live: Stats; turn: Stats; candidates: Stats; candidateRows: number };
  plan: { candidates: string[]; live: string[]; turn: string[]; analyzed: string[] | null; queued: QueuedScan };
}

let deadlineAt = Infinity;

async function runScenario(o: Options, provider: Provider, s: Scenario, as: ScenarioRun["name"]): Promise<ScenarioRun> {
  const tag = `[${provider}] ${as}:`;
  const dir = makeTempDir("orchestra-bench-backlog-");
  let world: World | null = null;
  try {
    log(`${tag} ${s.title}`);
    let t = Date.now();
    world = await buildWorld(s, dir, provider === "postgresql" ? o.databaseUrl : null, (line) =>
      log(`${tag}   ${line}`),
    );
    const seedS = (Date.now() - t) / 1000;
    log(`${tag}   world ready in ${fmt(seedS, 1)} s (${world.bench.where})`);
    const { database, claims, workerId } = world;

    // The plans, of the statements exactly as the service builds them.
    const queries = await claimQueries(database.provider, s.repos[0]!.installationId, new Date());
    const plan = {
      candidates: await explain(database, queries.candidates),
      live: await explain(database, queries.live),
      turn: await explain(database, queries.turn),
      analyzed:
        database.provider === "postgresql" && s.name === "A" ? await explain(database, queries.candidates, true) : null,
    };
    const queued = queuedScan(database.provider, plan.candidates);
    if (s.name === "A" && as === "A") {
      log(`${tag}   candidate query (installation ${s.repos[0]!.installationId}, first window of 25):`);
      log(queries.candidates.sql.replace(/^/gm, `${tag}     `));
      log(`${tag}   plan (${database.provider === "sqlite" ? "EXPLAIN QUERY PLAN" : "EXPLAIN"}):`);
      for (const l of plan.candidates) log(`${tag}     ${l}`);
      if (plan.analyzed) {
        log(`${tag}   EXPLAIN (ANALYZE, BUFFERS), one run:`);
        for (const l of plan.analyzed) log(`${tag}     ${l}`);
      }
      log(`${tag}   installations in turn: ${plan.turn.join(" | ")}`);
      log(`${tag}   live leases per installation: ${plan.live.join(" | ")}`);
    }
    log(`${tag}   queued tasks read by: ${queued.node}${queued.sorted ? ", then sorted" : ", in index order"}`);

    // Claims, one at a time, each put back before the next.
    const nanos: number[] = [];
    const claimedFrom: Record<string, number> = {};
    let empty = 0;
    let wrong = 0;
    const total = o.warmup + o.claims;
    t = Date.now();
    for (let i = 0; i < total; i++) {
      if (Date.now() > deadlineAt) throw new Error("--max-minutes ran out");
      const t0 = process.hrtime.bigint();
      const won = await claims.next("worker", null, workerId);
      const ns = Number(process.hrtime.bigint() - t0);
      if (i >= o.warmup) nanos.push(ns);
      if (!won) {
        empty++;
        continue;
      }
      claimedFrom[won.task.repo] = (claimedFrom[won.task.repo] ?? 0) + 1;
      if (s.expect !== null && won.task.repo !== s.expect) wrong++;
      await release(database, won.task.id);
    }
    const next = stats(nanos);
    log(
      `${tag}   Claims.next ×${o.claims} (after ${o.warmup} warm-up) in ${fmt((Date.now() - t) / 1000, 1)} s: p50 ${fmt(next.p50Ms)} ms  p95 ${fmt(next.p95Ms)} ms  p99 ${fmt(next.p99Ms)} ms  max ${fmt(next.maxMs, 1)} ms` +
        `${empty ? `  NOTHING CLAIMED ${empty}×` : ""}${wrong ? `  WRONG REPOSITORY ${wrong}×` : ""}; from ${Object.keys(claimedFrom).length} repositories`,
    );

    // Each statement of the first look alone, to say where a claim's time goes.
    const time = async (q: typeof queries.live): Promise<{ s: Stats; rows: number }> => {
      const ns: number[] = [];
      let rows = 0;
      for (let i = 0; i < o.claims; i++) {
        const t0 = process.hrtime.bigint();
        rows = await runQuery(database, q);
        ns.push(Number(process.hrtime.bigint() - t0));
      }
      return { s: stats(ns), rows };
    };
    const live = await time(queries.live);
    const turn = await time(queries.turn);
    const cand = await time(queries.candidates);
    const alone = { live: live.s, turn: turn.s, candidates: cand.s, candidateRows: cand.rows };
    log(
      `${tag}   statements alone, p50/p95 ms: live leases ${fmt(live.s.p50Ms)}/${fmt(live.s.p95Ms)}, installations in turn ${fmt(turn.s.p50Ms)}/${fmt(turn.s.p95Ms)}, ` +
        `candidates ${fmt(cand.s.p50Ms)}/${fmt(cand.s.p95Ms)} (${cand.rows} rows)`,
    );
    return {
      name: as,
      title: s.title,
      queued: s.queued,
      seedS,
      next,
      empty,
      wrong,
      claimedFrom,
      alone,
      plan: { ...plan, queued },
    };
  } finally {
    await world
      ?.close()
      .catch((e: unknown) => log(`${tag} could not close or drop the database: ${(e as Error).message}`));
    removeTempDir(dir);
  }
}

/** Claims on a baseline world of its own, not reported: warms this process (JIT, the client's caches) before the baseline is measured. */
async function warmUp(o: Options, provider: Provider, s: Scenario): Promise<void> {
  if (o.processWarmup === 0) return;
  const dir = makeTempDir("orchestra-bench-backlog-");
  let world: World | null = null;
  try {
    const t = Date.now();
    world = await buildWorld(s, dir, provider === "postgresql" ? o.databaseUrl : null, () => {});
    for (let i = 0; i < o.processWarmup; i++) {
      const won = await world.claims.next("worker", null, world.workerId);
      if (won) await release(world.database, won.task.id);
    }
    log(
      `[${provider}] process warm-up: ${o.processWarmup} claims on a world like the baseline's, not reported (${fmt((Date.now() - t) / 1000, 1)} s)`,
    );
  } finally {
    await world?.close().catch(() => {});
    removeTempDir(dir);
  }
}

interface ProviderRun {
  provider: Provider;
  runs: ScenarioRun[];
}

const ratio = (x: number, base: number): string => `${fmt(x / base, 2)}×`;

function report(
  o: Options,
  results: ProviderRun[],
  skipped: string[],
  startedAt: number,
  loadAtStart: number[],
): number {
  log("");
  log(
    `Claims.next latency against the baseline (100 queued in one repository), same run, same database; ${o.claims} claims each, one at a time`,
  );
  for (const { provider, runs } of results) {
    const base = runs.find((r) => r.name === "baseline")!;
    log("");
    log(`${provider}`);
    const rows: string[][] = [
      ["scenario", "p50", "p95", "p50 ms", "p95 ms", "candidates alone p50 ms", "queued tasks read", "claims ok"],
    ];
    for (const r of runs) {
      rows.push([
        r.name,
        `${ratio(r.next.p50Ms, base.next.p50Ms)} baseline`,
        `${ratio(r.next.p95Ms, base.next.p95Ms)} baseline`,
        fmt(r.next.p50Ms),
        fmt(r.next.p95Ms),
        fmt(r.alone.candidates.p50Ms),
        `${r.plan.queued.indexed ? "index" : "NOT the index"}, ${r.plan.queued.sorted ? "then sorted" : "in order"}`,
        r.empty === 0 && r.wrong === 0 ? "yes" : `NO (${r.empty} empty, ${r.wrong} wrong repository)`,
      ]);
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows)
      log("  " + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "));
  }
  if (skipped.length) log(`\nskipped: ${skipped.join(", ")} (no --database-url or $BENCH_DATABASE_URL)`);
  log(
    '\n(nearest-rank percentiles; "baseline again" is the baseline world built and measured once more at the end: its distance from 1.00× is this run\'s noise;',
  );
  log(
    " queued tasks read: whether the candidate plan reads them through " +
      CLAIM_INDEX +
      '; "then sorted": it reads every one that passes' +
      '\n the WHERE and sorts them before it answers; "in order": it stops after 25 that pass, but walks every entry that fails the WHERE before those' +
      "\n (in A, the 10,000 of the repository at its limit); the full plans are in the results file)",
  );

  const correct = results.every((p) => p.runs.every((r) => r.empty === 0 && r.wrong === 0));
  const out = writeResults(join(root, "bench/results", `backlog-${stamp}.json`), {
    ...runFacts({ root, startedAt, loadAtStart }),
    options: { ...o, databaseUrl: o.databaseUrl ? redact(o.databaseUrl) : null },
    skipped,
    correct,
    providers: results,
  });
  log(
    `\nload average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  log(`results: ${relative(process.cwd(), out) || out}`);
  return correct ? 0 : 1;
}

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseOptions(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench:backlog: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const t0 = Date.now();
  deadlineAt = t0 + o.maxMinutes * 60_000;
  const load = os.loadavg();
  log(
    `bench:backlog  ${os.cpus().length} CPUs, load average ${load.map((l) => l.toFixed(2)).join(" ")}${load[0]! > os.cpus().length / 2 ? "  (busy machine: expect noise)" : ""}`,
  );
  log(
    `${o.warmup} warm-up + ${o.claims} measured claims per scenario, each claimed task put back before the next claim; ${o.tasks} queued tasks in A and B`,
  );
  const all = scenarios(o.tasks);
  const baseline = all.find((s) => s.name === "baseline")!;
  const results: ProviderRun[] = [];
  const skipped: string[] = [];
  for (const provider of o.providers) {
    if (provider === "postgresql" && !o.databaseUrl) {
      skipped.push(provider);
      log(
        `[postgresql] SKIPPED: needs --database-url postgresql://... or $BENCH_DATABASE_URL (a role that may create databases, e.g. the one .ci/pg-setup.sh prints)`,
      );
      continue;
    }
    await warmUp(o, provider, baseline);
    const runs: ScenarioRun[] = [];
    for (const s of all) runs.push(await runScenario(o, provider, s, s.name));
    runs.push(await runScenario(o, provider, baseline, "baseline again"));
    results.push({ provider, runs });
  }
  return report(o, results, skipped, t0, load);
}

runBench("backlog", main, { deadlineAt: () => deadlineAt, dropDatabases: dropAllCreated });
