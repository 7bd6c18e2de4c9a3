/** The operator and worker API under /api/v1: each route module registers itself here. */
import type { Router } from "../http/router.js";
import type { Inbox } from "../inbox/store.js";
import type { Outbox } from "../effects/outbox.js";
import type { Ledger } from "../cost/ledger.js";
import { deliveryRoutes } from "./deliveries.js";
import { effectRoutes } from "./effects.js";
import { taskRoutes } from "./tasks.js";
import { runRoutes } from "./runs.js";
import { workerRoutes } from "./workers.js";
import { workerAdminRoutes } from "./worker-admin.js";
import type { WorkerApiDeps } from "./worker-schemas.js";
import { pauseRoutes } from "./pause.js";
import type { RepoGates } from "../gates/repos.js";
import type { Audit } from "../human/audit.js";
import { auditRoutes } from "./audit.js";
import { sweepRoutes } from "./sweeps.js";
import { taskActionRoutes } from "./task-actions.js";
import type { TaskActionDeps } from "../human/actions.js";
import type { Tasks } from "../apply/tasks.js";
import { branchRoutes } from "./branches.js";
import type { StaleBranches } from "../reconcile/branches.js";
import type { FailureStreaks } from "../reconcile/failing.js";
import { ignoredRoutes } from "./ignored.js";
import type { Counters } from "../ignored/counters.js";
import type { CallHours } from "../metrics/call-hours.js";
import type { RateLimitSeen } from "../metrics/registry.js";
import { githubRoutes } from "./github.js";
import type { Database } from "../store/db.js";
import type { TaskReadDeps } from "../views/task-detail.js";
import type { ApiQueries } from "./queries.js";
import { replicaRoutes } from "./replicas.js";
import type { Replicas } from "../replicas/replicas.js";

export interface ApiDeps extends WorkerApiDeps {
  queries: ApiQueries;
  views: TaskReadDeps["views"];
  database: Pick<Database, "raw" | "provider">;
  inbox: Inbox;
  outbox: Outbox;
  ledger: Ledger;
  gates: RepoGates;
  deliveriesWaiting?: () => Promise<Set<number>>;
  audit: Audit;
  streaks: Pick<FailureStreaks, "current">;
  tasks: Pick<Tasks, "raise">;
  humanQueries: TaskActionDeps["humanQueries"];
  branches: Pick<StaleBranches, "list">;
  counters: Counters;
  clock: { now(): Date };
  callHours: Pick<CallHours, "lastHours">;
  rateLimits: () => ReadonlyMap<number, RateLimitSeen>;
  /** GitHub's web address, for the dashboard's links. */
  web: string;
  pokeInbox: () => void;
  pokeEffects: () => void;
  replicas: Pick<Replicas, "list">;
}

export function registerApi(router: Router, deps: ApiDeps): void {
  deliveryRoutes(router, { inbox: deps.inbox, adminToken: deps.adminToken, clock: deps.clock, poke: deps.pokeInbox });
  effectRoutes(router, {
    outbox: deps.outbox,
    queries: deps.queries,
    adminToken: deps.adminToken,
    clock: deps.clock,
    poke: deps.pokeEffects,
  });
  ignoredRoutes(router, { counters: deps.counters, adminToken: deps.adminToken });
  githubRoutes(router, deps);
  workerAdminRoutes(router, deps);
  workerRoutes(router, deps);
  pauseRoutes(router, { gates: deps.gates, adminToken: deps.adminToken });
  auditRoutes(router, { audit: deps.audit, adminToken: deps.adminToken });
  sweepRoutes(router, { queries: deps.queries, adminToken: deps.adminToken, streaks: deps.streaks });
  replicaRoutes(router, { replicas: deps.replicas, adminToken: deps.adminToken });
  taskActionRoutes(router, { humanQueries: deps.humanQueries, tasks: deps.tasks, adminToken: deps.adminToken });
  branchRoutes(router, { branches: deps.branches, adminToken: deps.adminToken });
  runRoutes(router, { queries: deps.queries, database: deps.database, adminToken: deps.adminToken });
  taskRoutes(router, {
    queries: deps.queries,
    views: deps.views,
    outbox: deps.outbox,
    ledger: deps.ledger,
    adminToken: deps.adminToken,
    clock: deps.clock,
    ...(deps.deliveriesWaiting ? { deliveriesWaiting: deps.deliveriesWaiting } : {}),
  });
}
