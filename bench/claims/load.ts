// The claim benchmark's HTTP side: one keep-alive connection per client (one
// worker per connection), worker registration, the tally of answers both loops
// share, and a closed loop that serves both the GET /health baseline and the
// capacity phase. The open loop, which sends claims at a fixed rate over a
// pool of such connections, is in ./open.ts. The percentiles (nearest rank)
// come from the ingest benchmark.
import http from "node:http";
import { latencyStats, type LatencyStats } from "../ingest/load.js";

export interface Reply {
  /** HTTP status, or 0 when the request failed without one. */
  status: number;
  body: string;
  error?: string;
}

/** One client connection to one App process, with the worker it claims as (if any). */
export interface Lane {
  port: number;
  agent: http.Agent;
  token?: string;
  workerId?: string;
  /** The open loop's lanes: a number unique across its pools (Claimed.lane). */
  number?: number;
}

export function newLane(port: number): Lane {
  // maxSockets 1: the lane is one connection, as one worker process would hold.
  return { port, agent: new http.Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 }) };
}

export function request(
  lane: Lane,
  method: string,
  path: string,
  o: { bearer?: string; body?: string; timeoutMs: number },
): Promise<Reply> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: Reply): void => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    const headers: Record<string, string | number> = {};
    if (o.bearer) headers["authorization"] = `Bearer ${o.bearer}`;
    if (o.body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = Buffer.byteLength(o.body);
    }
    const req = http.request(
      { agent: lane.agent, host: "127.0.0.1", port: lane.port, method, path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (e) => done({ status: 0, body: "", error: errorCode(e) }));
      },
    );
    req.setTimeout(o.timeoutMs, () => req.destroy(new Error("timeout")));
    req.on("error", (e) => done({ status: 0, body: "", error: errorCode(e) }));
    req.end(o.body);
  });
}

function errorCode(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ?? err.message ?? String(e);
}

/** POST /api/v1/workers with the admin token; the worker's token is kept on the lane only. */
export async function registerWorker(lane: Lane, adminToken: string, name: string, timeoutMs: number): Promise<void> {
  const r = await request(lane, "POST", "/api/v1/workers", {
    bearer: adminToken,
    body: JSON.stringify({ name }),
    timeoutMs,
  });
  if (r.status !== 201) throw new Error(`registering worker ${name}: HTTP ${r.status}${r.error ? ` ${r.error}` : ""}`);
  const { id, token } = JSON.parse(r.body) as { id: string; token: string };
  lane.workerId = id;
  lane.token = token;
}

/** One 200 answer to POST /api/v1/claims. */
export interface Claimed {
  taskId: string;
  runId: string;
  repo: string;
  issue: number;
  /** Date.now() when the answer was read. */
  at: number;
  /** Closed loop: index of the lane; open loop: the lane's number. */
  lane: number;
}

export interface LoopResult extends LatencyStats {
  sent: number;
  /** 200 answers; latency percentiles are over these only. */
  ok: number;
  /** 204 answers (nothing claimable). */
  empty: number;
  /** Latency of the 204 answers (ms, nearest rank). */
  emptyP50Ms: number;
  emptyP99Ms: number;
  /** Any other status, or no status at all. */
  bad: number;
  statuses: Record<string, number>;
  errors: Record<string, number>;
  elapsedS: number;
  /** ok / elapsed. */
  throughputPerS: number;
  timedOut: boolean;
  claims: Claimed[];
}

export interface LoopOptions {
  method: "GET" | "POST";
  path: string;
  /** 200 answers to collect. */
  target: number;
  /**
   * Claims: parse each 200, count 204s, and stop once `emptyStreak` answers
   * in a row were 204 (the App sees nothing claimable any more).
   */
  claims: boolean;
  emptyStreak?: number;
  timeoutMs: number;
  deadlineMs: number;
  onClaim?: (c: Claimed) => void;
}

/** Counts answers and keeps the claims; latency percentiles over the 200s, 204s apart. */
export class Tally {
  readonly latencies: number[] = [];
  readonly emptyLatencies: number[] = [];
  readonly statuses: Record<string, number> = {};
  readonly errors: Record<string, number> = {};
  readonly claims: Claimed[] = [];
  ok = 0;
  empty = 0;
  bad = 0;

  constructor(
    private readonly parseClaims: boolean,
    private readonly onClaim?: (c: Claimed) => void,
  ) {}

  /** Records one answer; the JSON is parsed here, after the clock stopped. */
  record(r: Reply, ns: number, lane: number): void {
    this.statuses[String(r.status)] = (this.statuses[String(r.status)] ?? 0) + 1;
    if (r.status === 200) {
      this.ok++;
      this.latencies.push(ns);
      if (this.parseClaims) {
        const a = JSON.parse(r.body) as { task: { id: string; repo: string; issue: number }; run: { id: string } };
        const c = { taskId: a.task.id, runId: a.run.id, repo: a.task.repo, issue: a.task.issue, at: Date.now(), lane };
        this.claims.push(c);
        this.onClaim?.(c);
      }
    } else if (r.status === 204 && this.parseClaims) {
      this.empty++;
      this.emptyLatencies.push(ns);
    } else {
      this.bad++;
      if (r.status === 0) this.errors[r.error ?? "unknown"] = (this.errors[r.error ?? "unknown"] ?? 0) + 1;
    }
  }

  result(sent: number, elapsedS: number, timedOut: boolean): LoopResult {
    const emptyStats = latencyStats(Float64Array.from(this.emptyLatencies));
    return {
      ...latencyStats(Float64Array.from(this.latencies)),
      sent,
      ok: this.ok,
      empty: this.empty,
      emptyP50Ms: emptyStats.p50Ms,
      emptyP99Ms: emptyStats.p99Ms,
      bad: this.bad,
      statuses: this.statuses,
      errors: this.errors,
      elapsedS,
      throughputPerS: elapsedS > 0 ? this.ok / elapsedS : 0,
      timedOut,
      claims: this.claims,
    };
  }
}

/**
 * Closed loop: every lane sends its next request as soon as the previous one
 * is answered, until `target` 200 answers are in (or, for claims, a run of
 * 204s says the queue is empty). A single 204 does not end the phase: under
 * contention a claimer can lose every candidate it looked at while tasks are
 * still queued, and that is a figure to report, not the end of the queue.
 * Latency is from writing the request to reading the end of the answer. At
 * saturation this measures capacity, and latency as a queue of
 * `lanes.length` claimers sees it: not what an idle worker waits.
 */
export async function closedLoop(lanes: Lane[], o: LoopOptions): Promise<LoopResult> {
  const tally = new Tally(o.claims, o.onClaim);
  let taken = 0;
  let inflight = 0;
  let streak = 0;
  let stop = false;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop = true;
    for (const l of lanes) l.agent.destroy();
  }, o.deadlineMs);
  const body = o.method === "POST" ? "{}" : undefined;
  const lane = async (l: Lane, index: number): Promise<void> => {
    while (!stop && tally.ok + inflight < o.target) {
      taken++;
      inflight++;
      const t = process.hrtime.bigint();
      const r = await request(l, o.method, o.path, {
        bearer: o.claims ? l.token : undefined,
        body,
        timeoutMs: o.timeoutMs,
      });
      const ns = Number(process.hrtime.bigint() - t);
      inflight--;
      tally.record(r, ns, index);
      if (r.status === 200) streak = 0;
      else if (r.status === 204 && o.claims && ++streak >= (o.emptyStreak ?? 3 * lanes.length)) stop = true;
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(lanes.map(lane));
  const elapsedS = Number(process.hrtime.bigint() - start) / 1e9;
  clearTimeout(timer);
  return tally.result(taken, elapsedS, timedOut);
}
