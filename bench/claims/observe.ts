// Where the time goes during the claim phase (CPU of the App processes, of
// this process, of the PostgreSQL backends and of the whole machine, and
// PostgreSQL's transaction counters), and how the labels follow on the fake
// GitHub: one sampled issue polled with labelsOf, and the label writes the
// fake received.
import { readFileSync } from "node:fs";
import os from "node:os";
import pg from "pg";
import type { FakeGitHub } from "../../test/fake-github/index.js";
import { processCpuMs } from "../ingest/targets.js";
import type { Claimed } from "./load.js";
import { IN_PROGRESS, QUEUED, withPg } from "./world.js";

export interface PhaseCost {
  /** All App processes, user+system. */
  appCpuMs: number | null;
  /** This process: load generator and fake GitHub. */
  benchCpuMs: number;
  /** PostgreSQL backends serving the bench database (null on SQLite). */
  dbCpuMs: number | null;
  /** PostgreSQL transactions committed and rolled back in the bench database. */
  dbCommits: number | null;
  dbRollbacks: number | null;
  /** Busy share of all CPUs of the machine, whoever used them. */
  machineBusy: number | null;
  /**
   * PostgreSQL, sampled every 100 ms: mean number of the bench database's
   * backends running a statement, and of those waiting, by wait event
   * (Lock:advisory is the per-organization limit lock, Lock:transactionid a
   * row another transaction is updating).
   */
  dbActive: number | null;
  dbWaiting: Record<string, number> | null;
}

/** A phase's cost per claim request it sent: CPU in ms, PostgreSQL transactions. */
export interface PerClaim {
  app: number | null;
  bench: number | null;
  db: number | null;
  commits: number | null;
  rollbacks: number | null;
}

export function perClaim(cost: PhaseCost, sent: number): PerClaim {
  const per = (x: number | null): number | null => (x === null || sent === 0 ? null : x / sent);
  return {
    app: per(cost.appCpuMs),
    bench: per(cost.benchCpuMs),
    db: per(cost.dbCpuMs),
    commits: per(cost.dbCommits),
    rollbacks: per(cost.dbRollbacks),
  };
}

/** Polls pg_stat_activity until stopped; a connection of its own. */
function sampleActivity(url: string): { stop(): Promise<{ active: number; waiting: Record<string, number> }> } {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  let samples = 0;
  let active = 0;
  const waiting: Record<string, number> = {};
  let stopped = false;
  const done = (async () => {
    await client.connect();
    try {
      while (!stopped) {
        const rows = (
          await client.query(
            `SELECT state, wait_event_type AS t, wait_event AS e FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
          )
        ).rows;
        samples++;
        for (const r of rows) {
          if (r.state !== "active") continue;
          active++;
          if (r.t) waiting[`${r.t}:${r.e}`] = (waiting[`${r.t}:${r.e}`] ?? 0) + 1;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await client.end();
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done.catch(() => {});
      const mean = (n: number): number => (samples ? n / samples : NaN);
      return {
        active: mean(active),
        waiting: Object.fromEntries(Object.entries(waiting).map(([k, n]) => [k, mean(n)])),
      };
    },
  };
}

function machineJiffies(): { busy: number; total: number } | null {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return null;
  }
}

interface PgSnapshot {
  commits: number;
  rollbacks: number;
  cpu: Map<number, number>;
}

async function pgSnapshot(url: string): Promise<PgSnapshot> {
  return withPg(url, async (c) => {
    const s = (
      await c.query(
        `SELECT xact_commit::float8 AS c, xact_rollback::float8 AS r FROM pg_stat_database WHERE datname = current_database()`,
      )
    ).rows[0];
    const pids = (
      await c.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
    ).rows.map((r) => Number(r.pid));
    return { commits: Number(s.c), rollbacks: Number(s.r), cpu: new Map(pids.map((p) => [p, processCpuMs(p) ?? 0])) };
  });
}

/** Measures one phase; PostgreSQL counters need about a second to be flushed, hence the pauses. */
export async function meter(
  pids: (number | undefined)[],
  pgUrl: string | null,
  phase: () => Promise<void>,
): Promise<PhaseCost> {
  const pause = (): Promise<void> => new Promise((r) => setTimeout(r, 1200));
  const pg0 = pgUrl ? (await pause(), await pgSnapshot(pgUrl)) : null;
  const app0 = pids.map(processCpuMs);
  const m0 = machineJiffies();
  const bench0 = process.cpuUsage();
  const activity = pgUrl ? sampleActivity(pgUrl) : null;
  await phase();
  const sampled = await activity?.stop();
  const bench = process.cpuUsage(bench0);
  const m1 = machineJiffies();
  const app1 = pids.map(processCpuMs);
  let dbCpuMs: number | null = null;
  let pg1: PgSnapshot | null = null;
  if (pgUrl && pg0) {
    // Backend CPU now (a backend started during the phase counts from zero); counters after the flush.
    const now = (await pgSnapshot(pgUrl)).cpu;
    dbCpuMs = [...now].reduce((s, [pid, ms]) => s + ms - (pg0.cpu.get(pid) ?? 0), 0);
    await pause();
    pg1 = await pgSnapshot(pgUrl);
  }
  const ok = app0.every((c) => c !== null) && app1.every((c) => c !== null);
  return {
    appCpuMs: ok ? app1.reduce((s, c, i) => s + c - app0[i]!, 0) : null,
    benchCpuMs: (bench.user + bench.system) / 1000,
    dbCpuMs,
    dbCommits: pg0 && pg1 ? pg1.commits - pg0.commits : null,
    dbRollbacks: pg0 && pg1 ? pg1.rollbacks - pg0.rollbacks : null,
    dbActive: sampled ? sampled.active : null,
    dbWaiting: sampled ? sampled.waiting : null,
    machineBusy: m0 && m1 && m1.total > m0.total ? (m1.busy - m0.busy) / (m1.total - m0.total) : null,
  };
}

export const cpuCount = (): number => os.cpus().length;

/**
 * Follows one claimed issue on the fake GitHub from the moment its claim was
 * answered: when agent:in-progress appears, and when agent:queued is gone.
 */
export class LabelSampler {
  claim: Claimed | null = null;
  inProgressAt: number | null = null;
  queuedGoneAt: number | null = null;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly fake: FakeGitHub) {}

  /** Pass as onClaim: the first claim becomes the sample. */
  readonly onClaim = (c: Claimed): void => {
    if (this.claim) return;
    this.claim = c;
    this.#timer = setInterval(() => this.look(), 25);
  };

  look(): void {
    if (!this.claim) return;
    const labels = this.fake.state.labelsOf(this.claim.repo, this.claim.issue);
    const now = Date.now();
    if (this.inProgressAt === null && labels.includes(IN_PROGRESS)) this.inProgressAt = now;
    if (this.queuedGoneAt === null && this.inProgressAt !== null && !labels.includes(QUEUED)) this.queuedGoneAt = now;
    if (this.queuedGoneAt !== null) this.stop();
  }

  async wait(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.claim && this.queuedGoneAt === null && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      this.look();
    }
    this.stop();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** Label writes (add, remove, set) the fake answered with a 2xx between two instants. */
export function labelWrites(fake: FakeGitHub, fromMs: number, toMs: number): number {
  return fake.requests.filter(
    (r) =>
      r.method !== "GET" && /\/issues\/\d+\/labels/.test(r.path) && r.status < 300 && r.at >= fromMs && r.at <= toMs,
  ).length;
}

export interface LabelFigures {
  sample: { repo: string; issue: number; inProgressAfterS: number | null; queuedRemovedAfterS: number | null } | null;
  writesDuringPhase: number;
  phaseS: number;
  writeRatePerS: number;
  writesSinceFirstClaim: number;
  writeRateSinceFirstClaimPerS: number | null;
  labelEffects: Record<string, number>;
  pendingLabelEffects: number;
}

export function labelFigures(
  fake: FakeGitHub,
  s: LabelSampler,
  phase: { start: number; end: number },
  labelEffects: Record<string, number>,
): LabelFigures {
  const end = Date.now();
  const writes = labelWrites(fake, phase.start, phase.end);
  const since = s.claim ? labelWrites(fake, s.claim.at, end) : 0;
  const after = (t: number | null): number | null => (t === null || !s.claim ? null : (t - s.claim.at) / 1000);
  const phaseS = (phase.end - phase.start) / 1000;
  return {
    sample: s.claim
      ? {
          repo: s.claim.repo,
          issue: s.claim.issue,
          inProgressAfterS: after(s.inProgressAt),
          queuedRemovedAfterS: after(s.queuedGoneAt),
        }
      : null,
    writesDuringPhase: writes,
    phaseS,
    writeRatePerS: writes / Math.max(0.001, phaseS),
    writesSinceFirstClaim: since,
    writeRateSinceFirstClaimPerS: s.claim ? since / Math.max(0.001, (end - s.claim.at) / 1000) : null,
    labelEffects,
    pendingLabelEffects: (labelEffects["pending"] ?? 0) + (labelEffects["running"] ?? 0),
  };
}
