// The claim benchmark's open loop: claims sent at a fixed rate, whatever the
// server does, over a pool of keep-alive connections per App process (one
// worker per connection, registered on it). The schedule comes from the
// ingest benchmark; the connections, the request and the tally from ./load.ts.
import { onSchedule } from "../ingest/load.js";
import { newLane, registerWorker, request, Tally, type Claimed, type Lane, type LoopResult } from "./load.js";

/**
 * The open loop's connections to one App process. Each connection is a lane
 * with a worker of its own, registered on it. A claim takes the connection
 * that has been free longest (so every open connection keeps being used and
 * none sits idle past the server's keep-alive timeout), or, when all are busy,
 * opens a new one and registers its worker on it first; that registration is
 * inside the claim's latency, which runs from the scheduled send time anyway.
 */
export class LanePool {
  readonly lanes: Lane[] = [];
  /** Lanes opened during the phase because every open one was busy. */
  grown = 0;
  /** Most lanes busy at the same time. */
  peakBusy = 0;
  readonly #free: Lane[] = [];
  #busy = 0;
  #closed = false;

  constructor(
    readonly port: number,
    private readonly adminToken: string,
    /** Worker names and lane numbers, unique across pools. */
    private readonly nextNumber: () => number,
    private readonly timeoutMs: number,
  ) {}

  /** Opens `n` connections and registers their workers, before the phase. */
  async open(n: number): Promise<void> {
    for (let i = 0; i < n; i++) this.#free.push(await this.#newLane());
  }

  async #newLane(): Promise<Lane> {
    const lane = newLane(this.port);
    lane.number = this.nextNumber();
    try {
      await registerWorker(lane, this.adminToken, `bench-open-${lane.number}`, this.timeoutMs);
    } catch (e) {
      lane.agent.destroy();
      throw e;
    }
    if (this.#closed) lane.agent.destroy();
    this.lanes.push(lane);
    return lane;
  }

  /** A free lane, or a new one (registered first); throws when registration fails. */
  async take(): Promise<Lane> {
    this.#busy++;
    this.peakBusy = Math.max(this.peakBusy, this.#busy);
    const free = this.#free.shift();
    if (free) return free;
    this.grown++;
    try {
      return await this.#newLane();
    } catch (e) {
      this.#busy--;
      throw e;
    }
  }

  give(lane: Lane): void {
    this.#busy--;
    this.#free.push(lane);
  }

  close(): void {
    this.#closed = true;
    for (const l of this.lanes) l.agent.destroy();
  }
}

export interface OpenResult extends LoopResult {
  /** Claims per second asked for. */
  targetRate: number;
  /** Claims sent per second over the sending window. */
  sendRatePerS: number;
  /** How late the client put claims on the wire versus their schedule. */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
  /** Per App process: connections open at the end, of those opened during the phase, most in use at once. */
  connections: { open: number; grown: number; peakBusy: number }[];
}

/** "32 open, at most 5 in use" per App process, joined with " + ". */
export const connectionsText = (o: OpenResult): string =>
  o.connections
    .map((c) => `${c.open} open${c.grown ? ` (${c.grown} opened during the phase)` : ""}, at most ${c.peakBusy} in use`)
    .join(" + ");

export interface OpenOptions {
  /** Claims per second, all App processes together. */
  rate: number;
  /** Claims to send. */
  count: number;
  timeoutMs: number;
  deadlineMs: number;
  onClaim?: (c: Claimed) => void;
}

/**
 * Open loop: claims go out on a fixed schedule, `rate` per second, whatever
 * the server does, the way a fleet's idle workers claim. Claim i goes to pool
 * i mod pools.length, i.e. evenly over the App processes. Latency runs from
 * each claim's scheduled send time to the end of its answer, so a stall is
 * charged to every claim due during it (no coordinated omission). A 204 does
 * not stop the phase.
 */
export async function openLoop(pools: LanePool[], o: OpenOptions): Promise<OpenResult> {
  const tally = new Tally(true, o.onClaim);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    for (const p of pools) p.close();
  }, o.deadlineMs);
  const s = await onSchedule(
    o.count,
    o.rate,
    () => timedOut,
    async (i, scheduled) => {
      const pool = pools[i % pools.length]!;
      let lane: Lane;
      try {
        lane = await pool.take();
      } catch (e) {
        tally.record({ status: 0, body: "", error: `opening a connection: ${(e as Error).message}` }, 0, -1);
        return;
      }
      const r = await request(lane, "POST", "/api/v1/claims", {
        bearer: lane.token,
        body: "{}",
        timeoutMs: o.timeoutMs,
      });
      const ns = Number(process.hrtime.bigint() - scheduled);
      pool.give(lane);
      tally.record(r, ns, lane.number ?? -1);
    },
  );
  clearTimeout(timer);
  return {
    ...tally.result(s.sent, s.elapsedNs / 1e9, timedOut),
    targetRate: o.rate,
    sendRatePerS: s.sendRatePerS,
    sendLagP99Ms: s.sendLagP99Ms,
    sendLagMaxMs: s.sendLagMaxMs,
    connections: pools.map((p) => ({ open: p.lanes.length, grown: p.grown, peakBusy: p.peakBusy })),
  };
}
