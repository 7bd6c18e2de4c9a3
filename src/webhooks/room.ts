/**
 * The webhook handlers wired as one room: each capability's handlers built
 * from the shared parts, and registered on the event router (register.ts
 * says which webhook goes where). The entry only calls this.
 */
import type { Logger } from "pino";
import type { EventRouter } from "../events/router.js";
import type { Tasks } from "../apply/tasks.js";
import type { ConfigLoader } from "../config/loader.js";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { PermissionCache } from "../trust/permissions.js";
import type { Actor } from "../trust/trust.js";
import type { Blockers } from "../blockers/blockers.js";
import type { Audit } from "../human/audit.js";
import type { Counters } from "../ignored/counters.js";
import type { Questions } from "../human/conditions.js";
import type { Reconciler } from "../reconcile/drift.js";
import { emptyCounts } from "../reconcile/drift.js";
import { InstallationHandlers } from "./installations.js";
import { IssueHandlers } from "./issues.js";
import { PullHandlers } from "./pulls.js";
import { ReviewHandlers } from "./reviews.js";
import { registerWebhooks } from "./register.js";
import { SubmissionHandlers } from "./checks.js";
import { CheckFailures, type CheckFailuresDeps } from "../checks/failures.js";
import { BaseMoves } from "../checks/base.js";
import { Rewrites } from "../checks/rewrites.js";
import type { ChecksQueries } from "../checks/queries.js";
import { CommentHandlers } from "./comments.js";
import type { FleetIssues } from "../fleet/issues.js";
import { FleetWebhooks } from "./fleet.js";
import type { Installations } from "../effects/installations.js";
import type { Outbox } from "../effects/outbox.js";
import type { RepoGates } from "../gates/repos.js";
import type { WebhookQueries } from "./queries.js";

export interface WebhookRoomDeps {
  queries: WebhookQueries;
  checks: ChecksQueries;
  /** Only for the reruns already used on a head (checks/failures.ts). */
  effects: CheckFailuresDeps["effects"];
  tasks: Tasks;
  dispatcher: Dispatcher;
  configs: ConfigLoader;
  permissions: PermissionCache;
  isSelf: (actor: Actor) => Promise<boolean>;
  blockers: Blockers;
  audit: Audit;
  counters: Counters;
  questions: Questions;
  reconciler: Pick<Reconciler, "repo">;
  fleet: FleetIssues;
  installations: Pick<Installations, "gone" | "back">;
  outbox: Pick<Outbox, "dropPending" | "hold">;
  gates: Pick<RepoGates, "forget" | "access">;
  clock: { now(): Date };
  log: Logger;
}

export function webhookRoom(events: EventRouter, d: WebhookRoomDeps): void {
  const { queries, effects, tasks, configs, permissions, audit, counters, clock, log } = d;
  registerWebhooks(events, {
    installations: new InstallationHandlers({
      tasks,
      installations: d.installations,
      outbox: d.outbox,
      gates: d.gates,
      clock,
      log,
    }),
    reconcileRepo: async (installationId, repo) => {
      await d.reconciler.repo(installationId, repo, emptyCounts());
    },
    issues: new IssueHandlers({
      queries,
      tasks,
      dispatcher: d.dispatcher,
      configs,
      permissions,
      isSelf: d.isSelf,
      blockers: d.blockers,
      audit,
      counters,
      fleet: d.fleet,
    }),
    pulls: new PullHandlers({ queries, tasks, clock }),
    reviews: new ReviewHandlers({ queries, tasks, configs, permissions, audit, counters }),
    comments: new CommentHandlers({ queries, tasks, configs, permissions, audit, counters, isSelf: d.isSelf }),
    questions: d.questions,
    submission: new SubmissionHandlers({
      failures: new CheckFailures({ queries: d.checks, effects, tasks, configs, log }),
      base: new BaseMoves({ queries: d.checks, tasks, configs, log }),
      rewrites: new Rewrites({ queries: d.checks, tasks }),
      branchPrefixOf: async (installationId, repo) => {
        const cfg = await configs.get(installationId, repo);
        return cfg.ok ? cfg.config.branchPrefix : null;
      },
    }),
    dispatcher: d.dispatcher,
    invalidateConfig: (repo) => configs.invalidate(repo),
    fleet: new FleetWebhooks({ tasks, fleet: d.fleet }),
  });
}
