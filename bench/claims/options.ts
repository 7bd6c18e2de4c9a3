// The claim benchmark's options: the usage text, the configurations it can
// run (sqlite, pg1, pg2), parsing and checking the command line into a Config,
// and the paths and timestamp the run's outputs are named after.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Kind } from "./report.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository (this file is dist/bench/claims/options.js once built). */
export const root = resolve(here, "../../..");
/** Names this run's results and CPU profiles. */
export const stamp = new Date().toISOString().replace(/[:.]/g, "-");
export const KINDS: Record<Kind, { processes: number; pg: boolean }> = {
  sqlite: { processes: 1, pg: false },
  pg1: { processes: 1, pg: true },
  pg2: { processes: 2, pg: true },
};

export const USAGE = `Usage: npm run bench:claims -- [options]

  --database-url URL   PostgreSQL server where the role may create databases
                       (postgresql://...); without it pg1 and pg2 are skipped
  --configs LIST       of sqlite,pg1,pg2 (default all three)
  --claims N           closed loop: measured claims per configuration (default 2000)
  --warmup N           closed loop: claims before measuring, not counted (default 100)
  --concurrency N      closed loop: claimers = connections = workers, split
                       over the App processes (default 8)
  --rate N             open loop: claims per second, all App processes
                       together, on a fixed schedule (default 100)
  --seconds N          open loop: how long (default 10); it sends rate x seconds claims
  --open-connections N open loop: connections (one worker each) opened per App
                       process before the phase; more open when all are busy (default 32)
  --tasks N            queued tasks seeded (default 10000); must cover
                       warmup + claims + rate x seconds
  --repos N            repositories they are spread over (default 100)
  --label-wait N       seconds to wait for the sampled label after the phases (default 30)
  --p99-target N       open-loop claim p99 target in ms (default 50)
  --timeout-ms N       per request (default 10000)
  --max-minutes N      hard limit for the whole run (default 20)
  --cpu-prof           write a V8 CPU profile of every App process (stopped
                       with SIGTERM) to bench/results/claims-prof-<timestamp>/
`;

export interface Config {
  databaseUrl: string | null;
  configs: Kind[];
  claims: number;
  warmup: number;
  concurrency: number;
  rate: number;
  seconds: number;
  openConnections: number;
  tasks: number;
  repos: number;
  labelWaitS: number;
  p99TargetMs: number;
  timeoutMs: number;
  maxMinutes: number;
  cpuProf: string | null;
}

/** A command line the bench cannot run with; the message names the option. */
export class UsageError extends Error {}

/** An integer option of at least `min`, from parseArgs' values. */
export function integerOption(values: object, name: string, min: number): number {
  const raw = (values as Record<string, unknown>)[name];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer >= ${min}, got ${String(raw)}`);
  return n;
}

export function parseConfig(argv: string[]): Config {
  const str = (d?: string) => ({ type: "string" as const, ...(d === undefined ? {} : { default: d }) });
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      "database-url": str(),
      configs: str("sqlite,pg1,pg2"),
      claims: str("2000"),
      warmup: str("100"),
      concurrency: str("8"),
      rate: str("100"),
      seconds: str("10"),
      "open-connections": str("32"),
      tasks: str("10000"),
      repos: str("100"),
      "label-wait": str("30"),
      "p99-target": str("50"),
      "timeout-ms": str("10000"),
      "max-minutes": str("20"),
      "cpu-prof": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (v.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const num = (name: string, min: number): number => integerOption(v, name, min);
  const configs = String(v.configs)
    .split(",")
    .map((s) => s.trim()) as Kind[];
  if (configs.length === 0 || configs.some((c) => !(c in KINDS)))
    throw new UsageError(`--configs takes a comma list of sqlite,pg1,pg2`);
  const databaseUrl = v["database-url"] ?? null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new UsageError("--database-url must be postgresql://...");
  const cfg: Config = {
    databaseUrl,
    configs,
    claims: num("claims", 1),
    warmup: num("warmup", 0),
    concurrency: num("concurrency", 1),
    rate: num("rate", 1),
    seconds: num("seconds", 1),
    openConnections: num("open-connections", 1),
    tasks: num("tasks", 1),
    repos: num("repos", 1),
    labelWaitS: num("label-wait", 0),
    p99TargetMs: num("p99-target", 0),
    timeoutMs: num("timeout-ms", 100),
    maxMinutes: num("max-minutes", 1),
    cpuProf: v["cpu-prof"] ? join(root, "bench/results", `claims-prof-${stamp}`) : null,
  };
  const needed = cfg.warmup + cfg.claims + openClaims(cfg);
  if (needed > cfg.tasks) {
    throw new UsageError(
      `--tasks ${cfg.tasks} is too few: every claim takes a task, and the run makes ${needed} claims per configuration ` +
        `(--warmup ${cfg.warmup} + --claims ${cfg.claims} closed loop + --rate ${cfg.rate} x --seconds ${cfg.seconds} = ${openClaims(cfg)} open loop); ` +
        `raise --tasks to at least ${needed} or lower the others`,
    );
  }
  if (cfg.repos > 1000) throw new UsageError("--repos must be at most 1000 (names are r000..r999)");
  return cfg;
}

/** Claims the open loop sends. */
export const openClaims = (cfg: Pick<Config, "rate" | "seconds">): number => cfg.rate * cfg.seconds;
