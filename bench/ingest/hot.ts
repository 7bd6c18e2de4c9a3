// bench:ingest --hot-key: every delivery on one task key, in rounds, against
// Orchestra and the bare Probot app running side by side. Orchestra keeps its
// backlog from round to round (as a hot issue's service would), so each round
// shows what the backlog left by the earlier ones costs: the ingest ratio to
// the bare app, the ack p99, the backlog at the round's end, and how fast it
// drains. While the bare app is measured (before Orchestra in even rounds,
// after it in odd ones), Orchestra is paused (SIGSTOP), so its background
// work neither slows the baseline down nor drains unwatched.
import { join } from "node:path";
import { closedLoop, WebhookClient, type PhaseResult } from "./load.js";
import { hotSource, type HotShape } from "./hot-payloads.js";
import { drainSpans, inboxReader, watchBacklog, type BacklogSample, type DrainSpan } from "./backlog.js";
import {
  freePort,
  makeTempDir,
  processCpuMs,
  processPeakRssMb,
  processRssMb,
  removeTempDir,
  serviceEnv,
  startTarget,
  stopTarget,
  type RunningTarget,
} from "./targets.js";
import { checkPostgres, checkSqlite, pgRowCount, sqlitePath, type StoreCheck } from "./verify.js";
import type { Config, Kind } from "./config.js";
import { fmt, phaseLine } from "./report.js";
import type { Secrets, SessionPlace } from "./session.js";
import { drainLine, roundLine } from "./hot-report.js";
import { SERVICE_NODE_FLAGS } from "../../src/app/node-flags.js";

export interface HotPhase {
  result: Omit<PhaseResult, "ackedIds">;
  serverCpuMsPerDelivery: number | null;
}

export interface HotRound {
  round: number;
  subject: HotPhase;
  baseline: HotPhase;
  /** Orchestra's ingest rate over the bare app's. */
  ratio: number;
  /** Open deliveries right after the round's last ack, and after its drain window. */
  backlogAfterIngest: number;
  backlogAtEnd: number;
  /** Finished with (processed or ignored) during the round's ingest. */
  closedDuringIngest: number;
  /** The drain window's rate, null when there was no backlog to drain. */
  drain: DrainSpan | null;
  subjectRssMb: number | null;
}

export interface HotResult {
  shape: HotShape;
  describe: string;
  taskKey: string;
  readyMs: Record<Kind, number>;
  idleRssMb: Record<Kind, number | null>;
  peakRssMb: Record<Kind, number | null>;
  warmupBacklogEmpty: boolean;
  rounds: HotRound[];
  finalDrain: { samples: BacklogSample[]; spans: DrainSpan[]; empty: boolean };
  store: StoreCheck | null;
}

interface Started {
  target: RunningTarget;
  readyMs: number;
  idleRssMb: number | null;
  databaseUrl: string;
  dir: string;
}

async function start(place: SessionPlace, cfg: Config, secrets: Secrets, kind: Kind): Promise<Started> {
  const dir = makeTempDir(`orchestra-bench-hot-${kind}-`);
  const port = await freePort();
  const databaseUrl = cfg.databaseUrl ?? `file:${join(dir, "orchestra.db")}`;
  const env = await serviceEnv({ dir, port, databaseUrl, secrets });
  const t0 = Date.now();
  const target = await startTarget({
    name: kind,
    script: kind === "orchestra" ? cfg.orchestraMain : join(place.here, "bare-app.js"),
    cwd: dir,
    env,
    port,
    readyPath: kind === "orchestra" ? "/ready" : "/ping",
    startTimeoutMs: cfg.startTimeoutS * 1000,
    execArgv: kind === "orchestra" ? [...SERVICE_NODE_FLAGS] : [],
  });
  const readyMs = Date.now() - t0;
  const idleRssMb = processRssMb(target.child.pid);
  place.log(
    `[${kind}] ready in ${readyMs} ms on 127.0.0.1:${port} (pid ${target.child.pid}), RSS ${idleRssMb ?? "-"} MB`,
  );
  return { target, readyMs, idleRssMb, databaseUrl, dir };
}

async function ingest(cfg: Config, t: RunningTarget, batch: Parameters<typeof closedLoop>[1]) {
  const client = new WebhookClient(t.port, cfg.concurrency, cfg.timeoutMs);
  const cpu0 = processCpuMs(t.child.pid);
  try {
    const result = await closedLoop(client, batch, 180_000 + cfg.timeoutMs);
    const cpu1 = processCpuMs(t.child.pid);
    const perDelivery = cpu0 !== null && cpu1 !== null && result.sent > 0 ? (cpu1 - cpu0) / result.sent : null;
    return { result, serverCpuMsPerDelivery: perDelivery };
  } finally {
    client.close();
  }
}

const withoutIds = ({ ackedIds: _ids, ...rest }: PhaseResult): Omit<PhaseResult, "ackedIds"> => rest;

export async function runHot(place: SessionPlace, cfg: Config, secrets: Secrets, shape: HotShape): Promise<HotResult> {
  const { log } = place;
  const source = hotSource(shape, { secret: secrets.webhookSecret, seed: cfg.seed, number: 1, matrix: cfg.matrix });
  log(`\nhot key ${shape}: ${source.describe}; task key ${source.taskKey}`);
  const rowsBefore = cfg.databaseUrl?.startsWith("postgres") ? await pgRowCount(cfg.databaseUrl) : 0;
  if (rowsBefore > 0)
    log(`note: the database already holds ${rowsBefore} deliveries; a fresh one gives cleaner figures`);
  const started: Started[] = [];
  try {
    const subject = await start(place, cfg, secrets, "orchestra");
    started.push(subject);
    const baseline = await start(place, cfg, secrets, "bare");
    started.push(baseline);
    const orchestra = subject.target;
    const reader = await inboxReader(subject.databaseUrl);
    const acked: string[] = [];
    const rounds: HotRound[] = [];
    let finalDrain: HotResult["finalDrain"];
    let warmupBacklogEmpty: boolean;
    try {
      // Warm-up on the same key, then an empty backlog: round 1 starts from none.
      const warm = source.next(cfg.warmup);
      for (const [kind, t] of [
        ["orchestra", orchestra],
        ["bare", baseline.target],
      ] as const) {
        const w = await ingest(cfg, t, warm);
        if (kind === "orchestra") acked.push(...w.result.ackedIds);
        log(phaseLine(kind, "warm-up", w.result));
      }
      const warmDrain = await watchBacklog(reader, { seconds: cfg.settleMaxS, everyMs: 500, untilEmpty: true });
      warmupBacklogEmpty = warmDrain[warmDrain.length - 1]!.open === 0;
      log(
        `[orchestra] warm-up backlog ${warmupBacklogEmpty ? "drained" : "NOT drained"} after ` +
          `${fmt(warmDrain[warmDrain.length - 1]!.atS, 1)} s`,
      );

      for (let round = 1; round <= cfg.rounds; round++) {
        const t0 = Date.now();
        const batch = source.next(cfg.count);
        log(`round ${round}/${cfg.rounds}: ${batch.length} deliveries signed in ${Date.now() - t0} ms`);
        // Paused, the service neither competes with the baseline nor drains unwatched.
        const bare = async (): Promise<Awaited<ReturnType<typeof ingest>>> => {
          orchestra.child.kill("SIGSTOP");
          try {
            const b = await ingest(cfg, baseline.target, batch);
            log(phaseLine("bare", `round ${round}`, b.result));
            return b;
          } finally {
            orchestra.child.kill("SIGCONT");
          }
        };
        // Who goes first alternates, as without --hot-key, so drift does not favour one.
        const early = round % 2 === 0 ? await bare() : null;
        const before = await reader.counts();
        const s = await ingest(cfg, orchestra, batch);
        acked.push(...s.result.ackedIds);
        const after = await reader.counts();
        const subjectRssMb = processRssMb(orchestra.child.pid);
        log(
          phaseLine("orchestra", `round ${round}`, s.result, `  backlog ${after.open}, RSS ${subjectRssMb ?? "-"} MB`),
        );
        const window = await watchBacklog(reader, { seconds: cfg.drainS, everyMs: 250, untilEmpty: true });
        const drain = after.open > 0 ? (drainSpans(window, 1)[0] ?? null) : null;
        const atEnd = window[window.length - 1]!.open;
        log(drainLine("orchestra", `drain ${round}`, after.open, atEnd, drain));
        const b = early ?? (await bare());
        const r: HotRound = {
          round,
          subject: { result: withoutIds(s.result), serverCpuMsPerDelivery: s.serverCpuMsPerDelivery },
          baseline: { result: withoutIds(b.result), serverCpuMsPerDelivery: b.serverCpuMsPerDelivery },
          ratio: s.result.throughputPerS / b.result.throughputPerS,
          backlogAfterIngest: after.open,
          backlogAtEnd: atEnd,
          closedDuringIngest: after.closed - before.closed,
          drain,
          subjectRssMb,
        };
        rounds.push(r);
        log(roundLine(r));
      }

      log(`[orchestra] final drain: up to ${cfg.drainMaxS} s for the backlog to empty`);
      let lastLog = 0;
      const samples = await watchBacklog(reader, {
        seconds: cfg.drainMaxS,
        everyMs: 500,
        untilEmpty: true,
        onSample: (x) => {
          if (x.atS - lastLog < 5) return;
          lastLog = x.atS;
          log(`[orchestra] draining   ${x.open} open after ${fmt(x.atS, 0)} s`);
        },
      });
      const spans = drainSpans(samples, 5);
      spans.forEach((sp, i) => log(drainLine("orchestra", `final ${i + 1}`, sp.fromOpen, sp.toOpen, sp)));
      finalDrain = { samples, spans, empty: samples[samples.length - 1]!.open === 0 };
    } finally {
      await reader.close();
    }

    const peak = {
      orchestra: processPeakRssMb(orchestra.child.pid),
      bare: processPeakRssMb(baseline.target.child.pid),
    };
    log(`memory: peak RSS orchestra ${peak.orchestra ?? "-"} MB, bare ${peak.bare ?? "-"} MB`);
    for (const x of started) await stopTarget(x.target);
    const store = subject.databaseUrl.startsWith("postgres")
      ? await checkPostgres(subject.databaseUrl, rowsBefore, acked)
      : checkSqlite(sqlitePath(subject.databaseUrl), acked);
    log(
      `[orchestra] store      ${store.storedRows} rows in "Delivery" for ${store.acked} acked` +
        `, ${store.ackedMissing} acked missing, ${store.extraRows} extra` +
        (store.error ? `  ERROR ${store.error}` : ""),
    );
    return {
      shape,
      describe: source.describe,
      taskKey: source.taskKey,
      readyMs: { orchestra: subject.readyMs, bare: baseline.readyMs },
      idleRssMb: { orchestra: subject.idleRssMb, bare: baseline.idleRssMb },
      peakRssMb: peak,
      warmupBacklogEmpty,
      rounds,
      finalDrain,
      store,
    };
  } finally {
    for (const x of started) {
      await stopTarget(x.target);
      removeTempDir(x.dir);
    }
  }
}
