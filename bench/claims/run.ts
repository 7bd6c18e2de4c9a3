// Claim benchmark: POST /api/v1/claims against the built App, started as a
// user starts it, with 10,000 queued tasks in a fresh database, on SQLite,
// PostgreSQL with one App process and PostgreSQL with two. Two phases: a
// closed loop at fixed concurrency (capacity), then an open loop at a fixed
// claim rate (the latency an idle worker sees; the p99 target is on it). The
// baseline is GET /health on the same server(s) at the closed loop's
// concurrency, in the same run.
// This file runs each configuration's phases from start to end; the options
// are in ./options.ts. See bench/README.md for how to run it and how to read
// the output.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import {
  freePort,
  makeTempDir,
  removeTempDir,
  settle,
  sleep,
  StartError,
  startTarget,
  stopTarget,
  type RunningTarget,
} from "../ingest/targets.js";
import { closedLoop, newLane, registerWorker, type Claimed, type Lane, type LoopResult } from "./load.js";
import { connectionsText, LanePool, openLoop, type OpenResult } from "./open.js";
import { KINDS, openClaims, parseConfig, root, stamp, USAGE, type Config } from "./options.js";
import {
  checkConfig,
  checkStore,
  dropAllDatabases,
  explainCandidates,
  freshDatabase,
  IN_PROGRESS,
  QUEUED,
  seed,
  startFake,
  type Plan,
  type StoreCheck,
} from "./world.js";
import { cpuCount, LabelSampler, labelFigures, meter, perClaim, type PerClaim, type PhaseCost } from "./observe.js";
import { report, type ConfigRun, type Kind } from "./report.js";
import { runBench } from "../lifecycle.js";
import { SERVICE_NODE_FLAGS } from "../../src/app/node-flags.js";

const MAIN = join(root, "dist/src/main.js");

const log = (line: string): void => void process.stdout.write(line + "\n");
const fmt = (n: number | null, d = 1): string => (n !== null && Number.isFinite(n) ? n.toFixed(d) : "-");
const loopLine = (r: LoopResult, what: string): string =>
  `${r.ok}/${r.sent} ${what} in ${fmt(r.elapsedS, 2)} s  ${fmt(r.throughputPerS, 0)}/s  p50 ${fmt(r.p50Ms, 2)} ms  p99 ${fmt(r.p99Ms, 2)} ms  max ${fmt(r.maxMs, 1)} ms` +
  (r.empty ? `  204s ${r.empty} (p50 ${fmt(r.emptyP50Ms, 2)} ms, p99 ${fmt(r.emptyP99Ms, 2)} ms)` : "") +
  (r.bad ? `  OTHER ${JSON.stringify(r.statuses)} ${JSON.stringify(r.errors)}` : "") +
  (r.timedOut ? "  DEADLINE HIT" : "");

function costLines(tag: string, phase: "closed" | "open", cost: PhaseCost, per: PerClaim, pg: boolean): void {
  const label = `${phase} cost/claim`.padEnd(16);
  log(
    `${tag} ${label} App ${fmt(per.app, 1)} ms CPU, bench ${fmt(per.bench, 1)} ms` +
      (pg
        ? `, PostgreSQL ${fmt(per.db, 1)} ms CPU, ${fmt(per.commits, 1)} commits + ${fmt(per.rollbacks, 2)} rollbacks`
        : "") +
      `; machine ${fmt((cost.machineBusy ?? NaN) * 100, 0)}% busy (${cpuCount()} CPUs)`,
  );
  if (cost.dbWaiting) {
    const waits = Object.entries(cost.dbWaiting)
      .sort((x, y) => y[1] - x[1])
      .map(([k, n]) => `${k} ${fmt(n, 2)}`)
      .join(", ");
    log(
      `${tag} ${`${phase} PostgreSQL`.padEnd(16)} backends running a statement: ${fmt(cost.dbActive, 2)} on average; of those waiting: ${waits || "none"}`,
    );
  }
}

let deadlineAt = Infinity;
const remainingMs = (): number => Math.max(1000, deadlineAt - Date.now());

async function runConfig(cfg: Config, kind: Kind): Promise<ConfigRun> {
  const tag = `[${kind}]`;
  const { processes, pg } = KINDS[kind];
  const layout = { tasks: cfg.tasks, repos: cfg.repos };
  let t = Date.now();
  const fake = await startFake(layout);
  log(
    `${tag} fake GitHub on ${fake.url}: ${cfg.repos} repositories, ${cfg.tasks} open issues labelled ${QUEUED} (${Date.now() - t} ms)`,
  );
  const dataDir = makeTempDir("orchestra-bench-claims-db-");
  const targets: RunningTarget[] = [];
  const cwds: string[] = [];
  const lanes: Lane[] = [];
  const pools: LanePool[] = [];
  let db: Awaited<ReturnType<typeof freshDatabase>> | null = null;
  try {
    db = await freshDatabase(dataDir, pg ? cfg.databaseUrl : null);
    t = Date.now();
    await seed(db.url, layout, (line) => log(`${tag} ${line}`));
    const seedS = (Date.now() - t) / 1000;
    const plan: Plan = await explainCandidates(db.url);
    log(
      `${tag} candidate query plan at ${cfg.tasks} queued: ${plan.key}${plan.fullScanSort ? "  FULL SCAN + SORT" : ""}`,
    );

    const adminToken = randomBytes(32).toString("hex");
    for (let i = 0; i < processes; i++) {
      const cwd = makeTempDir("orchestra-bench-claims-cwd-");
      cwds.push(cwd);
      const port = await freePort();
      const env: Record<string, string> = {
        PATH: process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: cwd,
        TMPDIR: cwd,
        NODE_ENV: "production",
        LOG_LEVEL: "warn",
        ...fake.env,
        WEBHOOK_SECRET: randomBytes(24).toString("hex"),
        ORCHESTRA_ADMIN_TOKEN: adminToken,
        ORCHESTRA_METRICS_TOKEN: randomBytes(24).toString("hex"),
        DATABASE_URL: db.url,
        HOST: "127.0.0.1",
        PORT: String(port),
      };
      log(`${tag} starting App process ${i + 1}/${processes} (node dist/src/main.js, ${db.where})`);
      t = Date.now();
      targets.push(
        await startTarget({
          name: `${kind} app ${i + 1}`,
          script: MAIN,
          cwd,
          env,
          port,
          readyPath: "/ready",
          startTimeoutMs: 60_000,
          execArgv: [
            ...SERVICE_NODE_FLAGS,
            ...(cfg.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${join(cfg.cpuProf, `${kind}-app${i + 1}`)}`] : []),
          ],
        }),
      );
      log(`${tag} app ${i + 1} ready in ${Date.now() - t} ms on 127.0.0.1:${port} (pid ${targets[i]!.child.pid})`);
    }
    // Start-up work (the first sweep reads every repository's config) is not part of any figure.
    for (const tg of targets) await settle(tg.child.pid, 1, 20);
    for (let i = 0; i < cfg.concurrency; i++) lanes.push(newLane(targets[i % processes]!.port));
    for (const [i, lane] of lanes.entries()) await registerWorker(lane, adminToken, `bench-${i + 1}`, cfg.timeoutMs);
    log(
      `${tag} ${lanes.length} workers registered, connections per App process: ${targets.map((tg) => lanes.filter((l) => l.port === tg.port).length).join(" + ")}`,
    );

    const loop = (target: number, claims: boolean, onClaim?: (c: Claimed) => void): Promise<LoopResult> =>
      closedLoop(lanes, {
        method: claims ? "POST" : "GET",
        path: claims ? "/api/v1/claims" : "/health",
        target,
        claims,
        timeoutMs: cfg.timeoutMs,
        deadlineMs: remainingMs(),
        ...(onClaim ? { onClaim } : {}),
      });
    const healthWarmup = await loop(Math.max(cfg.warmup, 100), false);
    log(`${tag} health warm-up   ${loopLine(healthWarmup, "answered")}`);
    const health = await loop(cfg.claims, false);
    log(`${tag} GET /health      ${loopLine(health, "answered")}`);

    // The label sample: the first claim, the head of the outbox queue.
    const sampler = new LabelSampler(fake);
    const claimWarmup = await loop(cfg.warmup, true, sampler.onClaim);
    log(`${tag} claim warm-up    ${loopLine(claimWarmup, "claimed")}`);
    let closed: LoopResult | undefined;
    const phase = { start: 0, end: 0 };
    const closedCost = await meter(
      targets.map((tg) => tg.child.pid),
      pg ? db.url : null,
      async () => {
        phase.start = Date.now();
        closed = await loop(cfg.claims, true, sampler.onClaim);
        phase.end = Date.now();
      },
    );
    if (!closed) throw new Error("the closed-loop claim phase did not run");
    log(
      `${tag} closed loop      ${loopLine(closed, "claimed")}  (concurrency ${cfg.concurrency}: capacity, no latency target)`,
    );
    const closedCpu = perClaim(closedCost, closed.sent);
    costLines(tag, "closed", closedCost, closedCpu, pg);
    for (const l of lanes) l.agent.destroy();

    // The open loop must not inherit work the closed loop left behind.
    t = Date.now();
    const settled = [];
    for (const tg of targets) settled.push(await settle(tg.child.pid, 1, 20));
    const settleS = (Date.now() - t) / 1000;
    let worker = 0;
    for (const tg of targets) pools.push(new LanePool(tg.port, adminToken, () => ++worker, cfg.timeoutMs));
    for (const pool of pools) await pool.open(cfg.openConnections);
    log(
      `${tag} open loop        App ${settled.every((x) => x.quiet) ? "idle again" : "still busy (under 5% of a CPU not reached)"} after ${fmt(settleS, 1)} s; ` +
        `${worker} workers registered, each on a keep-alive connection of its own: ${pools.map((p) => p.lanes.length).join(" + ")} per App process`,
    );
    let open: OpenResult | undefined;
    const openCost = await meter(
      targets.map((tg) => tg.child.pid),
      pg ? db.url : null,
      async () => {
        open = await openLoop(pools, {
          rate: cfg.rate,
          count: openClaims(cfg),
          timeoutMs: cfg.timeoutMs,
          deadlineMs: remainingMs(),
          onClaim: sampler.onClaim,
        });
      },
    );
    if (!open) throw new Error("the open-loop claim phase did not run");
    log(
      `${tag} open loop        ${loopLine(open, "claimed")}  (at ${cfg.rate}/s: sent at ${fmt(open.sendRatePerS, 1)}/s, client lag p99 ${fmt(open.sendLagP99Ms, 2)} ms, max ${fmt(open.sendLagMaxMs, 1)} ms; ` +
        `connections ${connectionsText(open)})`,
    );
    const openCpu = perClaim(openCost, open.sent);
    costLines(tag, "open", openCost, openCpu, pg);

    const answered = [...claimWarmup.claims, ...closed.claims, ...open.claims];
    const doubleAnswers = answered.length - new Set(answered.map((c) => c.taskId)).size;
    const store: StoreCheck = await checkStore(db.url);
    // A request the client gave up on (timeout) or that failed may still have
    // committed its claim: that run's lease expires unanswered, which is not a
    // double claim. Every answer has its run; no more runs than requests.
    const unanswered = claimWarmup.bad + closed.bad + open.bad;
    const storeOk =
      store.tasksWithSeveralRuns === 0 && store.runs >= answered.length && store.runs <= answered.length + unanswered;
    const empties = claimWarmup.empty + closed.empty + open.empty;
    if (empties > 0 && store.queuedTasks > 0) {
      log(
        `${tag} 204s             ${empties} claims answered 204 while ${store.queuedTasks} tasks were still queued: every candidate those claimers looked at was taken by a concurrent claim first`,
      );
    }
    log(
      `${tag} double claims    answers: ${doubleAnswers} task(s) answered twice; store: ${store.runs} Run rows for ${answered.length} 200 answers ` +
        `(${claimWarmup.claims.length} warm-up + ${closed.claims.length} closed + ${open.claims.length} open)` +
        `${store.runs > answered.length ? ` and ${store.runs - answered.length} for the ${unanswered} requests the client got no answer to` : ""}` +
        `, ${store.tasksWithSeveralRuns} task(s) with more than one run  ${doubleAnswers === 0 && storeOk ? "OK" : "FAIL"}`,
    );

    await sampler.wait(cfg.labelWaitS * 1000);
    const labels = labelFigures(fake, sampler, phase, (await checkStore(db.url)).labelEffects);
    if (labels.sample) {
      log(
        `${tag} labels           ${labels.sample.repo}#${labels.sample.issue} (first claim, head of the outbox): ${IN_PROGRESS} after ${fmt(labels.sample.inProgressAfterS, 2)} s, ${QUEUED} removed after ${fmt(labels.sample.queuedRemovedAfterS, 2)} s${labels.sample.queuedRemovedAfterS === null ? ` (not within --label-wait ${cfg.labelWaitS} s)` : ""}`,
      );
    }
    log(
      `${tag} label writes     ${labels.writesDuringPhase} during the ${fmt(labels.phaseS, 1)} s closed-loop phase (${fmt(labels.writeRatePerS, 2)}/s), ${labels.writesSinceFirstClaim} since the first claim (${fmt(labels.writeRateSinceFirstClaimPerS, 2)}/s); ` +
        `${labels.pendingLabelEffects} of ${answered.length} label swaps still pending. Expected, not a failure: production pacing allows about one write per second per installation and a swap takes two, ` +
        `so GitHub shows the rest over the next ~${fmt((labels.pendingLabelEffects * 2) / 60, 0)} min.`,
    );

    const serverOutputLines = targets.reduce((n, tg) => n + tg.output.lines, 0);
    if (serverOutputLines > 0)
      log(`${tag} App output       ${serverOutputLines} lines at LOG_LEVEL=warn (tail in the JSON results)`);
    return {
      name: kind,
      processes,
      concurrency: cfg.concurrency,
      database: db.where,
      seedS,
      plan,
      healthWarmup,
      health,
      claimWarmup,
      closed,
      closedCost,
      closedCpu,
      open,
      openCost,
      openCpu,
      doubleAnswers,
      store,
      storeOk,
      labels,
      serverOutputLines,
      serverOutputTail: targets.map((tg) => tg.output.toString().slice(-1500)).join("\n---\n"),
      fakeViolations: fake.violations.slice(0, 20),
    };
  } finally {
    for (const l of lanes) l.agent.destroy();
    for (const p of pools) p.close();
    await Promise.all(
      targets.map(async (tg) => {
        // A profile is written on a clean exit only: SIGTERM first (the App finishes and exits), then the kill.
        if (cfg.cpuProf && tg.child.exitCode === null) {
          tg.child.kill("SIGTERM");
          await Promise.race([tg.exited, sleep(15_000)]);
        }
        await stopTarget(tg);
      }),
    );
    await db?.drop().catch((e: unknown) => log(`${tag} could not drop the database: ${(e as Error).message}`));
    for (const dir of [dataDir, ...cwds]) removeTempDir(dir);
    await fake.close();
  }
}

async function main(): Promise<number> {
  let cfg: Config;
  try {
    cfg = parseConfig(process.argv.slice(2));
    checkConfig();
  } catch (e) {
    process.stderr.write(`bench:claims: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!existsSync(MAIN)) {
    process.stderr.write(`bench:claims: ${MAIN} is missing; run npm run build (npm run bench:claims does)\n`);
    return 2;
  }
  const t0 = Date.now();
  deadlineAt = t0 + cfg.maxMinutes * 60_000;
  const load = os.loadavg();
  log(
    `bench:claims  ${os.cpus().length} CPUs, load average ${load.map((l) => l.toFixed(2)).join(" ")}${load[0]! > os.cpus().length / 2 ? "  (busy machine: expect noise)" : ""}`,
  );
  log(
    `${cfg.tasks} queued tasks over ${cfg.repos} repositories; closed loop: ${cfg.warmup} warm-up + ${cfg.claims} measured claims at concurrency ${cfg.concurrency}; ` +
      `open loop: ${cfg.rate} claims/s for ${cfg.seconds} s (${openClaims(cfg)} claims), ${cfg.openConnections} connections per App process to start with`,
  );
  const runs: ConfigRun[] = [];
  const skipped: string[] = [];
  for (const kind of cfg.configs) {
    if (KINDS[kind].pg && !cfg.databaseUrl) {
      skipped.push(kind);
      log(
        `[${kind}] SKIPPED: PostgreSQL configurations need --database-url postgresql://... (a role that may create databases, e.g. the one .ci/pg-setup.sh prints)`,
      );
      continue;
    }
    runs.push(await runConfig(cfg, kind));
  }
  return report(cfg, runs, skipped, { root, stamp, startedAt: t0, loadAtStart: load, log });
}

runBench("claims", main, {
  deadlineAt: () => deadlineAt,
  dropDatabases: dropAllDatabases,
  explain: (e) => (e instanceof StartError ? e.message : null),
});
