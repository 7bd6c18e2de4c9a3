// The load generator: keep-alive HTTP/1.1 to one 127.0.0.1 port, a closed
// loop (fixed concurrency, as fast as the server acknowledges) and an open
// loop (fixed arrival rate, whatever the server does). Everything a request
// needs is prepared before the clock starts; the timed path is one
// http.request and its response.
import http from "node:http";
import type { Delivery } from "./payloads.js";

const WEBHOOK_PATH = "/api/github/webhooks";

export interface Outcome {
  /** HTTP status, or 0 when the request failed without one. */
  status: number;
  error?: string;
}

export class WebhookClient {
  readonly agent: http.Agent;
  private aborted = false;

  constructor(
    private readonly port: number,
    readonly concurrency: number,
    private readonly timeoutMs: number,
  ) {
    // maxSockets caps the connections at the configured concurrency, so the
    // open loop cannot paper over a stalled server by opening more of them:
    // a stall shows up as queueing, i.e. as latency.
    this.agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  }

  send(d: Delivery): Promise<Outcome> {
    return new Promise((resolve) => {
      if (this.aborted) return resolve({ status: 0, error: "aborted" });
      let settled = false;
      const done = (o: Outcome): void => {
        if (!settled) {
          settled = true;
          resolve(o);
        }
      };
      const req = http.request(
        {
          agent: this.agent,
          host: "127.0.0.1",
          port: this.port,
          method: "POST",
          path: WEBHOOK_PATH,
          headers: {
            "content-type": "application/json",
            "content-length": d.payload.body.length,
            "user-agent": "GitHub-Hookshot/bench",
            "x-github-event": d.payload.event,
            "x-github-delivery": d.id,
            "x-github-hook-id": "1",
            "x-github-hook-installation-target-type": "integration",
            "x-github-hook-installation-target-id": "1",
            "x-hub-signature-256": d.payload.signature,
          },
        },
        (res) => {
          // The ack is complete when the response has been read to the end,
          // which is when GitHub would consider the delivery done.
          res.on("data", () => {});
          res.on("end", () => done({ status: res.statusCode ?? 0 }));
          res.on("error", (e) => done({ status: 0, error: errorCode(e) }));
        },
      );
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error("timeout")));
      req.on("error", (e) => done({ status: 0, error: errorCode(e) }));
      req.end(d.payload.body);
    });
  }

  /** Fails everything in flight and everything after; used on deadlines. */
  abort(): void {
    this.aborted = true;
    this.agent.destroy();
  }

  close(): void {
    this.agent.destroy();
  }
}

function errorCode(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ?? err.message ?? String(e);
}

export interface LatencyStats {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Percentiles by nearest rank (each is a latency some request actually had), max and mean, in ms; NaN when there is none. */
export function nearestRank(nanos: ArrayLike<number>): {
  n: number;
  p50Ms: number;
  p90Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
} {
  const sorted = Float64Array.from(nanos).sort();
  const n = sorted.length;
  const at = (p: number): number => (n ? sorted[Math.min(n - 1, Math.ceil(p * n) - 1)]! / 1e6 : NaN);
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n,
    p50Ms: at(0.5),
    p90Ms: at(0.9),
    p95Ms: at(0.95),
    p99Ms: at(0.99),
    maxMs: n ? sorted[n - 1]! / 1e6 : NaN,
    meanMs: n ? sum / n / 1e6 : NaN,
  };
}

export function latencyStats(nanos: Float64Array): LatencyStats {
  const { p50Ms, p90Ms, p99Ms, maxMs, meanMs } = nearestRank(nanos);
  return { p50Ms, p90Ms, p99Ms, maxMs, meanMs };
}

export interface PhaseResult extends LatencyStats {
  sent: number;
  /** 2xx responses: deliveries the server says are stored. */
  acked: number;
  non2xx: number;
  /** Requests that got no HTTP status at all (reset, timeout, abort). */
  failed: number;
  statuses: Record<string, number>;
  errors: Record<string, number>;
  elapsedS: number;
  /** acked / elapsed. */
  throughputPerS: number;
  timedOut: boolean;
  ackedIds: string[];
}

class Tally {
  readonly latencies: number[] = [];
  readonly statuses: Record<string, number> = {};
  readonly errors: Record<string, number> = {};
  readonly ackedIds: string[] = [];
  acked = 0;
  non2xx = 0;
  failed = 0;

  record(d: Delivery, o: Outcome, nanos: number): void {
    this.statuses[String(o.status)] = (this.statuses[String(o.status)] ?? 0) + 1;
    if (o.status >= 200 && o.status < 300) {
      this.acked++;
      this.ackedIds.push(d.id);
      // Latency percentiles are over acknowledged deliveries only; failures
      // are counted separately so a fast 500 cannot improve the p99.
      this.latencies.push(nanos);
    } else if (o.status === 0) {
      this.failed++;
      const key = o.error ?? "unknown";
      this.errors[key] = (this.errors[key] ?? 0) + 1;
    } else {
      this.non2xx++;
    }
  }

  result(sent: number, elapsedNs: number, timedOut: boolean): PhaseResult {
    const elapsedS = elapsedNs / 1e9;
    return {
      ...latencyStats(Float64Array.from(this.latencies)),
      sent,
      acked: this.acked,
      non2xx: this.non2xx,
      failed: this.failed,
      statuses: this.statuses,
      errors: this.errors,
      elapsedS,
      throughputPerS: elapsedS > 0 ? this.acked / elapsedS : 0,
      timedOut,
      ackedIds: this.ackedIds,
    };
  }
}

function withDeadline(client: WebhookClient, ms: number): { cancel: () => void; fired: () => boolean } {
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
    client.abort();
  }, ms);
  return { cancel: () => clearTimeout(timer), fired: () => fired };
}

/**
 * Closed loop: `concurrency` senders, each sending its next delivery as soon
 * as the previous one is acknowledged. Measures capacity.
 */
export async function closedLoop(client: WebhookClient, batch: Delivery[], deadlineMs: number): Promise<PhaseResult> {
  const tally = new Tally();
  let next = 0;
  const deadline = withDeadline(client, deadlineMs);
  const sender = async (): Promise<void> => {
    while (next < batch.length && !deadline.fired()) {
      const d = batch[next++]!;
      const t = process.hrtime.bigint();
      const o = await client.send(d);
      tally.record(d, o, Number(process.hrtime.bigint() - t));
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: client.concurrency }, sender));
  const elapsed = Number(process.hrtime.bigint() - start);
  deadline.cancel();
  return tally.result(next, elapsed, deadline.fired());
}

export interface OpenLoopResult extends PhaseResult {
  targetRate: number;
  /** Deliveries sent per second over the sending window. */
  sendRatePerS: number;
  /** How late the client put requests on the wire versus their schedule. */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
}

export interface Schedule {
  /** Requests started. */
  sent: number;
  /** From the schedule's start until the last request settled. */
  elapsedNs: number;
  /** Requests started per second over the sending window. */
  sendRatePerS: number;
  /** How late the client started requests versus their schedule. */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
}

/**
 * The open loop's clock: calls `send(i, scheduled)` for i = 0 .. count-1, the
 * i-th at start + i/rate (process.hrtime.bigint() time), whether or not
 * earlier calls have settled, until `stopped()` says so; then waits for every
 * call's promise. `send` must not reject, should put its request on the wire
 * at once, and should measure latency from `scheduled`, not from when it was
 * called, so a server stall is charged for everything queued behind it (no
 * coordinated omission). The client's own lateness (timer and event loop) is
 * returned apart.
 */
export async function onSchedule(
  count: number,
  rate: number,
  stopped: () => boolean,
  send: (i: number, scheduled: bigint) => Promise<void>,
): Promise<Schedule> {
  const intervalNs = 1e9 / rate;
  const lags: number[] = [];
  const inflight = new Set<Promise<void>>();
  const start = process.hrtime.bigint();
  let next = 0;
  let lastSend = start;

  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = process.hrtime.bigint();
      const elapsed = Number(now - start);
      // Timers fire late by up to a millisecond or so; catch up by sending
      // everything that is due rather than drifting the schedule.
      while (next < count && next * intervalNs <= elapsed && !stopped()) {
        const scheduled = start + BigInt(Math.round(next * intervalNs));
        lags.push(Number(now - scheduled));
        lastSend = now;
        const p = send(next, scheduled).then(() => {
          inflight.delete(p);
        });
        next++;
        inflight.add(p);
      }
      if (next >= count || stopped()) return resolve();
      const dueInMs = (next * intervalNs - Number(process.hrtime.bigint() - start)) / 1e6;
      setTimeout(tick, Math.max(0, Math.floor(dueInMs)));
    };
    tick();
  });
  await Promise.all(inflight);
  const elapsedNs = Number(process.hrtime.bigint() - start);
  const sendWindowS = Number(lastSend - start) / 1e9;
  const lagStats = latencyStats(Float64Array.from(lags));
  return {
    sent: next,
    elapsedNs,
    sendRatePerS: sendWindowS > 0 ? (next - 1) / sendWindowS : 0,
    sendLagP99Ms: lagStats.p99Ms,
    sendLagMaxMs: lagStats.maxMs,
  };
}

/**
 * Open loop: deliveries arrive on a fixed schedule whether or not earlier ones
 * were answered, the way GitHub sends them. Latency is measured from each
 * delivery's scheduled time, not from when the client got round to sending
 * it, so a server stall is charged for everything queued behind it
 * (no coordinated omission). The client's own lateness is reported apart.
 */
export async function openLoop(
  client: WebhookClient,
  batch: Delivery[],
  rate: number,
  deadlineMs: number,
): Promise<OpenLoopResult> {
  const tally = new Tally();
  const deadline = withDeadline(client, deadlineMs);
  const s = await onSchedule(batch.length, rate, deadline.fired, async (i, scheduled) => {
    const d = batch[i]!;
    const o = await client.send(d);
    tally.record(d, o, Number(process.hrtime.bigint() - scheduled));
  });
  deadline.cancel();
  return {
    ...tally.result(s.sent, s.elapsedNs, deadline.fired()),
    targetRate: rate,
    sendRatePerS: s.sendRatePerS,
    sendLagP99Ms: s.sendLagP99Ms,
    sendLagMaxMs: s.sendLagMaxMs,
  };
}
