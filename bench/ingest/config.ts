// bench:ingest options: usage text, parsing and checks.
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { HOT_SHAPES, type HotShape } from "./hot-payloads.js";

export const USAGE = `Usage: npm run bench:ingest -- [options]

  --target LIST         subject,baseline (default orchestra,bare; bare,bare tests the harness)
  --count N             closed-loop deliveries per target (default 5000; with --hot-key,
                        per round, default 3000)
  --concurrency N       closed-loop senders = max sockets (default 32)
  --rate N              open-loop deliveries per second (default 500)
  --seconds N           open-loop duration (default 10)
  --warmup N            warm-up deliveries per target, not measured (default 500)
  --settle N            minimum pause between phases in seconds (default 2)
  --settle-max N        then wait up to N s for the server to go idle (default 30)
  --rounds N            alternate the targets N times, report medians (default 1;
                        with --hot-key, rounds on the same running targets, default 4)
  --database-url URL    Orchestra's database (default a fresh SQLite file per start;
                        postgres://... benches PostgreSQL)
  --distinct N          distinct precomputed bodies (default one per delivery; fewer
                        repeat bodies, which Orchestra acknowledges as replays and
                        does not store, so the store check counts them missing)
  --keys N              distinct issue/PR numbers, i.e. task keys (default 1000)
  --seed N              payload PRNG seed (default 1)
  --timeout-ms N        per-request timeout (default 10000)
  --start-timeout N     seconds to wait for readiness (default 60)
  --p99-target N        open-loop p99 target in ms (default 25)
  --max-minutes N       hard limit for the whole run (default 15)
  --out FILE            JSON results path (default bench/results/ingest-<timestamp>.json)
  --orchestra-main FILE the service's entry point (default dist/src/main.js)
  --strict              exit 1 when a performance target is missed, not only
                        when a delivery is lost or a request fails
  --profile             run both targets under \`node --cpu-prof\` and print each one's
                        frames with the most self time; the targets are then stopped
                        with an exit on SIGUSR2 (so they write the profile), not SIGKILL
  --profile-top N       frames to print per profile (default 15)

  --hot                 the hot-key mode with both shapes, as --hot-key issue,checks
  --hot-key SHAPES      every delivery on one task key instead: issue (issue_comment.created
                        on one issue), checks (a CI matrix's check_run.created/completed on
                        one PR's head sha) or issue,checks; no open loop, no profile
  --matrix N            check runs per CI matrix for --hot-key checks (default 40)
  --drain-seconds N     after each round, watch the backlog drain for N s (default 5)
  --drain-max N         after the last round, wait up to N s for it to empty (default 60)
`;

export type Kind = "orchestra" | "bare";

export interface Config {
  targets: Kind[];
  count: number;
  concurrency: number;
  rate: number;
  seconds: number;
  warmup: number;
  settleS: number;
  settleMaxS: number;
  rounds: number;
  databaseUrl: string | null;
  /** Distinct bodies per round; null: one per delivery. */
  distinct: number | null;
  keys: number;
  seed: number;
  timeoutMs: number;
  startTimeoutS: number;
  p99TargetMs: number;
  maxMinutes: number;
  out: string | null;
  strict: boolean;
  orchestraMain: string;
  profile: boolean;
  profileTop: number;
  /** Shapes of the hot-key mode, in order; null for the usual spread over many keys. */
  hotKey: HotShape[] | null;
  matrix: number;
  drainS: number;
  drainMaxS: number;
}

export function parseConfig(argv: string[], root: string): Config {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      target: { type: "string", default: "orchestra,bare" },
      count: { type: "string" },
      concurrency: { type: "string", default: "32" },
      rate: { type: "string", default: "500" },
      seconds: { type: "string", default: "10" },
      warmup: { type: "string", default: "500" },
      settle: { type: "string", default: "2" },
      "settle-max": { type: "string", default: "30" },
      rounds: { type: "string" },
      "database-url": { type: "string" },
      distinct: { type: "string" },
      keys: { type: "string", default: "1000" },
      seed: { type: "string", default: "1" },
      "timeout-ms": { type: "string", default: "10000" },
      "start-timeout": { type: "string", default: "60" },
      "p99-target": { type: "string", default: "25" },
      "max-minutes": { type: "string", default: "15" },
      out: { type: "string" },
      strict: { type: "boolean", default: false },
      "orchestra-main": { type: "string" },
      profile: { type: "boolean", default: false },
      "profile-top": { type: "string", default: "15" },
      hot: { type: "boolean", default: false },
      "hot-key": { type: "string" },
      matrix: { type: "string", default: "40" },
      "drain-seconds": { type: "string", default: "5" },
      "drain-max": { type: "string", default: "60" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const num = (name: string, raw: string | undefined, min: number): number => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number >= ${min}, got ${raw}`);
    return n;
  };
  const targets = String(values.target)
    .split(",")
    .map((s) => s.trim());
  if (targets.length !== 2 || targets.some((t) => t !== "orchestra" && t !== "bare")) {
    throw new UsageError(`--target takes two of orchestra|bare, e.g. orchestra,bare; got ${values.target}`);
  }
  const hotRaw = values["hot-key"] ?? (values.hot ? HOT_SHAPES.join(",") : undefined);
  const hotKey = hotRaw === undefined ? null : hotRaw.split(",").map((x) => x.trim());
  if (hotKey && (hotKey.length === 0 || hotKey.some((x) => !HOT_SHAPES.includes(x as HotShape)))) {
    throw new UsageError(`--hot-key takes ${HOT_SHAPES.join(", ")} or both, comma-separated; got ${hotRaw}`);
  }
  if (hotKey && values.target !== "orchestra,bare")
    throw new UsageError("--hot-key always runs orchestra against bare");
  if (hotKey && values.profile) throw new UsageError("--profile is not available with --hot-key");
  const databaseUrl = values["database-url"] ?? null;
  if (databaseUrl && !/^(postgres(ql)?:\/\/|file:)/.test(databaseUrl)) {
    throw new UsageError(`--database-url must be postgres://... or file:...`);
  }
  return {
    targets: targets as Kind[],
    count: Math.floor(num("count", values.count ?? (hotKey ? "3000" : "5000"), 1)),
    concurrency: Math.floor(num("concurrency", values.concurrency, 1)),
    rate: num("rate", values.rate, 1),
    seconds: num("seconds", values.seconds, 1),
    warmup: Math.floor(num("warmup", values.warmup, 0)),
    settleS: num("settle", values.settle, 0),
    settleMaxS: num("settle-max", values["settle-max"], 0),
    rounds: Math.floor(num("rounds", values.rounds ?? (hotKey ? "4" : "1"), 1)),
    databaseUrl,
    distinct: values.distinct === undefined ? null : Math.floor(num("distinct", values.distinct, 1)),
    keys: Math.floor(num("keys", values.keys, 1)),
    seed: Math.floor(num("seed", values.seed, 0)),
    timeoutMs: num("timeout-ms", values["timeout-ms"], 100),
    startTimeoutS: num("start-timeout", values["start-timeout"], 1),
    p99TargetMs: num("p99-target", values["p99-target"], 0),
    maxMinutes: num("max-minutes", values["max-minutes"], 1),
    out: values.out ?? null,
    strict: values.strict === true,
    orchestraMain: values["orchestra-main"] ? resolve(values["orchestra-main"]) : join(root, "dist/src/main.js"),
    profile: values.profile === true,
    profileTop: Math.floor(num("profile-top", values["profile-top"], 1)),
    hotKey: hotKey as HotShape[] | null,
    matrix: Math.floor(num("matrix", values.matrix, 1)),
    drainS: num("drain-seconds", values["drain-seconds"], 1),
    drainMaxS: num("drain-max", values["drain-max"], 0),
  };
}

export class UsageError extends Error {}

/** Preloaded into profiled targets: exit now, so that `--cpu-prof` writes the profile. */
export const EXIT_ON_SIGUSR2 = `data:text/javascript,process.on("SIGUSR2",()=>process.exit(0))`;

/** The database as a results file names it: a URL's password masked, or the embedded default. */
export function maskedDatabase(url: string | null): string {
  return url ? url.replace(/\/\/[^@/]*@/, "//***@") : "sqlite (fresh file per start)";
}
