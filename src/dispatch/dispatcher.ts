/**
 * Dispatch mode: instead of waiting for a worker, Orchestra claims the task
 * for a workflow run and the outbox triggers `workflow_dispatch` with the
 * run's inputs. `workflow_run` / `workflow_job` progress renews the lease and
 * the run's completion is its exit. A dispatch GitHub refuses puts the task
 * back without charging an attempt (see the dispatch-refused row).
 */
import type { EmitterWebhookEvent } from "@octokit/webhooks";
import type { RepoConfig } from "../config/repo.js";
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

export class Dispatcher {
  constructor(
    readonly deps: {
      queries: DispatchQueries;
      tasks: Tasks;
      claims: Claims;
      leases: Leases;
      exits: Exits;
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
    const runId = await this.#runFor(payload.repository.full_name, job.run_id, null);
    if (runId && (payload.action === "in_progress" || payload.action === "queued" || payload.action === "waiting"))
      await this.#renew(runId);
  }

  async onWorkflowRun(payload: WorkflowRunPayload): Promise<void> {
    const wr = payload.workflow_run;
    if (wr.event !== "workflow_dispatch") return;
    const runId = await this.#runFor(payload.repository.full_name, wr.id, wr);
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
   * The Orchestra run behind an Actions run: by id once linked, else
   * by the run id in its title, else the oldest unlinked dispatch.
   */
  async #runFor(
    repo: string,
    workflowRunId: number,
    wr: { display_title?: string | null; name?: string | null } | null,
  ): Promise<string | null> {
    const { queries } = this.deps;
    const linked = await queries.linkedRun(workflowRunId);
    if (linked) return linked.id;
    if (!wr) return null;
    const tasks = await queries.dispatchedTasks(repo);
    if (tasks.length === 0) return null;
    const live = await queries.unlinkedRuns(tasks.map((t) => t.id));
    const title = `${wr.display_title ?? ""} ${wr.name ?? ""}`;
    const match = live.find((r) => title.includes(r.id)) ?? live[0];
    if (!match) return null;
    const r = await this.deps.tasks.raise(
      { taskId: match.taskId },
      { kind: "dispatched", runId: match.id, workflowRunId },
    );
    return r.outcome === "applied" ? match.id : null;
  }

  async #renew(runId: string): Promise<void> {
    const run = await this.deps.queries.run(runId);
    if (!run || run.state !== "live") return;
    await this.deps.leases.heartbeat(null, run.id, run.leaseEpoch).catch((err: unknown) => {
      if (!(err instanceof Refusal)) throw err;
    });
  }
}
