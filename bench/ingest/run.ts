// Ingest benchmark: the same signed deliveries, at the same concurrency and
// rate, against Orchestra and against a bare Probot app, one after the other
// in a single run, so the ratio between them is what the numbers mean.
// See bench/README.md for how to run it and how to read the output.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { closedLoop, openLoop, WebhookClient, type OpenLoopResult, type PhaseResult } from "./load.js";
import { buildPool, deliveries, type Pool } from "./payloads.js";
import {
  cleanupAllSync,
  freePort,
  makeTempDir,
  processCpuMs,
  processPeakRssMb,
  processRssMb,
  removeTempDir,
  settle,
  type Settle,
  StartError,
  startTarget,
  stopTarget,
} from "./targets.js";
import { formatProfile, profileIn, summariseProfile, type ProfileSummary } from "./profile.js";
import { checkPostgres, checkSqlite, pgRowCount, sqlitePath, type StoreCheck } from "./verify.js";

const here = dirname(fileURLToPath(import.meta.url));
// dist/bench/ingest/run.js -> repository root
const root = resolve(here, "../../..");

const USAGE = `Usage: npm run bench:ingest -- [options]

  --target LIST         subject,baseline (default orchestra,bare; bare,bare tests the harness)
  --count N             closed-loop deliveries per target (default 5000)
  --concurrency N       closed-loop senders = max sockets (default 32)
  --rate N              open-loop deliveries per second (default 500)
  --seconds N           open-loop duration (default 10)
  --warmup N            warm-up deliveries per target, not measured (default 500)
  --settle N            minimum pause between phases in seconds (default 2)
  --settle-max N        then wait up to N s for the server to go idle (default 30)
  --rounds N            alternate the targets N times, report medians (default 1)
  --database-url URL    Orchestra's database (default a fresh SQLite file per start;
                        postgres://... benches PostgreSQL)
  --distinct N          distinct precomputed bodies (default 2000)
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
`;

type Kind = "orchestra" | "bare";

interface Config {
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
  distinct: number;
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
}

function parseConfig(argv: string[]): Config {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      target: { type: "string", default: "orchestra,bare" },
      count: { type: "string", default: "5000" },
      concurrency: { type: "string", default: "32" },
      rate: { type: "string", default: "500" },
      seconds: { type: "string", default: "10" },
      warmup: { type: "string", default: "500" },
      settle: { type: "string", default: "2" },
      "settle-max": { type: "string", default: "30" },
      rounds: { type: "string", default: "1" },
      "database-url": { type: "string" },
      distinct: { type: "string", default: "2000" },
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
  const databaseUrl = values["database-url"] ?? null;
  if (databaseUrl && !/^(postgres(ql)?:\/\/|file:)/.test(databaseUrl)) {
    throw new UsageError(`--database-url must be postgres://... or file:...`);
  }
  return {
    targets: targets as Kind[],
    count: Math.floor(num("count", values.count, 1)),
    concurrency: Math.floor(num("concurrency", values.concurrency, 1)),
    rate: num("rate", values.rate, 1),
    seconds: num("seconds", values.seconds, 1),
    warmup: Math.floor(num("warmup", values.warmup, 0)),
    settleS: num("settle", values.settle, 0),
    settleMaxS: num("settle-max", values["settle-max"], 0),
    rounds: Math.floor(num("rounds", values.rounds, 1)),
    databaseUrl,
    distinct: Math.floor(num("distinct", values.distinct, 1)),
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
  };
}

class UsageError extends Error {}

/** Preloaded into profiled targets: exit now, so that `--cpu-prof` writes the profile. */
const EXIT_ON_SIGUSR2 = `data:text/javascript,process.on("SIGUSR2",()=>process.exit(0))`;

interface Secrets {
  privateKey: string;
  webhookSecret: string;
  adminToken: string;
}

function makeSecrets(): Secrets {
  // Throwaway credentials: the key signs nothing that leaves this machine.
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return {
    privateKey,
    webhookSecret: randomBytes(24).toString("hex"),
    adminToken: randomBytes(32).toString("hex"),
  };
}

interface PhaseWithCost<T extends PhaseResult> {
  result: T;
  serverCpuMs: number | null;
  clientCpuMs: number;
}

interface SessionResult {
  label: string;
  kind: Kind;
  round: number;
  readyMs: number;
  warmup: PhaseResult;
  settleAfterWarmup: Settle;
  open: PhaseWithCost<OpenLoopResult>;
  settleAfterOpen: Settle;
  saturation: PhaseWithCost<PhaseResult>;
  serverPeakRssMb: number | null;
  /** Resident memory once ready, before any delivery. */
  serverIdleRssMb: number | null;
  profile: ProfileSummary | null;
  serverOutputLines: number;
  serverOutputTail: string;
  store: StoreCheck | null;
}

const log = (line: string): void => {
  process.stdout.write(line + "\n");
};

const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : "-");

function phaseLine(label: string, phase: string, r: PhaseResult, extra = ""): string {
  const problems = r.non2xx + r.failed > 0 ? `  non-2xx ${r.non2xx} failed ${r.failed}` : "";
  const cut = r.timedOut ? "  DEADLINE HIT" : "";
  return (
    `[${label}] ${phase.padEnd(10)} ${String(r.acked).padStart(6)}/${r.sent} acked in ${fmt(r.elapsedS, 2)} s` +
    `  ${fmt(r.throughputPerS, 0)}/s  p50 ${fmt(r.p50Ms, 2)} ms  p99 ${fmt(r.p99Ms, 2)} ms  max ${fmt(r.maxMs, 1)} ms` +
    extra +
    problems +
    cut
  );
}

function settleLine(label: string, s: Settle): string {
  const cpu = s.lastCpuShare === null ? "" : ` (server at ${Math.round(s.lastCpuShare * 100)}% of a CPU)`;
  return `[${label}] settle     ${s.quiet ? "idle" : "STILL BUSY"} after ${fmt(s.seconds, 1)} s${cpu}`;
}

async function measured<T extends PhaseResult>(pid: number | undefined, fn: () => Promise<T>): Promise<PhaseWithCost<T>> {
  const cpu0 = processCpuMs(pid);
  const client0 = process.cpuUsage();
  const result = await fn();
  const cpu1 = processCpuMs(pid);
  const client = process.cpuUsage(client0);
  return {
    result,
    serverCpuMs: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null,
    clientCpuMs: (client.user + client.system) / 1000,
  };
}

async function runSession(
  profileRoot: string | null,
  cfg: Config,
  secrets: Secrets,
  pool: Pool,
  kind: Kind,
  label: string,
  round: number,
): Promise<SessionResult> {
  const dir = makeTempDir(`orchestra-bench-${kind}-`);
  try {
    const port = await freePort();
    let ghePort = await freePort();
    while (ghePort === port) ghePort = await freePort();
    const databaseUrl = cfg.databaseUrl ?? `file:${join(dir, "orchestra.db")}`;
    // A clean environment rather than this process's: nothing inherited (a
    // stray DATABASE_URL, WEBHOOK_PROXY_URL, NODE_OPTIONS) can make the two
    // targets differ or send traffic off this machine. The working directory
    // is the empty temp dir because Probot loads ./.env over the environment.
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: dir,
      TMPDIR: dir,
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      LOG_FORMAT: "json",
      HOST: "127.0.0.1",
      PORT: String(port),
      APP_ID: "123456",
      PRIVATE_KEY: secrets.privateKey,
      WEBHOOK_SECRET: secrets.webhookSecret,
      ORCHESTRA_ADMIN_TOKEN: secrets.adminToken,
      DATABASE_URL: databaseUrl,
      // Nothing listens there: any GitHub call the service makes while
      // processing fails fast on 127.0.0.1 instead of reaching the internet.
      GHE_HOST: `127.0.0.1:${ghePort}`,
      GHE_PROTOCOL: "http",
    };
    const isPg = databaseUrl.startsWith("postgres");
    const rowsBefore = kind === "orchestra" && isPg ? await pgRowCount(databaseUrl) : 0;
    if (rowsBefore > 0) {
      // Rows a killed earlier run left unprocessed get processed during this
      // one and cost CPU that the bare app never pays.
      log(`[${label}] note: the database already holds ${rowsBefore} deliveries; a fresh database gives cleaner figures`);
    }

    const script = kind === "orchestra" ? cfg.orchestraMain : join(here, "bare-app.js");
    const profileDir = profileRoot ? join(profileRoot, `${label.replace(/[^\w-]/g, "_")}-round${round}`) : null;
    const t0 = Date.now();
    const target = await startTarget({
      name: label,
      script,
      cwd: dir,
      env,
      port,
      readyPath: kind === "orchestra" ? "/ready" : "/ping",
      startTimeoutMs: cfg.startTimeoutS * 1000,
      execArgv: profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir, "--import", EXIT_ON_SIGUSR2] : [],
    });
    const readyMs = Date.now() - t0;
    const pid = target.child.pid;
    const serverIdleRssMb = processRssMb(pid);
    log(`[${label}] ready in ${readyMs} ms on 127.0.0.1:${port} (pid ${pid}, round ${round}), RSS ${serverIdleRssMb ?? "-"} MB`);
    // A fresh agent per phase: idle keep-alive sockets do not outlive the
    // server's keep-alive timeout during a long settle, and a reused socket the
    // server is just closing would show up as a spurious failure.
    const clients: WebhookClient[] = [];
    const client = (): WebhookClient => {
      clients.forEach((c) => c.close());
      clients.push(new WebhookClient(port, cfg.concurrency, cfg.timeoutMs));
      return clients[clients.length - 1]!;
    };
    const allAcked: string[] = [];
    let sessionFailed = true;
    try {
      // Same bodies in the same order for every target; fresh delivery ids.
      const warmBatch = deliveries(pool, cfg.warmup, 0);
      const openBatch = deliveries(pool, Math.round(cfg.rate * cfg.seconds), cfg.warmup);
      const satBatch = deliveries(pool, cfg.count, cfg.warmup + openBatch.length);
      const phaseDeadline = (ms: number): number => ms + cfg.timeoutMs + 10_000;

      const warmup = await closedLoop(client(), warmBatch, phaseDeadline(120_000));
      allAcked.push(...warmup.ackedIds);
      log(phaseLine(label, "warm-up", warmup));
      const settleAfterWarmup = await settle(pid, cfg.settleS, Math.max(cfg.settleS, cfg.settleMaxS));
      log(settleLine(label, settleAfterWarmup));

      // Open loop first: it is the steady-state figure the p99 target is
      // about, so it must not inherit the backlog a saturation burst leaves
      // for Orchestra's background processing.
      const open = await measured(pid, () =>
        openLoop(client(), openBatch, cfg.rate, phaseDeadline(cfg.seconds * 1000)),
      );
      allAcked.push(...open.result.ackedIds);
      log(
        phaseLine(
          label,
          `${cfg.rate}/s`,
          open.result,
          `  (sent at ${fmt(open.result.sendRatePerS, 0)}/s, client lag p99 ${fmt(open.result.sendLagP99Ms, 2)} ms)`,
        ),
      );
      const settleAfterOpen = await settle(pid, cfg.settleS, Math.max(cfg.settleS, cfg.settleMaxS));
      log(settleLine(label, settleAfterOpen));

      const saturation = await measured(pid, () => closedLoop(client(), satBatch, phaseDeadline(180_000)));
      allAcked.push(...saturation.result.ackedIds);
      log(phaseLine(label, `c=${cfg.concurrency}`, saturation.result));

      const serverPeakRssMb = processPeakRssMb(pid);
      log(`[${label}] memory     RSS ${processRssMb(pid) ?? "-"} MB after the phases, peak ${serverPeakRssMb ?? "-"} MB`);
      clients.forEach((c) => c.close());
      // A profile is written only when the process exits on its own; a
      // profiled target exits at once on SIGUSR2 (not a graceful stop, which
      // would first work off the backlog and profile that too).
      if (profileDir) await stopTarget(target, 30_000, "SIGUSR2");
      else await stopTarget(target);
      let profile: ProfileSummary | null = null;
      if (profileDir) {
        const file = profileIn(profileDir);
        if (file) {
          profile = summariseProfile(file, root, cfg.profileTop);
          log(formatProfile(label, profile));
        } else log(`[${label}] profile    none written to ${profileDir}`);
      }
      const serverOutputLines = target.output.lines;
      if (serverOutputLines > 0) log(`[${label}] output     ${serverOutputLines} lines at LOG_LEVEL=warn (tail in the JSON results)`);

      let store: StoreCheck | null = null;
      if (kind === "orchestra") {
        store = isPg
          ? await checkPostgres(databaseUrl, rowsBefore, allAcked)
          : checkSqlite(sqlitePath(databaseUrl), allAcked);
        log(
          `[${label}] store      ${store.storedRows} rows in "Delivery" for ${store.acked} acked` +
            `, ${store.ackedMissing} acked missing, ${store.extraRows} extra` +
            (store.error ? `  ERROR ${store.error}` : ""),
        );
      }
      sessionFailed = false;
      const serverOutputTail = target.output.toString().slice(-2000);
      return {
        label,
        kind,
        round,
        readyMs,
        warmup,
        settleAfterWarmup,
        open,
        settleAfterOpen,
        saturation,
        serverPeakRssMb,
        serverIdleRssMb,
        profile,
        serverOutputLines,
        serverOutputTail,
        store,
      };
    } finally {
      clients.forEach((c) => c.close());
      await stopTarget(target);
      if (sessionFailed) {
        const tail = target.output.toString().trim();
        if (tail) log(`[${label}] last output:\n${tail}`);
      }
    }
  } finally {
    removeTempDir(dir);
  }
}

function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

interface Summary {
  label: string;
  kind: Kind;
  saturation: { throughputPerS: number; p50Ms: number; p99Ms: number; maxMs: number; bad: number; serverCpuMsPerDelivery: number | null };
  open: {
    achievedPerS: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    bad: number;
    serverCpuMsPerDelivery: number | null;
    /** Seconds after the last ack until the server went idle (null: it never did). */
    idleAfterS: number | null;
  };
  peakRssMb: number | null;
  idleRssMb: number | null;
}

function summarise(sessions: SessionResult[]): Summary {
  const first = sessions[0]!;
  const perDelivery = (p: PhaseWithCost<PhaseResult>): number =>
    p.serverCpuMs === null || p.result.sent === 0 ? NaN : p.serverCpuMs / p.result.sent;
  const orNull = (n: number): number | null => (Number.isFinite(n) ? n : null);
  const m = (f: (s: SessionResult) => number): number => median(sessions.map(f));
  // Medians of one phase's latency, errors summed, cost per delivery.
  const phase = (pick: (s: SessionResult) => PhaseWithCost<PhaseResult>) => ({
    p50Ms: m((s) => pick(s).result.p50Ms),
    p99Ms: m((s) => pick(s).result.p99Ms),
    maxMs: m((s) => pick(s).result.maxMs),
    bad: sessions.reduce((n, s) => n + pick(s).result.non2xx + pick(s).result.failed, 0),
    serverCpuMsPerDelivery: orNull(m((s) => perDelivery(pick(s)))),
  });
  return {
    label: first.label,
    kind: first.kind,
    saturation: {
      throughputPerS: m((s) => s.saturation.result.throughputPerS),
      ...phase((s) => s.saturation),
    },
    open: {
      achievedPerS: m((s) => s.open.result.throughputPerS),
      ...phase((s) => s.open),
      idleAfterS: sessions.every((s) => s.settleAfterOpen.quiet) ? m((s) => s.settleAfterOpen.seconds) : null,
    },
    peakRssMb: orNull(m((s) => s.serverPeakRssMb ?? NaN)),
    idleRssMb: orNull(m((s) => s.serverIdleRssMb ?? NaN)),
  };
}

function table(cfg: Config, a: Summary, b: Summary): string {
  const rows: [string, string, string, string][] = [];
  const ratio = (x: number, y: number): string => (y > 0 && Number.isFinite(x) ? `${(x / y).toFixed(2)}x` : "-");
  const cpu = (n: number | null): string => (n === null ? "-" : n.toFixed(3));
  const add = (name: string, x: number | string, y: number | string, r = "", digits = 1): void => {
    const cell = (v: number | string): string => (typeof v === "number" ? fmt(v, digits) : v);
    rows.push([name, cell(x), cell(y), r]);
  };
  rows.push([`closed loop: ${cfg.count} deliveries, concurrency ${cfg.concurrency}`, "", "", ""]);
  add("  throughput (acked/s)", a.saturation.throughputPerS, b.saturation.throughputPerS, ratio(a.saturation.throughputPerS, b.saturation.throughputPerS), 0);
  add("  ack latency p50 (ms)", a.saturation.p50Ms, b.saturation.p50Ms, ratio(a.saturation.p50Ms, b.saturation.p50Ms), 2);
  add("  ack latency p99 (ms)", a.saturation.p99Ms, b.saturation.p99Ms, ratio(a.saturation.p99Ms, b.saturation.p99Ms), 2);
  add("  ack latency max (ms)", a.saturation.maxMs, b.saturation.maxMs, "", 1);
  add("  non-2xx + failed", String(a.saturation.bad), String(b.saturation.bad));
  add("  server CPU ms/delivery", cpu(a.saturation.serverCpuMsPerDelivery), cpu(b.saturation.serverCpuMsPerDelivery));
  rows.push([`open loop: ${cfg.rate}/s for ${cfg.seconds} s`, "", "", ""]);
  add("  achieved (acked/s)", a.open.achievedPerS, b.open.achievedPerS, "", 0);
  add("  ack latency p50 (ms)", a.open.p50Ms, b.open.p50Ms, ratio(a.open.p50Ms, b.open.p50Ms), 2);
  add("  ack latency p99 (ms)", a.open.p99Ms, b.open.p99Ms, ratio(a.open.p99Ms, b.open.p99Ms), 2);
  add("  ack latency max (ms)", a.open.maxMs, b.open.maxMs, "", 1);
  add("  non-2xx + failed", String(a.open.bad), String(b.open.bad));
  add("  server CPU ms/delivery", cpu(a.open.serverCpuMsPerDelivery), cpu(b.open.serverCpuMsPerDelivery));
  const idle = (s: Summary): string => (s.open.idleAfterS === null ? "never" : fmt(s.open.idleAfterS, 1));
  add("  idle again after (s)", idle(a), idle(b));
  const mb = (n: number | null): string => (n === null ? "-" : String(n));
  add("server RSS when ready (MB)", mb(a.idleRssMb), mb(b.idleRssMb), ratio(a.idleRssMb ?? NaN, b.idleRssMb ?? NaN));
  add("server peak RSS (MB)", mb(a.peakRssMb), mb(b.peakRssMb), ratio(a.peakRssMb ?? NaN, b.peakRssMb ?? NaN));

  const header: [string, string, string, string] = ["", a.label, b.label, `${a.label}/${b.label}`];
  const all = [header, ...rows];
  const w0 = Math.max(...all.map((r) => r[0].length));
  const w = [1, 2, 3].map((i) => Math.max(10, ...all.map((r) => r[i as 1]!.length)));
  return all
    .map((r) =>
      r[1] === "" && r[2] === "" && r !== header
        ? r[0]
        : `${r[0].padEnd(w0)}  ${r[1].padStart(w[0]!)}  ${r[2].padStart(w[1]!)}  ${r[3].padStart(w[2]!)}`,
    )
    .join("\n");
}

function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  let cfg: Config;
  try {
    cfg = parseConfig(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  // However the run goes wrong, it ends: this fires even if a phase hangs.
  setTimeout(() => {
    process.stderr.write(`bench:ingest: --max-minutes ${cfg.maxMinutes} exceeded, stopping\n`);
    cleanupAllSync();
    process.exit(3);
  }, cfg.maxMinutes * 60_000).unref();

  for (const kind of new Set(cfg.targets)) {
    const script = kind === "orchestra" ? cfg.orchestraMain : join(here, "bare-app.js");
    if (!existsSync(script)) {
      process.stderr.write(`${relative(root, script)} is missing: run \`npm run build\` first (npm run bench:ingest does)\n`);
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
    log(`warning: load average ${loadAtStart.toFixed(2)} on ${cpus.length} CPUs before starting; expect noise (try --rounds 3)`);
  }
  const secrets = makeSecrets();
  const t0 = Date.now();
  const pool = buildPool({ secret: secrets.webhookSecret, distinct: cfg.distinct, keys: cfg.keys, seed: cfg.seed });
  log(
    `payloads: ${pool.bodies.length} distinct bodies (mean ${pool.meanBytes} B) over ${cfg.keys} issue/PR numbers, ` +
      `signed in ${Date.now() - t0} ms; mix ${Object.entries(pool.mix)
        .map(([k, v]) => `${k} ${Math.round((100 * v) / pool.bodies.length)}%`)
        .join(", ")}`,
  );

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const profileRoot = cfg.profile ? join(root, "bench/results", `profiles-${stamp}`) : null;
  if (profileRoot) log(`profiles: ${relative(process.cwd(), profileRoot) || profileRoot}`);
  const sessions: SessionResult[] = [];
  for (let round = 1; round <= cfg.rounds; round++) {
    // Alternate who goes first so slow drift (thermal, page cache, a noisy
    // neighbour) does not always favour the same target.
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    for (const i of order) {
      sessions.push(await runSession(profileRoot, cfg, secrets, pool, cfg.targets[i]!, labels[i]!, round));
    }
  }

  const a = summarise(sessions.filter((s) => s.label === labels[0]));
  const b = summarise(sessions.filter((s) => s.label === labels[1]));
  log("");
  if (cfg.rounds > 1) {
    // Each round's own ratio, so the spread (and any effect of who went first) is visible.
    for (let round = 1; round <= cfg.rounds; round++) {
      const sa = sessions.find((s) => s.round === round && s.label === labels[0]);
      const sb = sessions.find((s) => s.round === round && s.label === labels[1]);
      if (!sa || !sb) continue;
      const first = round % 2 === 1 ? labels[0] : labels[1];
      log(
        `round ${round} (${first} first): throughput ${fmt(sa.saturation.result.throughputPerS, 0)} vs ${fmt(sb.saturation.result.throughputPerS, 0)}/s` +
          ` = ${fmt(sa.saturation.result.throughputPerS / sb.saturation.result.throughputPerS, 2)}x;` +
          ` open-loop p99 ${fmt(sa.open.result.p99Ms, 2)} vs ${fmt(sb.open.result.p99Ms, 2)} ms; peak RSS ${sa.serverPeakRssMb ?? "-"} vs ${sb.serverPeakRssMb ?? "-"} MB`,
      );
    }
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
  log(
    `  ${a.label} throughput >= 1.00x ${b.label}:  ${fmt(throughputRatio, 2)}x  ${verdict(throughputRatio >= 1)}`,
  );
  log(
    `  ${a.label} p99 ack at ${cfg.rate}/s <= ${cfg.p99TargetMs} ms:  ${fmt(a.open.p99Ms, 2)} ms` +
      `${openClean ? "" : ` with ${a.open.bad} non-2xx/failed`}  ${verdict(p99Pass)}` +
      `  (${b.label}: ${fmt(b.open.p99Ms, 2)} ms)`,
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
    commit: gitCommit(),
    machine: { loadAverageAtStart: loadAtStart, loadAverageAtEnd: os.loadavg()[0] ?? null, node: process.version, platform: `${os.platform()} ${os.release()}`, cpus: cpus.length, cpuModel: cpus[0]?.model ?? null },
    config: { ...cfg, databaseUrl: cfg.databaseUrl ? cfg.databaseUrl.replace(/\/\/[^@/]*@/, "//***@") : "sqlite (fresh file per start)" },
    payloads: { distinct: pool.bodies.length, meanBytes: pool.meanBytes, mix: pool.mix },
    summary: { subject: a, baseline: b },
    targets: {
      throughputRatio,
      throughputPass: throughputRatio >= 1,
      p99TargetMs: cfg.p99TargetMs,
      subjectOpenP99Ms: a.open.p99Ms,
      p99Pass,
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
  const fast = throughputRatio >= 1 && p99Pass;
  return correct && (fast || !cfg.strict) ? 0 : 1;
}

process.on("exit", cleanupAllSync);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    process.stderr.write(`bench:ingest: ${signal}, cleaning up\n`);
    cleanupAllSync();
    process.exit(128 + (os.constants.signals[signal] ?? 0));
  });
}

main().then(
  (code) => {
    cleanupAllSync();
    process.exit(code);
  },
  (e: unknown) => {
    const detail = e instanceof StartError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
    process.stderr.write(`bench:ingest failed: ${detail}\n`);
    cleanupAllSync();
    process.exit(1);
  },
);
