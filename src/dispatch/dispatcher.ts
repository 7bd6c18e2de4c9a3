/**
 * Dispatch mode: instead of waiting for a worker, Orchestra claims the task
 * for a workflow run and the outbox triggers `workflow_dispatch` with the
 * run's inputs. `workflow_run` / `workflow_job` progress renews the lease and
 * the run's completion is its exit. A dispatch GitHub refuses puts the task
 * back without charging an attempt (see the dispatch-refused row).
 */
import type { EmitterWebhookEvent } from "@octokit/webhooks";
import type { Logger } from "pino";
import type { RepoConfig } from "../config/repo.js";
import type { ConfigLoader } from "../config/loader.js";
import { isLeaseRefusal, Refusal } from "../refusal.js";
import type { Claims } from "../claims/claims.js";
import type { Leases } from "../claims/leases.js";
import type { Exits } from "../exits/exit.js";
import type { Task } from "../store/generated/sqlite/client.js";
import type { Tasks } from "../apply/tasks.js";
import type { ExitReport } from "../machine/events.js";
import type { InfraDeath } from "../outcomes/facts.js";
import type { DispatchQueries } from "./queries.js";

type WorkflowRunPayload = EmitterWebhookEvent<"workflow_run">["payload"];
type WorkflowJobPayload = EmitterWebhookEvent<"workflow_job">["payload"];
type Actor = { login: string; type?: string } | null;
/** What of a `workflow_run` says whose run it is. */
interface ActionsRun {
  path: string;
  workflow_id: number;
  name?: string | null;
  display_title?: string | null;
  actor: Actor;
  triggering_actor?: Actor;
}
type Delivered = { repository: { full_name: string }; installation?: { id: number } | undefined };

export class Dispatcher {
  constructor(
    readonly deps: {
      queries: DispatchQueries;
      tasks: Tasks;
      claims: Claims;
      leases: Leases;
      exits: Exits;
      configs: Pick<ConfigLoader, "get">;
      /** The App's bot login (`<slug>[bot]`): the only actor whose dispatches are Orchestra's. */
      botLogin(): Promise<string>;
      log: Pick<Logger, "info" | "warn">;
      clock: { now(): Date };
    },
  ) {}

  /** Claims the task for a workflow run; the dispatch itself follows from the outbox. */
  async dispatch(task: Task, config: RepoConfig): Promise<boolean> {
    if (!config.dispatch) return false;
    if (task.backoffUntil && task.backoffUntil > this.deps.clock.now()) return false;
    const won = await this.deps.claims.claimTask(task, config, { mode: "dispatch", workerId: null });
    return won !== null && typeof won !== "string";
  }

  async onWorkflowJob(payload: WorkflowJobPayload): Promise<void> {
    const job = payload.workflow_job;
    const runId = await this.#runFor(payload, job.run_id, null);
    if (runId && (payload.action === "in_progress" || payload.action === "queued" || payload.action === "waiting"))
      await this.#renew(runId);
  }

  async onWorkflowRun(payload: WorkflowRunPayload): Promise<void> {
    const wr = payload.workflow_run;
    if (wr.event !== "workflow_dispatch") return;
    const runId = await this.#runFor(payload, wr.id, wr);
    if (!runId) return;
    if (payload.action === "requested" || payload.action === "in_progress") {
      await this.#renew(runId);
      return;
    }
    if (payload.action !== "completed") return;
    const run = await this.deps.queries.run(runId);
    // A late completion (its lease expired first) still counts until the run is classified.
    if (!run || (run.state !== "live" && !(run.state === "expired" && run.class === null))) return;
    // A workflow cancelled or never started is a run-level infrastructure death: its attempt is not charged.
    const infra: InfraDeath | null =
      wr.conclusion === "cancelled"
        ? "workflow-cancelled"
        : wr.conclusion === "startup_failure"
          ? "workflow-startup-failure"
          : null;
    const report: ExitReport = {
      leaseEpoch: run.leaseEpoch,
      exitCode: wr.conclusion === "success" ? 0 : 1,
      ...(infra ? { infra } : {}),
    };
    await this.deps.exits.exit(null, run.id, report).catch((err: unknown) => {
      if (isLeaseRefusal(err)) return; // the lease already ended another way
      throw err;
    });
  }

  /**
   * The Orchestra run behind an Actions run: by id once linked (the dispatch
   * answer names it), else one not linked yet only if the Actions run is the
   * configured workflow's, dispatched by the App itself, with the run id in
   * its title (`run-name:`). Anything else is not Orchestra's: nothing is
   * linked, and the log says why.
   */
  async #runFor(payload: Delivered, workflowRunId: number, wr: ActionsRun | null): Promise<string | null> {
    const { queries, log } = this.deps;
    const repo = payload.repository.full_name;
    const linked = await queries.linkedRun(workflowRunId);
    if (linked) return linked.id;
    if (!wr) return null;
    const tasks = await queries.dispatchedTasks(repo);
    if (tasks.length === 0) return null;
    const live = await queries.unlinkedRuns(tasks.map((t) => t.id));
    if (live.length === 0) return null;
    const why = await this.#foreign(payload, wr);
    const title = `${wr.display_title ?? ""} ${wr.name ?? ""}`;
    const match = why ? undefined : live.find((r) => title.includes(r.id));
    if (!match) {
      const fields = { repo, workflowRunId, path: wr.path, actor: wr.actor?.login, title: wr.display_title };
      const head = `workflow_dispatch run ${workflowRunId} of ${repo} is not linked to an Orchestra run`;
      if (why) log.info(fields, `${head}: ${why}; Orchestra follows only the App's own dispatches of its workflow`);
      else
        log.warn(
          fields,
          `${head}: its title names none of the repository's dispatched runs. Give the workflow a run-name ` +
            "that includes ${{ inputs.run }}, or the run's lease expires without its progress",
        );
      return null;
    }
    const r = await this.deps.tasks.raise(
      { taskId: match.taskId },
      { kind: "dispatched", runId: match.id, workflowRunId },
    );
    return r.outcome === "applied" ? match.id : null;
  }

  /** Why an Actions run is not one the App dispatched from its configured workflow, or null when it is. */
  async #foreign(payload: Delivered, wr: ActionsRun): Promise<string | null> {
    const installationId = payload.installation?.id;
    if (installationId === undefined) return "the event names no installation";
    const cfg = await this.deps.configs.get(
      installationId,
      payload.repository.full_name,
      this.deps.clock.now().getTime(),
    );
    const workflow = cfg.ok ? cfg.config.dispatch?.workflow : undefined;
    if (!workflow) return "the repository's configuration names no dispatch workflow";
    const path = wr.path.replace(/@.*$/, "");
    if (![String(wr.workflow_id), path, path.split("/").pop()].includes(workflow))
      return `it is a run of ${path}, not of the dispatch workflow ${workflow}`;
    const bot = (await this.deps.botLogin()).toLowerCase();
    for (const [role, actor] of [
      ["started", wr.actor],
      ["triggered", wr.triggering_actor],
    ] as const) {
      if (actor && (actor.type !== "Bot" || actor.login.toLowerCase() !== bot))
        return `it was ${role} by ${actor.login}, not by the App (${bot})`;
    }
    if (!wr.actor) return "it names no actor";
    return null;
  }

  async #renew(runId: string): Promise<void> {
    const run = await this.deps.queries.run(runId);
    if (!run || run.state !== "live") return;
    await this.deps.leases.heartbeat(null, run.id, run.leaseEpoch).catch((err: unknown) => {
      if (!(err instanceof Refusal)) throw err;
    });
  }
}
