// One target's session in bench:ingest: start it, warm up, open loop, closed
// loop, stop it (SIGKILL, or an exit on SIGUSR2 when profiling), check its store.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { join } from "node:path";
import { closedLoop, openLoop, WebhookClient, type PhaseResult } from "./load.js";
import { deliveries, type Pool } from "./payloads.js";
import {
  freePort,
  serviceEnv,
  makeTempDir,
  processCpuMs,
  processPeakRssMb,
  processRssMb,
  removeTempDir,
  settle,
  startTarget,
  stopTarget,
} from "./targets.js";
import { formatProfile, profileIn, summariseProfile, type ProfileSummary } from "./profile.js";
import { checkPostgres, checkSqlite, pgRowCount, sqlitePath, type StoreCheck } from "./verify.js";
import { EXIT_ON_SIGUSR2, type Config, type Kind } from "./config.js";
import { fmt, phaseLine, settleLine, type PhaseWithCost, type SessionResult } from "./report.js";
import { SERVICE_NODE_FLAGS } from "../../src/app/node-flags.js";

/** Where the session writes its progress lines, and where the build is. */
export interface SessionPlace {
  log: (line: string) => void;
  /** dist/bench/ingest, where bare-app.js is. */
  here: string;
  /** The repository, to name profile frames relative to it. */
  root: string;
}

export interface Secrets {
  privateKey: string;
  webhookSecret: string;
  adminToken: string;
}

export function makeSecrets(): Secrets {
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

async function measured<T extends PhaseResult>(
  pid: number | undefined,
  fn: () => Promise<T>,
): Promise<PhaseWithCost<T>> {
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

export async function runSession(
  place: SessionPlace,
  profileRoot: string | null,
  cfg: Config,
  secrets: Secrets,
  pool: Pool,
  kind: Kind,
  label: string,
  round: number,
): Promise<SessionResult> {
  const { log, here, root } = place;
  const dir = makeTempDir(`orchestra-bench-${kind}-`);
  try {
    const port = await freePort();
    const databaseUrl = cfg.databaseUrl ?? `file:${join(dir, "orchestra.db")}`;
    const env = await serviceEnv({ dir, port, databaseUrl, secrets });
    const isPg = databaseUrl.startsWith("postgres");
    const rowsBefore = kind === "orchestra" && isPg ? await pgRowCount(databaseUrl) : 0;
    if (rowsBefore > 0) {
      // Rows a killed earlier run left unprocessed get processed during this
      // one and cost CPU that the bare app never pays.
      log(
        `[${label}] note: the database already holds ${rowsBefore} deliveries; a fresh database gives cleaner figures`,
      );
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
      execArgv: [
        ...(kind === "orchestra" ? SERVICE_NODE_FLAGS : []),
        ...(profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir, "--import", EXIT_ON_SIGUSR2] : []),
      ],
    });
    const readyMs = Date.now() - t0;
    const pid = target.child.pid;
    const serverIdleRssMb = processRssMb(pid);
    log(
      `[${label}] ready in ${readyMs} ms on 127.0.0.1:${port} (pid ${pid}, round ${round}), RSS ${serverIdleRssMb ?? "-"} MB`,
    );
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
      // Resident memory under the open loop's steady load: sampled through
      // it, the highest sample of its second half (the start is still ramping up).
      const rss: { atMs: number; mb: number }[] = [];
      const openStart = Date.now();
      const sampler = setInterval(() => {
        const mb = processRssMb(pid);
        if (mb !== null) rss.push({ atMs: Date.now() - openStart, mb });
      }, 250);
      const open = await measured(pid, () =>
        openLoop(client(), openBatch, cfg.rate, phaseDeadline(cfg.seconds * 1000)),
      ).finally(() => clearInterval(sampler));
      const secondHalf = rss.filter((x) => x.atMs >= (Date.now() - openStart) / 2).map((x) => x.mb);
      const serverSteadyRssMb = secondHalf.length > 0 ? Math.max(...secondHalf) : null;
      allAcked.push(...open.result.ackedIds);
      log(
        phaseLine(
          label,
          `${cfg.rate}/s`,
          open.result,
          `  (sent at ${fmt(open.result.sendRatePerS, 0)}/s, client lag p99 ${fmt(open.result.sendLagP99Ms, 2)} ms` +
            `, RSS ${serverSteadyRssMb ?? "-"} MB)`,
        ),
      );
      const settleAfterOpen = await settle(pid, cfg.settleS, Math.max(cfg.settleS, cfg.settleMaxS));
      log(settleLine(label, settleAfterOpen));

      const saturation = await measured(pid, () => closedLoop(client(), satBatch, phaseDeadline(180_000)));
      allAcked.push(...saturation.result.ackedIds);
      log(phaseLine(label, `c=${cfg.concurrency}`, saturation.result));

      const serverPeakRssMb = processPeakRssMb(pid);
      log(
        `[${label}] memory     RSS ${processRssMb(pid) ?? "-"} MB after the phases, peak ${serverPeakRssMb ?? "-"} MB`,
      );
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
      if (serverOutputLines > 0)
        log(`[${label}] output     ${serverOutputLines} lines at LOG_LEVEL=warn (tail in the JSON results)`);

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
        serverSteadyRssMb,
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
