/**
 * The defaults of settings that several rooms read: the configuration
 * (config/env.ts) and the rooms that apply them take them from here, so the
 * configuration imports no room.
 */

/** The debounce window when ORCHESTRA_FLEET_DEBOUNCE_SECONDS is not set. */
export const DEFAULT_FLEET_DEBOUNCE_MS = 30_000;
/** How often GitHub's delivery log is read for deliveries that never arrived (ORCHESTRA_DELIVERIES_SWEEP_SECONDS). */
export const DEFAULT_DELIVERIES_SWEEP_SECONDS = 60;
/** Redeliveries asked of GitHub per sweep at most (ORCHESTRA_REDELIVERIES_PER_SWEEP). */
export const DEFAULT_REDELIVERIES_PER_SWEEP = 50;
/**
 * How long a replica's claim on a delivery it processes, or an effect it
 * performs, lasts before another replica may take the work over; the holder
 * renews it every third of that while it works. It is what a replica killed
 * mid-work costs: its in-flight deliveries and effects wait this long (they
 * waited 60 s, and a claim's interlock label with them).
 */
export const PROCESSING_LEASE_MS = 15_000;
/**
 * How often each replica writes its beat (src/replicas/), and how long its
 * beat must stand still, as another replica watches it, before what it holds
 * is released to the others: a replica killed mid-work holds its in-flight
 * deliveries and effects for about this long instead of a whole lease.
 */
export const REPLICA_BEAT_MS = 2_000;
export const REPLICA_SILENT_MS = 6_000;
/**
 * Claims one replica runs at once, and claims it lets wait for a turn; the
 * next is answered 503 with Retry-After (http/admission.ts). At about 90
 * claims a second per replica (bench:claims, 2 cores), a full queue is under
 * half a second of waiting. More at once is slower on PostgreSQL (2: 79/s,
 * 4: 98/s, 8: 75/s): claims in one organization take turns at its lock.
 */
export const CLAIM_ADMISSION = { concurrency: 4, queue: 32, retryAfterSeconds: 1 } as const;

export interface RetentionPolicy {
  /** Finished inbox rows (done, ignored): at least MIN_DELIVERIES_DAYS. */
  deliveriesDays: number;
  /** Finished effects (done, dropped, dry-run). */
  effectsDays: number;
  /** Idempotency-Key answers of the worker API. */
  idempotencyHours: number;
  sweepReportsDays: number;
  auditDays: number;
  /** How often the service prunes; 0: never on its own (only `orchestra prune`). */
  intervalMinutes: number;
}

/** GitHub redelivers a delivery (same X-GitHub-Delivery) for up to 3 days. */
export const GITHUB_REDELIVERY_DAYS = 3;
/** The shortest inbox retention allowed: longer than GitHub's redelivery window. */
export const MIN_DELIVERIES_DAYS = GITHUB_REDELIVERY_DAYS + 1;

export const DEFAULT_RETENTION: RetentionPolicy = {
  deliveriesDays: 7,
  effectsDays: 14,
  idempotencyHours: 24,
  sweepReportsDays: 14,
  auditDays: 30,
  intervalMinutes: 60,
};

/**
 * When a worker is paused: it released runs before their agent started
 * (clone, disk, agent binary) or lost leases without an exit `releases` times
 * within `windowMinutes`. Its claims are refused for `pauseMinutes`, or until
 * an operator resumes it (`orchestra workers resume <id>`): a worker whose
 * machine is broken would otherwise take the head of the queue again and again.
 */
export interface WorkerPausePolicy {
  releases: number;
  windowMinutes: number;
  pauseMinutes: number;
}

export const DEFAULT_WORKER_PAUSE: WorkerPausePolicy = { releases: 3, windowMinutes: 10, pauseMinutes: 30 };
