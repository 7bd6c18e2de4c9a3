/**
 * A run's lease, from its worker's side: heartbeats renew it (and carry the
 * decisions owed to the run), receipts acknowledge decisions, questions are
 * recorded. Every call carries the lease epoch; a stale one is refused with
 * 409 and a reason, and changes nothing.
 */
import { randomUUID } from "node:crypto";
import { leaseRefused, Refusal } from "../refusal.js";
import type { Tasks } from "../apply/tasks.js";
import { awaitsOf } from "../human/conditions.js";
import type { Usage } from "../machine/events.js";
import type { Run, Task } from "../store/generated/sqlite/client.js";
import type { ClaimQueries } from "./queries.js";
import type { Worker, Workers } from "../workers/workers.js";
import type { DecisionOut, Decisions } from "./decisions.js";
import { assertConditionInScope } from "../human/conditions.js";

/**
 * What a heartbeat may say about the run's progress; any change counts as
 * progress. `dirty` and `ahead` are what the worker's worktree holds that
 * GitHub may not: a lease that ends without an exit is classified with them.
 */
export interface Progress {
  headSha?: string;
  worktree?: string;
  step?: string;
  /** The worktree has uncommitted changes. */
  dirty?: boolean;
  /** Local commits ahead of the base. */
  ahead?: number;
}

/** The stored form of a progress report: one comparable string (`dirty` and `ahead` only when reported). */
export function progressDigest(p: Progress | undefined): string | undefined {
  if (!p || Object.values(p).every((v) => v === undefined)) return undefined;
  return JSON.stringify({
    headSha: p.headSha ?? null,
    worktree: p.worktree ?? null,
    step: p.step ?? null,
    ...(p.dirty !== undefined ? { dirty: p.dirty } : {}),
    ...(p.ahead !== undefined ? { ahead: p.ahead } : {}),
  });
}

/**
 * The seconds a lease has left by the service's clock. Workers pace their
 * heartbeats by this rather than by `leaseExpiresAt` against their own clock,
 * so a worker whose clock is off by minutes still renews in time.
 */
export function leaseSecondsLeft(expiresAt: Date, now: Date): number {
  return Math.max(0, Math.round((expiresAt.getTime() - now.getTime()) / 1000));
}

export class Leases {
  constructor(
    readonly deps: {
      queries: Pick<ClaimQueries, "run" | "task">;
      tasks: Tasks;
      workers: Workers;
      decisions: Decisions;
      /** The service's clock: the lease's length is told as seconds from now, whatever the worker's clock says. */
      clock?: { now(): Date };
    },
  ) {}

  /** The run, if it exists and belongs to the worker (null worker: the App itself, for dispatched runs). */
  async runOf(worker: Worker | null, runId: string): Promise<{ run: Run; task: Task }> {
    const run = await this.deps.queries.run(runId);
    if (!run) throw new Refusal("not-found", `no run ${runId}`);
    if (worker && run.workerId !== worker.id) throw new Refusal("forbidden", `run ${runId} belongs to another worker`);
    const task = await this.deps.queries.task(run.taskId);
    if (!task) throw new Refusal("not-found", `no task for run ${runId}`);
    return { run, task };
  }

  /** 409 unless the run holds its live lease under this epoch. */
  assertLive(run: Run, task: Task, leaseEpoch: string): void {
    if (run.leaseEpoch !== leaseEpoch)
      throw leaseRefused("stale lease epoch: this run's lease has another epoch", "stale-epoch");
    if (run.state !== "live")
      throw leaseRefused(`lease no longer held: ${run.endReason ?? run.state}`, run.stalled ? "stalled" : run.state);
    if (task.runId !== run.id || task.leaseEpoch !== leaseEpoch)
      throw leaseRefused("lease no longer held: the task has moved on", "superseded");
  }

  async heartbeat(
    worker: Worker | null,
    runId: string,
    leaseEpoch: string,
    usage?: Usage,
    progress?: Progress,
  ): Promise<{ leaseExpiresAt: string; leaseSeconds: number; decisions: DecisionOut[] }> {
    const { run, task } = await this.runOf(worker, runId);
    const digest = progressDigest(progress);
    const r = await this.deps.tasks.raise(
      { task, run },
      { kind: "heartbeat", runId, leaseEpoch, ...(usage ? { usage } : {}), ...(digest ? { progress: digest } : {}) },
    );
    if (r.outcome === "refused" && r.reason === "stalled") {
      // The lease stops here; the run is classified like an expired lease.
      await this.deps.tasks.raise({ taskId: task.id }, { kind: "lease-stalled", runId, leaseEpoch });
    }
    if (r.outcome === "refused" && (r.reason === "over-time" || r.reason === "over-budget")) {
      // Past a cap the lease is not renewed, but what the heartbeat reports (the spend above all) is kept.
      await this.deps.tasks.raise(
        { taskId: task.id },
        {
          kind: "heartbeat",
          runId,
          leaseEpoch,
          renew: false,
          ...(usage ? { usage } : {}),
          ...(digest ? { progress: digest } : {}),
        },
      );
    }
    if (r.outcome === "refused") throw leaseRefused(r.message, r.reason);
    if (r.outcome !== "applied") throw leaseRefused("lease no longer held", "superseded");
    if (worker) await this.deps.workers.seen(worker);
    const expiresAt = r.decision.task.leaseExpiresAt!;
    return {
      leaseExpiresAt: expiresAt.toISOString(),
      leaseSeconds: leaseSecondsLeft(expiresAt, this.deps.clock?.now() ?? new Date()),
      decisions: await this.deps.decisions.forHeartbeat(run.taskId, run.id, task.headSha),
    };
  }

  /** The run has a decision it was handed: it is not handed to this run again, and its comment says so. */
  async receipt(worker: Worker, runId: string, decisionId: string, leaseEpoch: string): Promise<void> {
    const { run, task } = await this.runOf(worker, runId);
    this.assertLive(run, task, leaseEpoch);
    const r = await this.deps.decisions.receipt(runId, decisionId);
    if (!r) throw new Refusal("not-found", `decision ${decisionId} was not handed to run ${runId}`);
    if (r.first)
      await this.deps.tasks.raise(
        { taskId: task.id },
        { kind: "decision-receipted", decisionId, runId, commentId: r.commentId },
      );
  }

  /**
   * A worker's question (or a request for a sign-off, kind `verify:<phase>`):
   * posted on the issue once; with `blocks: "run"` the run stops and the
   * task waits blocked for the answer.
   */
  async decisionRequest(
    worker: Worker,
    runId: string,
    body: { leaseEpoch: string; question: string; kind?: string; blocks?: "run" | "nothing"; condition?: string },
  ): Promise<string> {
    const { run, task } = await this.runOf(worker, runId);
    if (body.condition) assertConditionInScope(body.condition, this.deps.workers.reposOf(worker));
    const decisionId = randomUUID();
    const subject = body.kind && body.kind !== "question" ? body.kind : undefined;
    const awaits = body.condition ? awaitsOf(body.condition, task.repo) : null;
    const r = await this.deps.tasks.raise(
      { task, run },
      {
        kind: "decision-requested",
        runId,
        leaseEpoch: body.leaseEpoch,
        decisionId,
        question: body.question,
        blocks: body.blocks ?? "run",
        ...(body.condition ? { condition: body.condition } : {}),
        ...(awaits ? { awaits } : {}),
        ...(subject ? { subject } : {}),
      },
    );
    if (r.outcome === "refused") throw leaseRefused(r.message, r.reason);
    void worker;
    return decisionId;
  }
}
