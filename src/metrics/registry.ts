/**
 * The service's Prometheus metrics: one registry per running service (tests
 * run several in one process), the counters and histograms the code observes
 * as things happen, and small wrappers that observe at the edges of a room
 * (a GitHub port, the claim call) without changing it. The gauges read from
 * the tables are in collector.ts.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { WRITE_METHODS, type GitHub } from "../github/port.js";

/** The sweeps whose last success is exported and judged for staleness. */
export type SweepKind = "sweep" | "reconcile" | "deliveries";

export interface RateLimitSeen {
  remaining: number;
  limit: number | null;
  /** When GitHub's window resets (x-ratelimit-reset). */
  resetAt: Date | null;
  /** When these headers were seen. */
  seenAt: Date;
}

/** The rate-limit headers of a GitHub response, or null when it carries none. */
export function rateLimitOf(headers: Record<string, unknown>, seenAt: Date): RateLimitSeen | null {
  const number = (name: string) => {
    const v = headers[name];
    const n = Number(v);
    return v === undefined || v === null || v === "" || !Number.isFinite(n) ? null : n;
  };
  const remaining = number("x-ratelimit-remaining");
  if (remaining === null) return null;
  const reset = number("x-ratelimit-reset");
  return {
    remaining,
    limit: number("x-ratelimit-limit"),
    resetAt: reset === null ? null : new Date(reset * 1000),
    seenAt,
  };
}

export class Metrics {
  readonly registry = new Registry();
  readonly deliveriesReceived = new Counter({
    name: "orchestra_deliveries_received_total",
    help: "Webhook deliveries stored as new rows in the inbox",
    registers: [this.registry],
  });
  readonly deliveriesDuplicate = new Counter({
    name: "orchestra_deliveries_deduplicated_total",
    help: "Webhook deliveries answered as duplicates of a stored one",
    registers: [this.registry],
  });
  readonly processingSeconds = new Histogram({
    name: "orchestra_delivery_processing_seconds",
    help: "Time from a delivery's arrival to the end of its successful processing",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
    registers: [this.registry],
  });
  readonly githubCalls = new Counter({
    name: "orchestra_github_calls_total",
    help: "Calls to GitHub through the port, by installation and kind (read or write)",
    labelNames: ["installation", "kind"],
    registers: [this.registry],
  });
  readonly rateLimitRemaining = new Gauge({
    name: "orchestra_github_rate_limit_remaining",
    help: "Requests left in GitHub's rate-limit window, from the last response seen per installation",
    labelNames: ["installation"],
    registers: [this.registry],
  });
  readonly leaseExpiries = new Counter({
    name: "orchestra_lease_expiries_total",
    help: "Lease-expired events applied by the sweep",
    registers: [this.registry],
  });
  readonly claimSeconds = new Histogram({
    name: "orchestra_claim_duration_seconds",
    help: "Duration of a worker's claim call (the claim query and its transaction)",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly claimsShed = new Counter({
    name: "orchestra_claims_shed_total",
    help: "Claims refused with 503 and Retry-After because this replica had as many running and waiting as it takes",
    registers: [this.registry],
  });
  readonly replicaReleased = new Counter({
    name: "orchestra_replica_released_total",
    help: "Deliveries and effects released from replicas that stopped beating, by kind",
    labelNames: ["kind"],
    registers: [this.registry],
  });
  readonly sweepLastSuccess = new Gauge({
    name: "orchestra_sweep_last_success_timestamp_seconds",
    help: "Unix time of each sweep's last successful run",
    labelNames: ["sweep"],
    registers: [this.registry],
  });
  /** The last rate-limit headers seen per installation, for the API and the dashboard. */
  readonly rateLimits = new Map<number, RateLimitSeen>();
  readonly #lastSuccess = new Map<SweepKind, Date>();
  readonly #watched = new WeakSet<object>();

  /** Also told of every GitHub call (the hourly tally the dashboard charts). */
  onGitHubCall: ((kind: "read" | "write") => void) | undefined;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "orchestra_" });
  }

  /** The ingest's store call, counting new and duplicate deliveries by its answer. */
  countingRecord<D, R extends string>(record: (d: D) => Promise<R>): (d: D) => Promise<R> {
    return async (d) => {
      const recorded = await record(d);
      (recorded === "new" ? this.deliveriesReceived : this.deliveriesDuplicate).inc();
      return recorded;
    };
  }

  delivered(receivedAt: Date, at: Date): void {
    this.processingSeconds.observe(Math.max(0, (at.getTime() - receivedAt.getTime()) / 1000));
  }

  swept(kind: SweepKind, at: Date, expired = 0): void {
    this.#lastSuccess.set(kind, at);
    this.sweepLastSuccess.set({ sweep: kind }, at.getTime() / 1000);
    if (expired > 0) this.leaseExpiries.inc(expired);
  }

  lastSuccess(kind: SweepKind): Date | undefined {
    return this.#lastSuccess.get(kind);
  }

  /** A port that counts each call by installation and kind. */
  countingPort(installationId: number, github: GitHub): GitHub {
    const installation = String(installationId);
    return new Proxy(github, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== "function") return value;
        const kind = WRITE_METHODS.has(prop as keyof GitHub) ? "write" : "read";
        return (...args: unknown[]) => {
          this.githubCalls.inc({ installation, kind });
          this.onGitHubCall?.(kind);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  /** Records x-ratelimit-remaining from every response of an installation's octokit. */
  watchRateLimit(
    installationId: number,
    octokit: { hook: { after(name: "request", fn: (response: unknown) => void): void } },
  ): void {
    if (this.#watched.has(octokit)) return;
    this.#watched.add(octokit);
    octokit.hook.after("request", (response) => {
      const headers = (response as { headers?: Record<string, unknown> } | undefined)?.headers ?? {};
      const seen = rateLimitOf(headers, new Date());
      if (!seen) return;
      this.rateLimitRemaining.set({ installation: String(installationId) }, seen.remaining);
      this.rateLimits.set(installationId, seen);
    });
  }

  /** The claims room with its claim call timed. */
  timedClaims<C extends { claim(...args: never[]): Promise<unknown> }>(claims: C): C {
    const histogram = this.claimSeconds;
    return new Proxy(claims, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== "claim" || typeof value !== "function")
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (...args: unknown[]) => {
          const end = histogram.startTimer();
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            end();
          }
        };
      },
    });
  }
}
