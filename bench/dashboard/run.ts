// Dashboard benchmark: how does the operator dashboard's response time grow
// with the size of the fleet, and how does it compare with the JSON API that
// lists the same tasks? For each world (a baseline of 100 tasks, a large one
// of 5,000, and the baseline once more as a noise gauge) it seeds a fresh
// database directly, starts the service as users run it (node
// dist/src/main.js, NODE_ENV=production), signs in, and times GET /dashboard,
// GET /dashboard/tasks/<id> and GET /api/v1/tasks, one request at a time.
// Figures are ratios measured in the same run: dashboard against the API list
// in the same world, and each route in the large world against the baseline
// world; absolute milliseconds are for information. See bench/README.md.
import os from "node:os";
import http from "node:http";
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { redact } from "../../src/store/db.js";
import {
  freePort,
  makeTempDir,
  serviceEnv,
  processRssMb,
  removeTempDir,
  settle,
  startTarget,
  stopTarget,
  type RunningTarget,
} from "../ingest/targets.js";
import { formatProfile, profileIn, summariseProfile, type ProfileSummary } from "../ingest/profile.js";
import { EXIT_ON_SIGUSR2 } from "../ingest/config.js";
import { integerOption, root, stamp, UsageError } from "../claims/options.js";
import { dropAllDatabases, freshDatabase, type BenchDb } from "../claims/world.js";
import { seedWorld, split, type WorldFacts, type WorldSpec } from "./world.js";
import { runBench } from "../lifecycle.js";
import { nearestRank } from "../ingest/load.js";
import { runFacts, writeResults } from "../results.js";
import { makeSecrets } from "../ingest/session.js";
import { SERVICE_NODE_FLAGS } from "../../src/app/node-flags.js";

const USAGE = `Usage: npm run bench:dashboard -- [options]

  --tasks N            tasks in the large world (default 5000)
  --baseline-tasks N   tasks in the baseline world (default 100)
  --repos N            repositories the tasks are spread over (default 20)
  --requests N         measured requests per route and world (default 50)
  --warmup N           requests per route before measuring, not counted (default 10)
  --database-url URL   PostgreSQL server where the role may create databases
                       (postgresql://...; default $BENCH_DATABASE_URL); each world
                       gets a database of its own, dropped afterwards. Without it,
                       SQLite files in a temporary directory
  --no-again           skip measuring the baseline world a second time at the end
                       (the noise gauge)
  --profile            CPU-profile the service in the large world (node --cpu-prof)
                       and print the frames with the most self time
  --profile-top N      frames to print (default 20)
  --timeout-ms N       per request (default 30000)
  --max-minutes N      hard limit for the whole run (default 5)
`;

interface Options {
  tasks: number;
  baselineTasks: number;
  repos: number;
  requests: number;
  warmup: number;
  databaseUrl: string | null;
  again: boolean;
  profile: boolean;
  profileTop: number;
  timeoutMs: number;
  maxMinutes: number;
}

function parseOptions(argv: string[]): Options {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      tasks: { type: "string", default: "5000" },
      "baseline-tasks": { type: "string", default: "100" },
      repos: { type: "string", default: "20" },
      requests: { type: "string", default: "50" },
      warmup: { type: "string", default: "10" },
      "database-url": { type: "string" },
      "no-again": { type: "boolean" },
      profile: { type: "boolean" },
      "profile-top": { type: "string", default: "20" },
      "timeout-ms": { type: "string", default: "30000" },
      "max-minutes": { type: "string", default: "5" },
      help: { type: "boolean" },
    },
  });
  if (v.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const num = (name: string, min: number): number => integerOption(v, name, min);
  const databaseUrl = v["database-url"] ?? process.env["BENCH_DATABASE_URL"] ?? null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new UsageError("--database-url must be postgresql://...");
  const o: Options = {
    tasks: num("tasks", 1),
    baselineTasks: num("baseline-tasks", 1),
    repos: num("repos", 1),
    requests: num("requests", 1),
    warmup: num("warmup", 0),
    databaseUrl,
    again: !v["no-again"],
    profile: Boolean(v.profile),
    profileTop: num("profile-top", 1),
    timeoutMs: num("timeout-ms", 100),
    maxMinutes: num("max-minutes", 1),
  };
  if (o.repos > 100) throw new UsageError("--repos must be at most 100 (names are r00..r99)");
  for (const [name, n] of [
    ["tasks", o.tasks],
    ["baseline-tasks", o.baselineTasks],
  ] as const) {
    try {
      split(n);
    } catch (e) {
      throw new UsageError(`--${name}: ${(e as Error).message}`);
    }
  }
  return o;
}

const log = (line: string): void => void process.stderr.write(line + "\n");
const out = (line: string): void => void process.stdout.write(line + "\n");
const fmt = (n: number | null | undefined, d = 2): string =>
  n !== null && n !== undefined && Number.isFinite(n) ? n.toFixed(d) : "-";
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

// ---------------------------------------------------------------- HTTP

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  bytes: number;
  /** From writing the request to reading the end of the answer. */
  ns: number;
  error?: string;
}

/** One keep-alive connection, as one operator's browser tab would hold. */
class Client {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 });
  constructor(
    readonly port: number,
    readonly timeoutMs: number,
  ) {}

  request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
    return new Promise((resolve) => {
      let settled = false;
      const t0 = process.hrtime.bigint();
      const done = (r: Omit<Reply, "ns">): void => {
        if (settled) return;
        settled = true;
        resolve({ ...r, ns: Number(process.hrtime.bigint() - t0) });
      };
      const h: Record<string, string | number> = { ...headers };
      if (body !== undefined) h["content-length"] = Buffer.byteLength(body);
      const req = http.request(
        { agent: this.agent, host: "127.0.0.1", port: this.port, method, path, headers: h },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const buf = Buffer.concat(chunks);
            done({ status: res.statusCode ?? 0, headers: res.headers, body: buf.toString("utf8"), bytes: buf.length });
          });
          res.on("error", (e) => done({ status: 0, headers: {}, body: "", bytes: 0, error: e.message }));
        },
      );
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on("error", (e) =>
        done({ status: 0, headers: {}, body: "", bytes: 0, error: (e as NodeJS.ErrnoException).code ?? e.message }),
      );
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Signs in as the dashboard's form does and answers the session cookie ("orchestra_session=..."). */
async function signIn(c: Client, adminToken: string): Promise<string> {
  const r = await c.request(
    "POST",
    "/dashboard/sign-in",
    { "content-type": "application/x-www-form-urlencoded" },
    new URLSearchParams({ token: adminToken, next: "/dashboard" }).toString(),
  );
  const cookie = String(r.headers["set-cookie"] ?? "").split(";")[0] ?? "";
  if (r.status !== 303 || !cookie.startsWith("orchestra_session="))
    throw new Error(`sign-in answered ${r.status}${r.error ? ` (${r.error})` : ""} without a session cookie`);
  return cookie;
}

// ---------------------------------------------------------------- stats

interface Stats {
  n: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Nearest rank: every percentile is a latency some request actually had. */
function stats(nanos: number[]): Stats {
  const { n, p50Ms, p95Ms, maxMs, meanMs } = nearestRank(nanos);
  return { n, p50Ms, p95Ms, maxMs, meanMs };
}

// ---------------------------------------------------------------- one world

type RouteName = "api" | "dashboard" | "task";
const ROUTES: Array<{ name: RouteName; label: string }> = [
  { name: "api", label: "GET /api/v1/tasks" },
  { name: "dashboard", label: "GET /dashboard" },
  { name: "task", label: "GET /dashboard/tasks/:id" },
];

interface RouteRun {
  path: string;
  stats: Stats;
  /** Body size of the last answer, bytes. */
  bytes: number;
  /** Non-200 answers and failed requests among the measured ones: must be 0. */
  failures: number;
  failureSamples: string[];
}

interface WorldRun {
  name: string;
  spec: WorldSpec;
  facts: WorldFacts;
  where: string;
  readyMs: number;
  settleS: number;
  settledQuiet: boolean;
  rssReadyMb: number | null;
  rssEndMb: number | null;
  /** What the answers showed, checked before measuring. */
  seen: { apiTasks: number; queueRepos: number; queueHeading: number; dashboardOk: boolean; taskRuns: number };
  routes: Record<RouteName, RouteRun>;
  profile: { file: string; summary: ProfileSummary } | null;
}

let deadlineAt = Infinity;
const remaining = (): number => deadlineAt - Date.now();

const MAIN = join(root, "dist/src/main.js");

async function runWorld(o: Options, name: string, spec: WorldSpec, profileDir: string | null): Promise<WorldRun> {
  const tag = `[${name}]`;
  const dir = makeTempDir("orchestra-bench-dashboard-");
  let bench: BenchDb | null = null;
  let target: RunningTarget | null = null;
  let client: Client | null = null;
  try {
    bench = await freshDatabase(dir, o.databaseUrl);
    const s = split(spec.tasks);
    log(
      `${tag} seeding ${spec.tasks} tasks over ${spec.repos} repositories (${s.queued} queued, ${s.claimed} claimed, ${s.blocked} blocked, ${s.failed} failed, ${s.done} done) in ${bench.where}`,
    );
    const facts = await seedWorld(bench.url, spec, (line) => log(`${tag}   ${line}`));
    log(
      `${tag}   seeded in ${fmt(facts.seedS, 1)} s: ${facts.runs} runs (${facts.endedRuns} ended in the last 24 h), ${facts.decisions} decisions, ${facts.effects} effects, ${facts.deliveries} deliveries`,
    );

    const secrets = makeSecrets();
    const cwd = makeTempDir("orchestra-bench-dashboard-cwd-");
    const port = await freePort();
    const env = await serviceEnv({ dir: cwd, port, databaseUrl: bench.url, secrets });
    const execArgv = [
      ...SERVICE_NODE_FLAGS,
      ...(profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir, "--import", EXIT_ON_SIGUSR2] : []),
    ];
    const t0 = Date.now();
    target = await startTarget({
      name: `${name} service`,
      script: MAIN,
      cwd,
      env,
      port,
      readyPath: "/ready",
      startTimeoutMs: Math.min(60_000, Math.max(1000, remaining())),
      execArgv,
    });
    const readyMs = Date.now() - t0;
    const pid = target.child.pid;
    const rssReadyMb = processRssMb(pid);
    log(
      `${tag} service ready in ${readyMs} ms on 127.0.0.1:${port} (pid ${pid}${profileDir ? ", profiling" : ""}), RSS ${rssReadyMb ?? "-"} MB`,
    );
    // The start-up sweep is not part of any figure.
    const quiet = await settle(pid, 1, 20);
    log(
      `${tag} start-up work ${quiet.quiet ? "done" : "NOT done"} after ${fmt(quiet.seconds, 1)} s (service at ${fmt((quiet.lastCpuShare ?? NaN) * 100, 0)}% of a CPU)`,
    );

    client = new Client(port, o.timeoutMs);
    const cookie = await signIn(client, secrets.adminToken);
    const paths: Record<RouteName, { path: string; headers: Record<string, string> }> = {
      api: { path: "/api/v1/tasks", headers: { authorization: `Bearer ${secrets.adminToken}` } },
      dashboard: { path: "/dashboard", headers: { cookie } },
      task: { path: `/dashboard/tasks/${encodeURIComponent(facts.probe.id)}`, headers: { cookie } },
    };

    // What the pages show, checked once: the figures are of pages that render the world.
    const first = {} as Record<RouteName, Reply>;
    for (const r of ROUTES) first[r.name] = await client.request("GET", paths[r.name].path, paths[r.name].headers);
    for (const r of ROUTES) {
      if (first[r.name].status !== 200) {
        throw new Error(
          `${r.label} answered ${first[r.name].status}${first[r.name].error ? ` (${first[r.name].error})` : ""}: ${first[r.name].body.slice(0, 300)}\nthe service's last output:\n${target.output.toString().slice(-3000)}`,
        );
      }
    }
    const apiTasks = (JSON.parse(first.api.body) as { tasks: unknown[] }).tasks.length;
    const page = first.dashboard.body;
    const queueRepos = [...page.matchAll(/<h3>acme\/r\d\d<\/h3>/g)].length;
    const dashboardOk =
      page.includes('id="queue-h"') &&
      /aria-label="Runs by class, last 24 hours: \d+ /.test(page) &&
      /<h2 id="failed-h">Failed <span class="muted">\([1-9]/.test(page);
    const queueHeading = Number(
      /<h2 id="queue-h">Queue <span class="muted">\((\d+), in claim order\)/.exec(page)?.[1] ?? NaN,
    );
    const taskRuns = [...first.task.body.matchAll(/<tr><td class="num">\d+<\/td><td><code>/g)].length;
    log(
      `${tag} answers: API list ${apiTasks} tasks (${kb(first.api.bytes)}); dashboard ${kb(first.dashboard.bytes)}, queue of ${queueRepos} repositories headed ${queueHeading} queued` +
        `${queueHeading === facts.tasks.queued ? "" : ` (WRONG: ${facts.tasks.queued} are queued)`}${dashboardOk ? "" : ", MISSING SECTIONS"}; task page ${kb(first.task.bytes)}, ${taskRuns} runs`,
    );
    if (!dashboardOk)
      throw new Error("the dashboard did not show the seeded world (its queue, runs in the chart, failed tasks)");

    // Warm-up, then measured rounds; each round asks every route once, in
    // an order that turns every round, so a slow moment of the machine falls
    // on each route alike.
    const nanos: Record<RouteName, number[]> = { api: [], dashboard: [], task: [] };
    const bytes: Record<RouteName, number> = {
      api: first.api.bytes,
      dashboard: first.dashboard.bytes,
      task: first.task.bytes,
    };
    const failures: Record<RouteName, string[]> = { api: [], dashboard: [], task: [] };
    const total = o.warmup + o.requests;
    const t1 = Date.now();
    let lastLine = Date.now();
    for (let i = 0; i < total; i++) {
      if (remaining() <= 0) throw new Error("--max-minutes ran out");
      for (let j = 0; j < ROUTES.length; j++) {
        const r = ROUTES[(i + j) % ROUTES.length]!;
        const reply = await client.request("GET", paths[r.name].path, paths[r.name].headers);
        if (i < o.warmup) continue;
        if (reply.status !== 200) failures[r.name].push(`${reply.status}${reply.error ? ` ${reply.error}` : ""}`);
        else {
          nanos[r.name].push(reply.ns);
          bytes[r.name] = reply.bytes;
        }
      }
      if (Date.now() - lastLine > 5000 || i === o.warmup - 1 || i === total - 1) {
        lastLine = Date.now();
        log(
          `${tag} ${i < o.warmup ? `warm-up ${i + 1}/${o.warmup}` : `measured ${i + 1 - o.warmup}/${o.requests}`} rounds of ${ROUTES.length} requests (${fmt((Date.now() - t1) / 1000, 1)} s)`,
        );
      }
    }
    const routes = Object.fromEntries(
      ROUTES.map((r) => [
        r.name,
        {
          path: paths[r.name].path,
          stats: stats(nanos[r.name]),
          bytes: bytes[r.name],
          failures: failures[r.name].length,
          failureSamples: failures[r.name].slice(0, 5),
        },
      ]),
    ) as Record<RouteName, RouteRun>;
    for (const r of ROUTES) {
      const x = routes[r.name];
      log(
        `${tag} ${r.label.padEnd(25)} p50 ${fmt(x.stats.p50Ms).padStart(8)} ms  p95 ${fmt(x.stats.p95Ms).padStart(8)} ms  max ${fmt(x.stats.maxMs, 1).padStart(8)} ms  ${kb(x.bytes).padStart(10)}${x.failures ? `  FAILED ${x.failures}× (${x.failureSamples.join(", ")})` : ""}`,
      );
    }
    const rssEndMb = processRssMb(pid);

    client.close();
    client = null;
    // A profile is written only when the process exits by itself: a profiled
    // service is preloaded with a SIGUSR2 handler that exits at once (a
    // graceful stop can wait on the sweep's GitHub calls).
    await stopTarget(target, 30_000, profileDir ? "SIGUSR2" : "SIGKILL");
    let profile: WorldRun["profile"] = null;
    if (profileDir) {
      const file = profileIn(profileDir);
      if (file) {
        const summary = summariseProfile(file, root, o.profileTop);
        profile = { file: relative(root, file), summary };
        log(formatProfile(name, summary));
      } else log(`${tag} no CPU profile was written (the service did not exit cleanly)`);
    }
    removeTempDir(cwd);
    return {
      name,
      spec,
      facts,
      where: bench.where,
      readyMs,
      settleS: quiet.seconds,
      settledQuiet: quiet.quiet,
      rssReadyMb,
      rssEndMb,
      seen: { apiTasks, queueRepos, queueHeading, dashboardOk, taskRuns },
      routes,
      profile,
    };
  } finally {
    client?.close();
    if (target) await stopTarget(target).catch(() => {});
    await bench?.drop().catch((e: unknown) => log(`${tag} could not drop the database: ${(e as Error).message}`));
    removeTempDir(dir);
  }
}

// ---------------------------------------------------------------- report

const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "-");

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => "  " + r.map((c, i) => (i <= 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "));
}

function report(o: Options, worlds: WorldRun[], startedAt: number, loadAtStart: number[]): number {
  const base = worlds.find((w) => w.name === "baseline")!;
  const large = worlds.find((w) => w.name === "large")!;
  const again = worlds.find((w) => w.name === "baseline again");
  out("");
  out(
    `Response times, ${o.requests} sequential requests per route and world after ${o.warmup} warm-up, one keep-alive connection (${o.databaseUrl ? "PostgreSQL" : "SQLite"}):`,
  );
  const rows: string[][] = [
    ["world", "route", "p50 ms", "p95 ms", "p50 vs API", "p95 vs API", "p50 vs baseline", "p95 vs baseline", "body"],
  ];
  for (const w of worlds) {
    for (const r of ROUTES) {
      const x = w.routes[r.name];
      const api = w.routes.api;
      const b = base.routes[r.name];
      rows.push([
        r.name === "api" ? `${w.name} (${w.spec.tasks})` : "",
        r.label,
        fmt(x.stats.p50Ms),
        fmt(x.stats.p95Ms),
        r.name === "api" ? "" : ratio(x.stats.p50Ms, api.stats.p50Ms),
        r.name === "api" ? "" : ratio(x.stats.p95Ms, api.stats.p95Ms),
        w === base ? "" : ratio(x.stats.p50Ms, b.stats.p50Ms),
        w === base ? "" : ratio(x.stats.p95Ms, b.stats.p95Ms),
        kb(x.bytes),
      ]);
    }
  }
  for (const l of table(rows)) out(l);
  out("");
  out(
    `Growth from ${base.spec.tasks} to ${large.spec.tasks} tasks (${fmt(large.spec.tasks / base.spec.tasks, 0)}× the fleet), p50 (p95):`,
  );
  for (const r of ROUTES)
    out(
      `  ${r.label.padEnd(25)} ${ratio(large.routes[r.name].stats.p50Ms, base.routes[r.name].stats.p50Ms)} (${ratio(large.routes[r.name].stats.p95Ms, base.routes[r.name].stats.p95Ms)})`,
    );
  out(`  /dashboard HTML            ${kb(base.routes.dashboard.bytes)} -> ${kb(large.routes.dashboard.bytes)}`);
  out(
    `Dashboard against the API list in the same world, p50 (p95): baseline ${ratio(base.routes.dashboard.stats.p50Ms, base.routes.api.stats.p50Ms)} (${ratio(base.routes.dashboard.stats.p95Ms, base.routes.api.stats.p95Ms)}), large ${ratio(large.routes.dashboard.stats.p50Ms, large.routes.api.stats.p50Ms)} (${ratio(large.routes.dashboard.stats.p95Ms, large.routes.api.stats.p95Ms)})`,
  );
  if (again) {
    out(
      `Noise: the baseline measured again at the end, against the first time, p50: ${ROUTES.map((r) => `${r.name} ${ratio(again.routes[r.name].stats.p50Ms, base.routes[r.name].stats.p50Ms)}`).join(", ")}`,
    );
  }
  out(
    '(nearest-rank percentiles; "vs API": the route\'s time over GET /api/v1/tasks\'s in the same world; "vs baseline": over the same route\'s in the baseline world;',
  );
  out(
    " the API list answers at most 500 tasks and the overview reads at most 1000 queued and 200 of each other list, so neither reads the whole fleet)",
  );

  const failed = worlds.some((w) => ROUTES.some((r) => w.routes[r.name].failures > 0));
  const file = writeResults(join(root, "bench/results", `dashboard-${stamp}.json`), {
    ...runFacts({ root, startedAt, loadAtStart }),
    options: { ...o, databaseUrl: o.databaseUrl ? redact(o.databaseUrl) : null },
    database: o.databaseUrl ? "postgresql" : "sqlite",
    ratios: {
      dashboardVsApi: {
        baseline: {
          p50: base.routes.dashboard.stats.p50Ms / base.routes.api.stats.p50Ms,
          p95: base.routes.dashboard.stats.p95Ms / base.routes.api.stats.p95Ms,
        },
        large: {
          p50: large.routes.dashboard.stats.p50Ms / large.routes.api.stats.p50Ms,
          p95: large.routes.dashboard.stats.p95Ms / large.routes.api.stats.p95Ms,
        },
      },
      largeVsBaseline: Object.fromEntries(
        ROUTES.map((r) => [
          r.name,
          {
            p50: large.routes[r.name].stats.p50Ms / base.routes[r.name].stats.p50Ms,
            p95: large.routes[r.name].stats.p95Ms / base.routes[r.name].stats.p95Ms,
          },
        ]),
      ),
      ...(again
        ? {
            baselineAgainVsBaseline: Object.fromEntries(
              ROUTES.map((r) => [r.name, { p50: again.routes[r.name].stats.p50Ms / base.routes[r.name].stats.p50Ms }]),
            ),
          }
        : {}),
    },
    worlds,
  });
  out(
    `\nload average at start ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}, at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; ${fmt((Date.now() - startedAt) / 1000, 0)} s`,
  );
  out(`results: ${relative(process.cwd(), file) || file}`);
  if (failed) out("SOME REQUESTS FAILED: the figures above leave them out; see the progress lines");
  return failed ? 1 : 0;
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseOptions(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench:dashboard: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!existsSync(MAIN)) {
    process.stderr.write(
      `bench:dashboard: ${relative(process.cwd(), MAIN)} is missing; run npm run build first (npm run bench:dashboard does)\n`,
    );
    return 2;
  }
  const t0 = Date.now();
  deadlineAt = t0 + o.maxMinutes * 60_000;
  const load = os.loadavg();
  log(
    `bench:dashboard  ${os.cpus().length} CPUs, load average ${load.map((l) => l.toFixed(2)).join(" ")}${load[0]! > os.cpus().length / 2 ? "  (busy machine: expect noise)" : ""}`,
  );
  log(
    `worlds: baseline ${o.baselineTasks} tasks, large ${o.tasks} tasks, over ${o.repos} repositories; ${o.warmup} warm-up + ${o.requests} measured requests per route; ${o.databaseUrl ? `PostgreSQL at ${redact(o.databaseUrl)}` : "SQLite"}`,
  );
  const profileRoot = o.profile ? join(root, "bench/results", `dashboard-prof-${stamp}`) : null;
  const worlds: WorldRun[] = [];
  worlds.push(await runWorld(o, "baseline", { name: "baseline", tasks: o.baselineTasks, repos: o.repos }, null));
  worlds.push(await runWorld(o, "large", { name: "large", tasks: o.tasks, repos: o.repos }, profileRoot));
  if (o.again)
    worlds.push(await runWorld(o, "baseline again", { name: "again", tasks: o.baselineTasks, repos: o.repos }, null));
  return report(o, worlds, t0, load);
}

runBench("dashboard", main, { deadlineAt: () => deadlineAt, dropDatabases: dropAllDatabases });
