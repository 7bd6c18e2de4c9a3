/**
 * Builds the capability rooms: the one write path (the task room) and the
 * outbox, and every room that raises events through them. Nothing here
 * decides anything; it connects the rooms.
 */
import type { Logger } from "pino";
import type { Env } from "../config/env.js";
import type { Database } from "../store/db.js";
import type { RetryPolicy } from "../retry/schedule.js";
import type { GitHubAccess } from "./github.js";
import type { Metrics } from "../metrics/registry.js";
import { ConfigLoader } from "../config/loader.js";
import { Tasks, type Clock, type TasksDeps } from "../apply/tasks.js";
import { Outbox } from "../effects/outbox.js";
import { Installations } from "../effects/installations.js";
import { Executor, type ExecutorOptions } from "../effects/executor.js";
import { Seen } from "../effects/seen.js";
import { effectsQueries, seenQueries } from "../effects/queries.js";
import { Ledger } from "../cost/ledger.js";
import { ledgerQueries } from "../cost/queries.js";
import { Workers } from "../workers/workers.js";
import { WorkerTokens } from "../workers/tokens.js";
import { workersQueries } from "../workers/queries.js";
import { Idempotency } from "../api/idempotency.js";
import { apiQueries } from "../api/queries.js";
import { Decisions } from "../claims/decisions.js";
import { Claims, GITHUB_COM } from "../claims/claims.js";
import { Leases } from "../claims/leases.js";
import { Settler } from "../exits/settle.js";
import { Exits, type ExitsDeps } from "../exits/exit.js";
import { Releases } from "../claims/releases.js";
import { WorkerPauses } from "../workers/pauses.js";
import { Dispatcher } from "../dispatch/dispatcher.js";
import { RepoGates } from "../gates/repos.js";
import { Breaker } from "../gates/breaker.js";
import { DispatchBreaker } from "../gates/dispatch-breaker.js";
import { gateQueries } from "../gates/queries.js";
import { claimQueries } from "../claims/queries.js";
import { exitQueries } from "../exits/queries.js";
import { pullEvidence } from "../inbox/pull-evidence.js";
import { inboxQueries } from "../inbox/queries.js";
import { dispatchQueries } from "../dispatch/queries.js";
import { blockerQueries } from "../blockers/queries.js";
import { Blockers } from "../blockers/blockers.js";
import { HostFeatures } from "../github/features.js";
import { Sweeper } from "../sweeps/sweeper.js";
import { Retention } from "../retention/retention.js";
import { errorText } from "../github/errors.js";
import { PermissionCache } from "../trust/permissions.js";
import { Audit } from "../human/audit.js";
import { humanQueries } from "../human/queries.js";
import { reconcileQueries } from "../reconcile/queries.js";
import { sweepQueries } from "../sweeps/queries.js";
import { Questions } from "../human/conditions.js";
import { reconcileRoom } from "../reconcile/room.js";
import type { ReconcileDeps } from "../reconcile/drift.js";
import { FleetIssues } from "../fleet/issues.js";
import { fleetQueries } from "../fleet/queries.js";
import { cachedFor } from "../gates/waiting.js";
import { webOf } from "../dashboard/html.js";
import { Broker } from "../credentials/broker.js";
import { credentialsQueries } from "../credentials/queries.js";
import { sealerFrom } from "../credentials/seal.js";
import { octokitInstallationTokens } from "../github/octokit-tokens.js";

/** Points where tests put a concurrent event exactly (never set in service). */
export type TestHooks = Pick<TasksDeps, "afterTaskRead"> &
  Pick<ExitsDeps, "beforeTransition"> &
  Pick<ReconcileDeps, "afterLabelsRead">;

export interface RoomOptions {
  env: Env & { credentials: { privateKey: string } };
  database: Database;
  log: Logger;
  clock: Clock;
  retry: Partial<RetryPolicy>;
  github: GitHubAccess;
  metrics: Metrics;
  reconcileEveryMs?: number;
  sweepMs?: number;
  deliveriesEveryMs?: number;
  effects?: ExecutorOptions & { spacingMs?: number; start?: boolean };
  hooks?: TestHooks;
}

export type Rooms = ReturnType<typeof buildRooms>;

export function buildRooms(o: RoomOptions) {
  const { env, database, log, clock, retry, metrics } = o;
  const { githubFor, appAuth, botLogin } = o.github;
  const db = database.db;
  const effectRows = effectsQueries(db);
  const gateRows = gateQueries(db);
  const gates = new RepoGates({ queries: gateRows, clock });
  const configs = new ConfigLoader(githubFor, 60_000, (installationId, repo, result) =>
    gates
      .record(installationId, repo, result)
      .catch((err: unknown) =>
        log.warn(
          { repo, err: errorText(err) },
          "could not record the repository's gates; the next configuration read records them",
        ),
      ),
  );
  // Installations whose webhook deliveries failed and are not recovered yet: claims there wait for the truth.
  let deliveriesWaiting: () => Promise<Set<number>> = () => Promise.resolve(new Set());
  const waiting = () => deliveriesWaiting();
  // The task room pokes the executor, which is built on the task room: the poke goes through this reference.
  const late: { executor?: Executor } = {};
  const tasks = new Tasks({
    db,
    database,
    configs,
    log,
    clock,
    dryRun: env.dryRun,
    fleetDebounceMs: env.fleetDebounceSeconds * 1000,
    onEffects: () => late.executor?.poke(),
    ...(o.hooks?.afterTaskRead ? { afterTaskRead: o.hooks.afterTaskRead } : {}),
  });
  const outbox = new Outbox(effectRows, database);
  // Run tokens are minted as the App and kept sealed under a key derived from its private key.
  const broker = new Broker({
    queries: credentialsQueries(db),
    tokens: octokitInstallationTokens(appAuth),
    sealer: sealerFrom(env.credentials.privateKey),
    clock,
  });
  const ledger = new Ledger(ledgerQueries(db));
  const installations = new Installations(effectRows, clock, o.effects?.spacingMs ?? 1_000);
  const fleet = new FleetIssues({ queries: fleetQueries(db), configs, clock, botLogin, deliveriesWaiting: waiting });
  const dispatches = new DispatchBreaker({ queries: gateRows, tasks, configs, clock, log });
  const seen = new Seen(seenQueries(db), clock);
  const executor = new Executor(
    {
      queries: effectRows,
      outbox,
      installations,
      githubFor,
      tasks,
      ledger,
      log,
      clock,
      fleet,
      credentials: broker,
      dispatches,
      seen,
    },
    { windowMs: retry.windowMs!, ...o.effects },
  );
  late.executor = executor;
  const workers = new Workers(workersQueries(db), clock);
  const pauses = new WorkerPauses({ queries: workersQueries(db), clock });
  const workerTokens = new WorkerTokens({ queries: workersQueries(db), workers, tasks, pauses });
  const apiRows = apiQueries(db);
  const idempotency = new Idempotency(apiRows, clock, { ttlMs: env.retention.idempotencyHours * 3_600_000 });
  const claimRows = claimQueries(db);
  const decisions = new Decisions(claimRows, database, clock);
  const claims = new Claims({
    queries: claimRows,
    database,
    tasks,
    workers,
    decisions,
    configs,
    clock,
    urls: { web: webOf(env.baseUrl), api: env.baseUrl ?? GITHUB_COM.api },
    deliveriesWaiting: waiting,
    credentials: broker,
  });
  const leases = new Leases({ queries: claimRows, tasks, workers, decisions, clock });
  const releases = new Releases({ leases, tasks, pauses });
  const breaker = new Breaker({ queries: gateRows, database, tasks, configs, clock, log });
  const exitRows = exitQueries(db);
  const settler = new Settler({
    queries: exitRows,
    tasks,
    githubFor,
    ledger,
    clock,
    log,
    onClassified: (installationId, repo) => breaker.check(installationId, repo),
  });
  // One host per service: what it lacks is found once and shown by /ready and the dashboard.
  const features = new HostFeatures({ log, clock });
  const blockers = new Blockers({ queries: blockerQueries(db), tasks, githubFor, features, clock, log });
  const humanRows = humanQueries(database);
  const audit = new Audit({ queries: humanRows, clock });
  const questions = new Questions({ queries: humanRows, tasks, githubFor, clock, log, npmRegistry: env.npmRegistry });
  const exits = new Exits({
    queries: exitRows,
    tasks,
    leases,
    settler,
    githubFor,
    configs,
    ledger,
    clock,
    pullEvidence: pullEvidence(inboxQueries(db)),
    ...(o.hooks?.beforeTransition ? { beforeTransition: o.hooks.beforeTransition } : {}),
  });
  const dispatcher = new Dispatcher({
    queries: dispatchQueries(db),
    tasks,
    claims,
    leases,
    exits,
    configs,
    botLogin,
    log,
    clock,
  });
  const retention = new Retention({ database, policy: env.retention, clock, log });
  const permissions = new PermissionCache();
  const reconcile = reconcileRoom({
    queries: reconcileQueries(db),
    tasks,
    githubFor,
    configs,
    permissions,
    appAuth,
    fleet,
    seen,
    dryRun: env.dryRun,
    clock,
    log,
    redeliveriesPerSweep: env.redeliveriesPerSweep,
    ...(o.reconcileEveryMs ? { reconcileEveryMs: o.reconcileEveryMs } : {}),
    ...(o.hooks?.afterLabelsRead ? { afterLabelsRead: o.hooks.afterLabelsRead } : {}),
  });
  const { deliveries } = reconcile;
  deliveriesWaiting = cachedFor(5_000, clock, () => deliveries.waiting());
  const sweeper = new Sweeper({
    queries: sweepQueries(db),
    tasks,
    settler,
    claims,
    blockers,
    breaker,
    questions,
    reconcile: reconcile.schedule,
    deliveries,
    deliveriesEveryMs: o.deliveriesEveryMs ?? env.deliveriesSweepSeconds * 1000,
    retention,
    installations,
    configs,
    clock,
    log,
    leaseLost: (workerId) => pauses.note(workerId),
    onSuccess: (kind, at, r) => metrics.swept(kind, at, r?.expired),
  });
  return {
    effectRows,
    apiRows,
    humanRows,
    gates,
    configs,
    tasks,
    outbox,
    broker,
    ledger,
    installations,
    fleet,
    executor,
    seen,
    workers,
    pauses,
    workerTokens,
    idempotency,
    claims,
    leases,
    releases,
    exits,
    dispatcher,
    blockers,
    features,
    audit,
    questions,
    permissions,
    reconcile,
    deliveries,
    sweeper,
    deliveriesWaiting: waiting,
  };
}
