/**
 * The task lifecycle: queue by label, fenced claims, leases, exits, review,
 * completion, cancellation and dispatch mode. Every state change is a
 * conditional update of the task row (state, run id, lease epoch), so a late
 * or duplicated event changes nothing; GitHub writes happen after the change
 * is recorded and are retried by the sweep until GitHub matches.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Db } from "../store/db.js";
import type { ConfigLoader } from "../config/loader.js";
import { branchFor, priorityOf, stateLabels, type RepoConfig } from "../config/repo.js";
import { GitHubError, repoRef, type GitHub, type GitHubFor, type PullInfo } from "../github/port.js";
import { judge, PermissionCache, type Actor } from "../trust/trust.js";
import { once } from "../store/once.js";
import { parseRing, pushError } from "../store/error-ring.js";
import { dispatchBackoffMs, labelFor, QUESTION_TTL_MS, type Continuation, type TaskState } from "./model.js";
import { gatherFacts } from "../outcomes/gather.js";
import { budgeted, budgetExhausted, withWriteBudget, WriteBudgetExhausted } from "../github/budget.js";
import { classify, type Verdict } from "../outcomes/classify.js";
import { recover, type TaskMoves } from "../recover/recover.js";
import type { Task, Run, Worker } from "../store/generated/sqlite/client.js";

export interface Clock {
  now(): Date;
}

export interface LifecycleDeps {
  db: Db;
  githubFor: GitHubFor;
  configs: ConfigLoader;
  log: Logger;
  /** The App's bot login (`<slug>[bot]`), to recognise its own label changes. */
  botLogin: () => Promise<string>;
  clock?: Clock;
}

export interface ClaimAnswer {
  task: { id: string; repo: string; issue: number; title: string; body: string };
  run: {
    id: string;
    attempt: number;
    leaseEpoch: string;
    leaseExpiresAt: string;
    branch: string;
    continuation: Continuation | null;
  };
  decisions: DecisionOut[];
}

export interface DecisionOut {
  id: string;
  kind: string;
  subject?: string;
  body: string;
  author: string;
}

export interface ExitReport {
  leaseEpoch: string;
  exitCode: number;
  branch?: string;
  headSha?: string;
  testsPassed?: boolean;
  dirty?: boolean;
  turnCapHit?: boolean;
  lastToolCalls?: string[];
  question?: string;
}

export interface ExitAnswer {
  outcome: "review" | "classified";
  prNumber?: number;
  class?: string;
  recovery?: string;
  evidence: Record<string, unknown>;
}

/** An error the worker API turns into its status code. */
export class LifecycleError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 503,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === "object" ? (v as Obj) : {});
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The task row's fields that hold a lease, cleared. */
const NO_LEASE = { runId: null, leaseEpoch: null, leaseExpiresAt: null, workerId: null } as const;

/** GitHub writes one sweep may make, so a sweep can never become a storm. */
const SWEEP_WRITE_BUDGET = 40;

export class Lifecycle {
  readonly #db: Db;
  readonly #githubFor: GitHubFor;
  readonly #configs: ConfigLoader;
  readonly #log: Logger;
  readonly #botLogin: () => Promise<string>;
  readonly #clock: Clock;
  readonly #permissions = new PermissionCache();
  /** What the recoveries may do to a task, and nothing else. */
  readonly #moves: TaskMoves;

  constructor(deps: LifecycleDeps) {
    this.#db = deps.db;
    this.#githubFor = async (id) => budgeted(await deps.githubFor(id));
    this.#configs = deps.configs;
    this.#log = deps.log;
    this.#botLogin = deps.botLogin;
    this.#clock = deps.clock ?? { now: () => new Date() };
    this.#moves = {
      db: this.#db,
      clock: this.#clock,
      finish: (task, run, config, to, continuation, gh) => this.#finish(task, run, config, to, continuation, gh),
      toReview: (task, prNumber, headSha, gh) => this.#toReview(task, prNumber, headSha, gh),
      settle: (task, merge, gh) => this.#settle(task, merge, gh),
      comment: (task, key, body, gh) => this.#comment(task, key, body, gh),
      runError: (runId, klass, message) => this.#runError(runId, klass, message),
    };
  }

  // ---------------------------------------------------------------- helpers

  async #isSelf(actor: Actor): Promise<boolean> {
    return actor.type === "Bot" && actor.login.toLowerCase() === (await this.#botLogin()).toLowerCase();
  }

  async #config(task: Pick<Task, "installationId" | "repo">): Promise<RepoConfig | null> {
    const r = await this.#configs.get(task.installationId, task.repo);
    return r.ok ? r.config : null;
  }

  /**
   * The one function that writes state labels: add the task's label, then
   * remove the one GitHub carried before (both idempotent). Marks the task
   * synced only if its label did not change meanwhile.
   */
  async syncLabel(task: Task, github?: GitHub): Promise<void> {
    const config = await this.#config(task);
    if (!config) return;
    const gh = github ?? (await this.#githubFor(task.installationId));
    const r = repoRef(task.repo);
    const want = task.label;
    const had = task.labelOnGitHub;
    if (want && want !== had) await gh.addLabels(r, task.issue, [want]);
    // Remove what GitHub carried; when that is unknown, every other state label.
    const stale = had === null && want === null ? stateLabels(config) : had && had !== want ? [had] : [];
    for (const label of stale) await gh.removeLabel(r, task.issue, label);
    await this.#db.task.updateMany({ where: { id: task.id, label: want }, data: { labelOnGitHub: want, labelSynced: true } });
  }

  /** Labels are best effort inside a request: the sweep finishes what failed. */
  async #trySync(task: Task, github?: GitHub): Promise<void> {
    try {
      await this.syncLabel(task, github);
    } catch (err) {
      this.#log.warn({ task: task.id, err: errText(err) }, "label write failed; the sweep will retry it");
    }
  }

  /** Re-reads a task just changed and brings its label on GitHub in line. */
  async #syncFresh(taskId: string, github?: GitHub): Promise<Task> {
    const task = (await this.#db.task.findUnique({ where: { id: taskId } }))!;
    await this.#trySync(task, github);
    return task;
  }

  async #runError(runId: string, klass: string, message: string): Promise<void> {
    const run = await this.#db.run.findUnique({ where: { id: runId } });
    if (!run) return;
    const errors = pushError(parseRing(run.errors), { at: this.#clock.now().toISOString(), class: klass, message });
    await this.#db.run.update({ where: { id: runId }, data: { errors: JSON.stringify(errors) } });
  }

  /** One comment per key, however often a delivery or sweep repeats. */
  async #comment(on: Pick<Task, "installationId" | "repo" | "issue">, key: string, body: string, github?: GitHub): Promise<void> {
    const gh = github ?? (await this.#githubFor(on.installationId));
    await once(this.#db, key, async () => {
      await gh.createComment(repoRef(on.repo), on.issue, body);
    });
  }

  // --------------------------------------------------------------- webhooks

  /** issues.labeled: the queue label from a trusted human creates or re-queues a task. */
  async onIssueLabeled(payload: Obj, installationId: number, github: GitHub, deliveryId: string): Promise<void> {
    const issue = obj(payload["issue"]);
    const repo = String(obj(payload["repository"])["full_name"] ?? "");
    const labelName = String(obj(payload["label"])["name"] ?? "");
    const sender = obj(payload["sender"]);
    const actor: Actor = { login: String(sender["login"] ?? ""), type: String(sender["type"] ?? "User") };
    if (!repo || issue["pull_request"]) return; // never turn a PR (ours or anyone's) into a task
    if (await this.#isSelf(actor)) return;
    const cfg = await this.#configs.get(installationId, repo);
    if (!cfg.ok) {
      if (labelName.startsWith("agent:")) await this.#reportBadConfig({ installationId, repo, issue: Number(issue["number"]) }, cfg.problems, github);
      return;
    }
    const config = cfg.config;
    if (labelName !== config.labels.queued) return;
    const number = Number(issue["number"]);
    const r = repoRef(repo);
    if (issue["state"] === "closed") return;
    const verdict = await judge(actor, config, () => this.#permissions.get(`${repo}:${actor.login}`, () => github.permission(r, actor.login)));
    if (!verdict.trusted) {
      await github.removeLabel(r, number, config.labels.queued);
      await this.#comment(
        { installationId, repo, issue: number },
        `untrusted-queue:${deliveryId}`,
        `@${actor.login} the \`${config.labels.queued}\` label was removed: only people with ${config.trust.minPermission} permission or higher on this repository (or listed in \`trust.users\` in \`.github/orchestra.yml\`) can queue work for agents (${verdict.why}). Ask a maintainer to add the label.`,
        github,
      );
      this.#log.info({ repo, issue: number, actor: actor.login }, "untrusted queue label reverted");
      return;
    }
    const labels = (Array.isArray(issue["labels"]) ? issue["labels"] : []).map((l) => String(obj(l)["name"] ?? ""));
    const now = this.#clock.now();
    const existing = await this.#db.task.findUnique({ where: { repo_issue: { repo, issue: number } } });
    let task: Task;
    if (!existing) {
      try {
        task = await this.#db.task.create({
          data: {
            id: randomUUID(),
            installationId,
            repo,
            issue: number,
            title: String(issue["title"] ?? ""),
            body: String(issue["body"] ?? ""),
            state: "queued",
            attempt: 0,
            priority: priorityOf(config, labels),
            queuedAt: now,
            branch: branchFor(config, number),
            label: config.labels.queued,
            labelOnGitHub: config.labels.queued,
            labelSynced: true,
            createdAt: now,
            updatedAt: now,
          },
        });
      } catch (err) {
        if ((err as { code?: string }).code === "P2002") return; // created by a concurrent delivery
        throw err;
      }
      this.#log.info({ task: task.id, repo, issue: number, by: actor.login }, "task queued");
    } else if (["done", "cancelled", "failed", "blocked"].includes(existing.state)) {
      // A trusted human re-queued finished or stuck work: a fresh attempt budget, history kept.
      const r2 = await this.#db.task.updateMany({
        where: { id: existing.id, version: existing.version },
        data: {
          state: "queued",
          attempt: 0,
          queuedAt: now,
          title: String(issue["title"] ?? existing.title),
          body: String(issue["body"] ?? existing.body),
          priority: priorityOf(config, labels),
          label: config.labels.queued,
          labelSynced: false,
          labelOnGitHub: existing.labelOnGitHub ?? config.labels.queued,
          backoffUntil: null,
          backoffCount: 0,
          diagnostic: null,
          version: { increment: 1 },
          updatedAt: now,
        },
      });
      if (r2.count === 0) return;
      task = await this.#syncFresh(existing.id, github);
      this.#log.info({ task: task.id, repo, issue: number, by: actor.login }, "task re-queued");
    } else {
      // Already queued, claimed or in review. A second state label would break
      // the one-label invariant, so a queue label on running work goes again.
      if (existing.state !== "queued") await github.removeLabel(r, number, config.labels.queued);
      return;
    }
    if (config.dispatch) await this.dispatch(task, config, github);
  }

  /** issues.unlabeled: removing the queue label from a queued task cancels it. */
  async onIssueUnlabeled(payload: Obj, installationId: number): Promise<void> {
    const repo = String(obj(payload["repository"])["full_name"] ?? "");
    const number = Number(obj(payload["issue"])["number"]);
    const sender = obj(payload["sender"]);
    if (await this.#isSelf({ login: String(sender["login"] ?? ""), type: String(sender["type"] ?? "") })) return;
    const task = await this.#db.task.findUnique({ where: { repo_issue: { repo, issue: number } } });
    if (!task || task.state !== "queued") return;
    const config = await this.#config({ installationId, repo });
    if (!config || String(obj(payload["label"])["name"]) !== config.labels.queued) return;
    await this.#db.task.updateMany({
      where: { id: task.id, version: task.version, state: "queued" },
      data: { state: "cancelled", label: null, labelOnGitHub: null, labelSynced: true, version: { increment: 1 }, updatedAt: this.#clock.now() },
    });
    this.#log.info({ task: task.id }, "queue label removed: task cancelled");
  }

  /** issues.closed: the task ends, its lease is revoked and its agent:* labels go. */
  async onIssueClosed(payload: Obj, github: GitHub): Promise<void> {
    const issue = obj(payload["issue"]);
    const repo = String(obj(payload["repository"])["full_name"] ?? "");
    const task = await this.#db.task.findUnique({ where: { repo_issue: { repo, issue: Number(issue["number"]) } } });
    if (!task || task.state === "done" || task.state === "cancelled") return;
    const to: TaskState = issue["state_reason"] === "completed" || task.prNumber !== null ? "done" : "cancelled";
    const now = this.#clock.now();
    const r = await this.#db.task.updateMany({
      where: { id: task.id, version: task.version },
      data: { state: to, ...NO_LEASE, label: null, labelSynced: false, version: { increment: 1 }, updatedAt: now },
    });
    if (r.count === 0) throw new Error("task changed while closing; retrying");
    if (task.runId) {
      await this.#db.run.updateMany({ where: { id: task.runId, state: "live" }, data: { state: "revoked", endedAt: now, endReason: `issue closed by ${String(obj(payload["sender"])["login"] ?? "someone")}` } });
    }
    // Whatever agent:* labels the closed issue still shows, they go.
    const present = (Array.isArray(issue["labels"]) ? issue["labels"] : []).map((l) => String(obj(l)["name"] ?? ""));
    const config = await this.#config(task);
    const ours = config ? stateLabels(config) : [];
    const rr = repoRef(repo);
    for (const label of present.filter((l) => ours.includes(l))) await github.removeLabel(rr, task.issue, label);
    await this.#db.task.updateMany({ where: { id: task.id, label: null }, data: { labelOnGitHub: null, labelSynced: true } });
    this.#log.info({ task: task.id, state: to }, "issue closed: task ended");
  }

  /** pull_request.opened (and reopened): a PR from a task's branch links it and moves the task to review. */
  async onPullOpened(payload: Obj, github: GitHub): Promise<void> {
    const pr = obj(payload["pull_request"]);
    const repo = String(obj(payload["repository"])["full_name"] ?? "");
    const head = obj(pr["head"]);
    if (String(obj(head["repo"])["full_name"] ?? "") !== repo) return; // forks are not agent branches
    const task = await this.#db.task.findFirst({ where: { repo, branch: String(head["ref"] ?? "") } });
    if (!task) return; // a PR Orchestra did not expect: ignored
    await this.#toReview(task, Number(pr["number"]), String(head["sha"] ?? ""), github);
  }

  async #toReview(task: Task, prNumber: number, headSha: string, github?: GitHub): Promise<boolean> {
    if (task.state === "review" && task.prNumber === prNumber) return true;
    if (task.state !== "claimed" && task.state !== "queued") {
      await this.#db.task.updateMany({ where: { id: task.id, prNumber: null }, data: { prNumber } });
      return false;
    }
    const config = await this.#config(task);
    if (!config) return false;
    const now = this.#clock.now();
    const r = await this.#db.task.updateMany({
      where: { id: task.id, version: task.version },
      data: { state: "review", prNumber, ...NO_LEASE, label: config.labels.review, labelSynced: false, version: { increment: 1 }, updatedAt: now },
    });
    if (r.count === 0) return false;
    if (task.runId) {
      await this.#db.run.updateMany({ where: { id: task.runId, state: "live" }, data: { state: "review", endedAt: now, endReason: `pull request #${prNumber} opened`, prNumber, headSha } });
    }
    await this.#syncFresh(task.id, github);
    this.#log.info({ task: task.id, pr: prNumber }, "task in review");
    return true;
  }

  /** pull_request.closed: merged → done with a completion receipt; closed unmerged → blocked. */
  async onPullClosed(payload: Obj, github: GitHub): Promise<void> {
    const pr = obj(payload["pull_request"]);
    const repo = String(obj(payload["repository"])["full_name"] ?? "");
    const number = Number(pr["number"]);
    const headRef = String(obj(pr["head"])["ref"] ?? "");
    const task =
      (await this.#db.task.findFirst({ where: { repo, prNumber: number } })) ??
      (String(obj(obj(pr["head"])["repo"])["full_name"] ?? "") === repo ? await this.#db.task.findFirst({ where: { repo, branch: headRef } }) : null);
    if (!task) return;
    if (pr["merged"] === true) {
      await this.#settle(task, {
        prNumber: number,
        mergeSha: String(pr["merge_commit_sha"] ?? ""),
        headSha: String(obj(pr["head"])["sha"] ?? ""),
        mergedAt: new Date(String(pr["merged_at"] ?? this.#clock.now().toISOString())),
      }, github);
      return;
    }
    if (task.state !== "review" || task.prNumber !== number) return;
    const config = await this.#config(task);
    if (!config) return;
    const r = await this.#db.task.updateMany({
      where: { id: task.id, version: task.version },
      data: { state: "blocked", label: config.labels.blocked, labelSynced: false, version: { increment: 1 }, updatedAt: this.#clock.now() },
    });
    if (r.count === 0) return;
    const updated = await this.#syncFresh(task.id, github);
    await this.#comment(
      updated,
      `pr-closed:${task.id}:${number}`,
      `Pull request #${number} was closed without merging, so this task is now blocked. To have an agent try again, remove \`${config.labels.blocked}\` and add \`${config.labels.queued}\`.`,
      github,
    );
  }

  /** The PR merged: done, labels cleared, lease released, receipt binding the merge to the run. */
  async #settle(task: Task, m: { prNumber: number; mergeSha: string; headSha: string; mergedAt: Date }, github?: GitHub): Promise<void> {
    const now = this.#clock.now();
    if (task.state !== "done") {
      const r = await this.#db.task.updateMany({
        where: { id: task.id, version: task.version },
        data: { state: "done", prNumber: m.prNumber, ...NO_LEASE, label: null, labelSynced: false, version: { increment: 1 }, updatedAt: now },
      });
      if (r.count === 0) throw new Error("task changed while settling; retrying");
      if (task.runId) await this.#db.run.updateMany({ where: { id: task.runId, state: "live" }, data: { state: "exited", endedAt: now, endReason: `pull request #${m.prNumber} merged` } });
    }
    const submitter = await this.#db.run.findFirst({ where: { taskId: task.id, prNumber: m.prNumber }, orderBy: { attempt: "desc" } });
    await this.#db.completionReceipt.upsert({
      where: { taskId: task.id },
      create: { id: randomUUID(), taskId: task.id, runId: submitter?.id ?? null, prNumber: m.prNumber, mergeSha: m.mergeSha, headSha: m.headSha, mergedAt: m.mergedAt },
      update: {},
    });
    await this.#syncFresh(task.id, github);
    this.#log.info({ task: task.id, pr: m.prNumber, merge: m.mergeSha }, "task done: pull request merged");
  }

  // ------------------------------------------------------------- worker API

  async registerWorker(name: string, repos: string[] | undefined): Promise<{ id: string; token: string }> {
    const token = `orw_${randomBytes(24).toString("hex")}`;
    const id = randomUUID();
    await this.#db.worker.create({
      data: { id, name, tokenHash: hashToken(token), repos: repos ? JSON.stringify(repos) : null, createdAt: this.#clock.now() },
    });
    return { id, token };
  }

  async workerByToken(token: string): Promise<Worker | null> {
    return this.#db.worker.findUnique({ where: { tokenHash: hashToken(token) } });
  }

  /** Oldest highest-priority claimable task among the worker's repos, or null (204). */
  async claim(worker: Worker): Promise<ClaimAnswer | null> {
    const now = this.#clock.now();
    await this.#db.worker.update({ where: { id: worker.id }, data: { lastSeenAt: now } });
    const repos = worker.repos ? (JSON.parse(worker.repos) as string[]) : null;
    const candidates = await this.#db.task.findMany({
      where: {
        state: "queued",
        ...(repos ? { repo: { in: repos } } : {}),
        OR: [{ backoffUntil: null }, { backoffUntil: { lte: now } }],
      },
      orderBy: [{ priority: "asc" }, { queuedAt: "asc" }],
      take: 25,
    });
    for (const c of candidates) {
      const config = await this.#config(c).catch(() => null);
      if (!config || config.dispatch) continue; // paused repo, or the App runs it itself
      if (!(await this.#underLimits(c.repo, config, 0))) continue;
      const won = await this.#claimTask(c, config, { workerId: worker.id, mode: "worker" });
      if (won) return won;
    }
    return null;
  }

  async #underLimits(repo: string, config: RepoConfig, slack: number): Promise<boolean> {
    const owner = repo.split("/")[0]!;
    const [inRepo, inOrg] = await Promise.all([
      this.#db.task.count({ where: { state: "claimed", repo } }),
      this.#db.task.count({ where: { state: "claimed", repo: { startsWith: `${owner}/` } } }),
    ]);
    return inRepo - slack < config.limits.maxConcurrentPerRepo && inOrg - slack < config.limits.maxConcurrentPerOrg;
  }

  /**
   * The fenced claim: one conditional update moves the task from queued to
   * claimed with run N+1 and a new lease epoch. Of two claimers, exactly one
   * update matches. Limits are checked again after winning (two claims in one
   * repo may race past a limit); the loser of that check gives the task back.
   */
  async #claimTask(c: Task, config: RepoConfig, who: { workerId: string | null; mode: "worker" | "dispatch" }, opts: { syncLabel?: boolean } = {}): Promise<ClaimAnswer | null> {
    const now = this.#clock.now();
    const runId = randomUUID();
    const leaseEpoch = randomUUID();
    const leaseExpiresAt = new Date(now.getTime() + config.limits.leaseSeconds * 1000);
    const won = await this.#db.task.updateMany({
      where: { id: c.id, state: "queued", version: c.version },
      data: {
        state: "claimed",
        attempt: c.attempt + 1,
        runId,
        leaseEpoch,
        leaseExpiresAt,
        workerId: who.workerId,
        label: config.labels.inProgress,
        labelSynced: false,
        labelOnGitHub: c.labelOnGitHub,
        version: { increment: 1 },
        updatedAt: now,
      },
    });
    if (won.count !== 1) return null;
    if (!(await this.#underLimits(c.repo, config, 1))) {
      await this.#giveBack(c, runId, null);
      return null;
    }
    await this.#db.run.create({
      data: {
        id: runId,
        taskId: c.id,
        attempt: c.attempt + 1,
        workerId: who.workerId,
        mode: who.mode,
        state: "live",
        leaseEpoch,
        leaseExpiresAt,
        branch: c.branch,
        continuation: c.continuation,
        startedAt: now,
      },
    });
    const task = (await this.#db.task.findUnique({ where: { id: c.id } }))!;
    if (opts.syncLabel !== false) {
      try {
        await this.syncLabel(task);
      } catch (err) {
        // The run never started: the task goes back untouched (attempt not
        // counted) with one diagnostic and a backoff, never a retry storm.
        await this.#abortClaim(task, runId, config, { why: `could not label the issue ${config.labels.inProgress}: ${errText(err)}` });
        return null;
      }
    }
    this.#log.info({ task: c.id, run: runId, attempt: c.attempt + 1, worker: who.workerId, mode: who.mode }, "task claimed");
    return {
      task: { id: task.id, repo: task.repo, issue: task.issue, title: task.title, body: task.body },
      run: {
        id: runId,
        attempt: c.attempt + 1,
        leaseEpoch,
        leaseExpiresAt: leaseExpiresAt.toISOString(),
        branch: task.branch,
        continuation: task.continuation ? (JSON.parse(task.continuation) as Continuation) : null,
      },
      decisions: await this.#deliverDecisions(task.id, runId),
    };
  }

  /** Undo a claim whose run never started. Nothing is charged. */
  async #giveBack(c: Task, runId: string, diagnostic: string | null, backoff?: { until: Date; count: number }): Promise<void> {
    await this.#db.task.updateMany({
      where: { id: c.id, runId },
      data: {
        state: "queued",
        attempt: c.attempt,
        ...NO_LEASE,
        label: c.label,
        labelSynced: c.labelSynced && c.labelOnGitHub === c.label,
        ...(diagnostic ? { diagnostic } : {}),
        ...(backoff ? { backoffUntil: backoff.until, backoffCount: backoff.count } : {}),
        version: { increment: 1 },
        updatedAt: this.#clock.now(),
      },
    });
  }

  /**
   * Undoes a claim (already recorded) whose run never started: the task is
   * queued again with the attempt not counted and the run recorded as aborted.
   * A failure (`why`) also backs the task off, with the diagnostic in the
   * task and the run's error ring.
   */
  async #abortClaim(task: Task, runId: string, config: RepoConfig, failure: { why: string } | null): Promise<void> {
    const before: Task = { ...task, attempt: task.attempt - 1, label: labelFor("queued", config.labels) };
    if (!failure) {
      await this.#giveBack(before, runId, null);
      await this.#db.run.updateMany({ where: { id: runId }, data: { state: "aborted", endedAt: this.#clock.now(), endReason: "sweep write budget spent before dispatch" } });
      return;
    }
    const count = task.backoffCount + 1;
    const until = new Date(this.#clock.now().getTime() + dispatchBackoffMs(count));
    await this.#giveBack(before, runId, failure.why, { until, count });
    await this.#db.run.updateMany({ where: { id: runId }, data: { state: "aborted", endedAt: this.#clock.now(), endReason: "run never started" } });
    await this.#runError(runId, "preparation", failure.why);
    this.#log.warn({ task: task.id, run: runId, why: failure.why, retryAfter: until.toISOString() }, "claim rolled back before the run started; not counted against attempts");
  }

  async #liveRun(worker: Worker | null, runId: string, leaseEpoch: string): Promise<{ run: Run; task: Task }> {
    const run = await this.#db.run.findUnique({ where: { id: runId } });
    if (!run) throw new LifecycleError(404, `no run ${runId}`);
    if (worker && run.workerId !== worker.id) throw new LifecycleError(403, `run ${runId} belongs to another worker`);
    const task = (await this.#db.task.findUnique({ where: { id: run.taskId } }))!;
    if (run.leaseEpoch !== leaseEpoch) throw new LifecycleError(409, "stale lease epoch: this run's lease has another epoch", "stale-epoch");
    if (run.state !== "live" || task.runId !== run.id || task.leaseEpoch !== leaseEpoch) {
      throw new LifecycleError(409, `lease no longer held: ${run.endReason ?? run.state}`, run.state === "live" ? "superseded" : run.state);
    }
    return { run, task };
  }

  async heartbeat(worker: Worker | null, runId: string, leaseEpoch: string): Promise<{ leaseExpiresAt: string; decisions: DecisionOut[] }> {
    const { run, task } = await this.#liveRun(worker, runId, leaseEpoch);
    const config = await this.#config(task);
    const seconds = config?.limits.leaseSeconds ?? 1800;
    const now = this.#clock.now();
    const leaseExpiresAt = new Date(now.getTime() + seconds * 1000);
    const r = await this.#db.task.updateMany({
      where: { id: task.id, runId: run.id, leaseEpoch, state: "claimed" },
      data: { leaseExpiresAt, updatedAt: now },
    });
    if (r.count !== 1) throw new LifecycleError(409, "lease no longer held", "superseded");
    await this.#db.run.update({ where: { id: run.id }, data: { leaseExpiresAt } });
    if (worker) await this.#db.worker.update({ where: { id: worker.id }, data: { lastSeenAt: now } });
    return { leaseExpiresAt: leaseExpiresAt.toISOString(), decisions: await this.#deliverDecisions(task.id, run.id) };
  }

  async #deliverDecisions(taskId: string, runId: string): Promise<DecisionOut[]> {
    const pending = await this.#db.decision.findMany({
      where: { taskId, kind: { not: "question" }, deliveredRunId: null, supersededAt: null },
      orderBy: { createdAt: "asc" },
    });
    const out: DecisionOut[] = [];
    for (const d of pending) {
      const r = await this.#db.decision.updateMany({ where: { id: d.id, deliveredRunId: null }, data: { deliveredRunId: runId, deliveredAt: this.#clock.now() } });
      if (r.count === 1) out.push({ id: d.id, kind: d.kind, ...(d.subject ? { subject: d.subject } : {}), body: d.body, author: d.author });
    }
    return out;
  }

  async receipt(worker: Worker, runId: string, decisionId: string, leaseEpoch: string): Promise<void> {
    await this.#liveRun(worker, runId, leaseEpoch);
    const d = await this.#db.decision.findUnique({ where: { id: decisionId } });
    if (!d || d.deliveredRunId !== runId) throw new LifecycleError(404, `decision ${decisionId} was not delivered to run ${runId}`);
    await this.#db.decision.updateMany({ where: { id: decisionId, receiptAt: null }, data: { receiptAt: this.#clock.now() } });
  }

  async decisionRequest(worker: Worker, runId: string, body: { leaseEpoch: string; question: string; blocks?: string; condition?: string }): Promise<string> {
    const { run, task } = await this.#liveRun(worker, runId, body.leaseEpoch);
    const id = randomUUID();
    const now = this.#clock.now();
    await this.#db.decision.create({
      data: {
        id,
        taskId: task.id,
        runId: run.id,
        kind: "question",
        subject: body.blocks ?? null,
        body: body.question,
        author: `worker:${worker.name}`,
        condition: body.condition ?? null,
        createdAt: now,
        expiresAt: new Date(now.getTime() + QUESTION_TTL_MS),
      },
    });
    return id;
  }

  /**
   * The worker says it is done. Orchestra looks on GitHub for what the run
   * claims (its PR) before believing it: exit 0 with no PR is not a success.
   */
  async exit(worker: Worker | null, runId: string, report: ExitReport): Promise<ExitAnswer> {
    const run = await this.#db.run.findUnique({ where: { id: runId } });
    if (!run) throw new LifecycleError(404, `no run ${runId}`);
    if (worker && run.workerId !== worker.id) throw new LifecycleError(403, `run ${runId} belongs to another worker`);
    if (run.leaseEpoch !== report.leaseEpoch) throw new LifecycleError(409, "stale lease epoch: this run's lease has another epoch", "stale-epoch");
    if (run.state === "review" && run.prNumber !== null) {
      return { outcome: "review", prNumber: run.prNumber, evidence: { pr: run.prNumber, note: "the pull request was already seen" } };
    }
    if (run.state === "exited" && run.report !== null) {
      // A repeated exit (a lost answer): the same verdict again, or still pending.
      return run.class
        ? { outcome: "classified", ...(run.prNumber ? { prNumber: run.prNumber } : {}), ...this.#verdictOf(run) }
        : { outcome: "classified", evidence: { pending: true, why: "not classified yet; Orchestra classifies it on its next sweep" } };
    }
    const { task } = await this.#liveRun(worker, runId, report.leaseEpoch);
    const config = await this.#config(task);
    if (!config) throw new LifecycleError(503, "the repository's .github/orchestra.yml is invalid; fix it and send the exit again");
    await this.#db.run.update({ where: { id: run.id }, data: { report: JSON.stringify(report), headSha: report.headSha ?? null } });
    const github = await this.#githubFor(task.installationId);
    const branch = report.branch ?? run.branch;
    let branchPulls: PullInfo[];
    let pulls: PullInfo[];
    try {
      branchPulls = await github.pullsForBranch(repoRef(task.repo), branch, "all");
      // Or a PR from another branch that says it closes the issue.
      pulls = branchPulls.length > 0 ? branchPulls : await github.closingPulls(repoRef(task.repo), task.issue);
    } catch (err) {
      await this.#runError(run.id, err instanceof GitHubError ? `github-${err.status ?? "network"}` : "error", `looking for the pull request: ${errText(err)}`);
      throw new LifecycleError(503, `could not verify the exit on GitHub (${errText(err)}); nothing changed, send the exit again`);
    }
    const open = pulls.find((p) => p.state === "open");
    const merged = pulls.find((p) => p.merged);
    if (open) {
      await this.#db.run.update({ where: { id: run.id }, data: { prNumber: open.number, headSha: open.headSha } });
      await this.#toReview(task, open.number, open.headSha, github);
      return { outcome: "review", prNumber: open.number, evidence: { pr: open.number, headSha: open.headSha, branch } };
    }
    if (merged) {
      await this.#db.run.update({ where: { id: run.id }, data: { prNumber: merged.number, class: "merged", recovery: "settle", recoveredAt: this.#clock.now() } });
      await this.#settle(task, { prNumber: merged.number, mergeSha: merged.mergeCommitSha ?? "", headSha: merged.headSha, mergedAt: this.#clock.now() }, github);
      return { outcome: "classified", prNumber: merged.number, class: "merged", recovery: "settle", evidence: { pr: merged.number, merged: true } };
    }
    // No PR: the run is over and its lease with it; what it left is classified.
    const now = this.#clock.now();
    const ended = await this.#db.task.updateMany({
      where: { id: task.id, runId: run.id, leaseEpoch: run.leaseEpoch, state: "claimed" },
      data: { leaseExpiresAt: null, updatedAt: now },
    });
    if (ended.count !== 1) throw new LifecycleError(409, "lease no longer held", "superseded");
    await this.#db.run.update({ where: { id: run.id }, data: { state: "exited", endedAt: now, endReason: `exited ${report.exitCode} without a pull request` } });
    // The branch's PRs were just read (the same branch gathering uses); no second read.
    const settled = await this.settleRun(run.id, "exit", github, branchPulls);
    if (!settled) {
      return {
        outcome: "classified",
        evidence: { pending: true, why: "GitHub could not be asked about the run's branch; Orchestra classifies it on its next sweep" },
      };
    }
    return { outcome: "classified", class: settled.class, recovery: settled.recovery, evidence: settled.evidence };
  }

  /**
   * Classifies a run that ended without a PR (exit or expired lease) and
   * performs the one recovery its class names. The class is recorded before
   * the recovery runs; a recovery that fails is retried by the next sweep,
   * and a GitHub failure while gathering facts leaves the run unclassified
   * (never "absent"). Returns null when the run is not classified yet.
   */
  async settleRun(runId: string, trigger: "exit" | "lease-expired", github?: GitHub, knownPulls?: PullInfo[]): Promise<Verdict | null> {
    let run = await this.#db.run.findUnique({ where: { id: runId } });
    if (!run || run.recoveredAt) return run?.class ? this.#verdictOf(run) : null;
    const task = (await this.#db.task.findUnique({ where: { id: run.taskId } }))!;
    if (task.runId !== run.id) {
      // The task moved on (closed, merged, re-queued by a person): nothing is owed for this run any more.
      await this.#db.run.update({ where: { id: run.id }, data: { recoveredAt: this.#clock.now() } });
      return run.class ? this.#verdictOf(run) : null;
    }
    const config = await this.#config(task);
    if (!config) return null;
    const gh = github ?? (await this.#githubFor(task.installationId));
    const r = repoRef(task.repo);
    if (!run.class) {
      let verdict: Verdict;
      try {
        verdict = classify(await gatherFacts(gh, r, run, trigger, knownPulls));
      } catch (err) {
        await this.#runError(run.id, err instanceof GitHubError ? `github-${err.status ?? "network"}` : "facts", `gathering facts: ${errText(err)}`);
        this.#log.warn({ run: run.id, err: errText(err) }, "run not classified yet: GitHub could not be asked; next sweep retries");
        return null;
      }
      await this.#db.run.updateMany({ where: { id: run.id, class: null }, data: { class: verdict.class, recovery: verdict.recovery, evidence: JSON.stringify(verdict.evidence) } });
      run = (await this.#db.run.findUnique({ where: { id: run.id } }))!;
      this.#log.info({ task: task.id, run: run.id, class: run.class, recovery: run.recovery }, "run classified");
    }
    try {
      await recover(this.#moves, task, run, config, gh);
      await this.#db.run.update({ where: { id: run.id }, data: { recoveredAt: this.#clock.now() } });
    } catch (err) {
      if (err instanceof WriteBudgetExhausted) return null; // the sweep's writes are spent: the next sweep finishes it
      await this.#runError(run.id, "recovery", `${run.recovery}: ${errText(err)}`);
      this.#log.warn({ run: run.id, recovery: run.recovery, err: errText(err) }, "recovery failed; next sweep retries it");
    }
    const final = (await this.#db.run.findUnique({ where: { id: run.id } }))!;
    return this.#verdictOf(final);
  }

  #verdictOf(run: Run): Verdict {
    return { class: run.class as Verdict["class"], recovery: run.recovery as Verdict["recovery"], evidence: run.evidence ? (JSON.parse(run.evidence) as Record<string, unknown>) : {} };
  }

  /** Ends the task's hold on a finished run: queued (maybe a continuation), failed or blocked. */
  async #finish(task: Task, run: Run, config: RepoConfig, to: "queued" | "failed" | "blocked", continuation: Continuation | null, gh: GitHub): Promise<void> {
    const now = this.#clock.now();
    const r = await this.#db.task.updateMany({
      where: { id: task.id, runId: run.id },
      data: {
        state: to,
        ...NO_LEASE,
        continuation: continuation ? JSON.stringify(continuation) : null,
        label: labelFor(to, config.labels),
        labelSynced: false,
        version: { increment: 1 },
        updatedAt: now,
      },
    });
    if (r.count !== 1) return; // already finished by an earlier pass
    const updated = await this.#syncFresh(task.id, gh);
    if (to === "failed") {
      const runs = await this.#db.run.findMany({ where: { taskId: task.id, state: { not: "aborted" } }, orderBy: { attempt: "asc" } });
      const lines = runs.map((x) => `- attempt ${x.attempt}: ${x.endReason ?? x.state}${x.class ? ` — ${x.class}` : ""}${x.endedAt ? ` (${x.endedAt.toISOString()})` : ""}`);
      await this.#comment(
        updated,
        `failed:${task.id}:${task.attempt}`,
        `Agents made ${task.attempt} attempts at this issue without producing a pull request, so it is marked \`${config.labels.failed}\`.\n\n${lines.join("\n")}\n\nTo try again, remove \`${config.labels.failed}\` and add \`${config.labels.queued}\`.`,
        gh,
      );
    }
    this.#log.info({ task: task.id, run: run.id, attempt: task.attempt, to, continuation: continuation?.kind ?? null }, "run settled");
  }

  // ------------------------------------------------------------ dispatch mode

  /**
   * Claims the task for a workflow run and triggers `workflow_dispatch`. A
   * dispatch GitHub refuses undoes the claim without charging an attempt,
   * leaves one diagnostic comment and backs off (1 min, doubling, ≤ 1 h).
   */
  async dispatch(task: Task, config: RepoConfig, github?: GitHub): Promise<boolean> {
    if (!config.dispatch) return false;
    if (task.backoffUntil && task.backoffUntil > this.#clock.now()) return false;
    if (!(await this.#underLimits(task.repo, config, 0))) return false;
    const claim = await this.#claimTask(task, config, { workerId: null, mode: "dispatch" }, { syncLabel: false });
    if (!claim) return false;
    const gh = github ?? (await this.#githubFor(task.installationId));
    const inputs = {
      task: claim.task.id,
      run: claim.run.id,
      attempt: String(claim.run.attempt),
      lease_epoch: claim.run.leaseEpoch,
      branch: claim.run.branch,
      continuation: claim.run.continuation ? JSON.stringify(claim.run.continuation) : "",
    };
    let workflowRunId: number | null;
    try {
      ({ workflowRunId } = await gh.dispatchWorkflow(repoRef(task.repo), config.dispatch.workflow, config.dispatch.ref, inputs));
    } catch (err) {
      const claimed = (await this.#db.task.findUnique({ where: { id: task.id } }))!;
      if (err instanceof WriteBudgetExhausted) {
        // Not GitHub's refusal: this sweep is out of writes. Undo quietly; the next sweep dispatches.
        await this.#abortClaim(claimed, claim.run.id, config, null);
        return false;
      }
      const message = `GitHub refused the workflow dispatch of ${config.dispatch.workflow}@${config.dispatch.ref}: ${errText(err)}`;
      await this.#abortClaim(claimed, claim.run.id, config, { why: message });
      const digest = createHash("sha256").update(message.replace(/\d{3,}/g, "#")).digest("hex").slice(0, 12);
      await this.#comment(
        claimed,
        `dispatch-refused:${task.id}:${digest}`,
        `Orchestra could not start an agent for this issue: ${message}.\n\nThe task stays queued and no attempt was counted; Orchestra retries with a growing delay. Check that \`.github/workflows/${config.dispatch.workflow.replace(/^\.github\/workflows\//, "")}\` exists on \`${config.dispatch.ref}\`, has a \`workflow_dispatch\` trigger accepting the inputs task, run, attempt, lease_epoch, branch and continuation, and that the App may run Actions in this repository.`,
        gh,
      ).catch((e: unknown) => this.#log.warn({ task: task.id, err: errText(e) }, "dispatch diagnostic not posted"));
      return false;
    }
    await this.#db.task.updateMany({ where: { id: task.id, runId: claim.run.id }, data: { backoffCount: 0, backoffUntil: null, diagnostic: null } });
    if (workflowRunId !== null) await this.#db.run.update({ where: { id: claim.run.id }, data: { workflowRunId: BigInt(workflowRunId) } });
    await this.#syncFresh(task.id, gh);
    this.#log.info({ task: task.id, run: claim.run.id, workflow: config.dispatch.workflow }, "workflow dispatched");
    return true;
  }

  /** workflow_run / workflow_job: progress renews the lease; completion is the exit. */
  async onWorkflowEvent(event: "workflow_run" | "workflow_job", payload: Obj): Promise<void> {
    const repo = String(obj(payload["repository"])["full_name"] ?? "");
    const action = String(payload["action"] ?? "");
    if (event === "workflow_job") {
      const job = obj(payload["workflow_job"]);
      const runId = await this.#dispatchRunFor(repo, BigInt(Number(job["run_id"] ?? 0)), null);
      if (runId && (action === "in_progress" || action === "queued" || action === "waiting")) await this.#renewDispatched(runId);
      return;
    }
    const wr = obj(payload["workflow_run"]);
    if (String(wr["event"] ?? "") !== "workflow_dispatch") return;
    const run = await this.#dispatchRunFor(repo, BigInt(Number(wr["id"] ?? 0)), wr);
    if (!run) return;
    if (action === "requested" || action === "in_progress") {
      await this.#renewDispatched(run);
      return;
    }
    if (action !== "completed") return;
    const r = await this.#db.run.findUnique({ where: { id: run } });
    if (!r || r.state !== "live") return;
    const conclusion = String(wr["conclusion"] ?? "");
    await this.exit(null, r.id, { leaseEpoch: r.leaseEpoch, exitCode: conclusion === "success" ? 0 : 1 }).catch((err: unknown) => {
      if (err instanceof LifecycleError && err.status === 409) return; // the lease already ended another way
      throw err;
    });
  }

  /** Finds the Orchestra run behind an Actions run: by id once linked, else by the run id in its title, else the oldest unlinked dispatch. */
  async #dispatchRunFor(repo: string, workflowRunId: bigint, wr: Obj | null): Promise<string | null> {
    const linked = await this.#db.run.findFirst({ where: { workflowRunId, mode: "dispatch" } });
    if (linked) return linked.id;
    if (!wr) return null;
    const tasks = await this.#db.task.findMany({ where: { repo, state: "claimed", workerId: null }, select: { id: true } });
    if (tasks.length === 0) return null;
    const live = await this.#db.run.findMany({
      where: { taskId: { in: tasks.map((t) => t.id) }, mode: "dispatch", state: "live", workflowRunId: null },
      orderBy: { startedAt: "asc" },
    });
    const title = `${String(wr["display_title"] ?? "")} ${String(wr["name"] ?? "")}`;
    const match = live.find((r) => title.includes(r.id)) ?? live[0];
    if (!match) return null;
    const r = await this.#db.run.updateMany({ where: { id: match.id, workflowRunId: null }, data: { workflowRunId } });
    return r.count === 1 ? match.id : null;
  }

  async #renewDispatched(runId: string): Promise<void> {
    const run = await this.#db.run.findUnique({ where: { id: runId } });
    if (!run || run.state !== "live") return;
    await this.heartbeat(null, run.id, run.leaseEpoch).catch((err: unknown) => {
      if (!(err instanceof LifecycleError)) throw err;
    });
  }

  // ------------------------------------------------------------------- sweep

  /**
   * Periodic and at start-up: expire leases, finish label writes that
   * failed, retry dispatches whose backoff elapsed. Each item in its own
   * try/catch (one failure never stops the sweep) and a bounded number of
   * GitHub writes per sweep.
   */
  async sweep(): Promise<{ expired: number; classified: number; labelsSynced: number; dispatched: number; errors: number; writes: number }> {
    const { result, used } = await withWriteBudget(SWEEP_WRITE_BUDGET, () => this.#sweep());
    return { ...result, writes: used };
  }

  async #sweep(): Promise<{ expired: number; classified: number; labelsSynced: number; dispatched: number; errors: number }> {
    const now = this.#clock.now();
    const out = { expired: 0, classified: 0, labelsSynced: 0, dispatched: 0, errors: 0 };
    const expired = await this.#db.task.findMany({ where: { state: "claimed", leaseExpiresAt: { lt: now } }, take: 25 });
    for (const task of expired) {
      if (budgetExhausted()) break;
      try {
        const ended = await this.#db.task.updateMany({
          where: { id: task.id, runId: task.runId, leaseEpoch: task.leaseEpoch, leaseExpiresAt: task.leaseExpiresAt },
          data: { leaseExpiresAt: null, updatedAt: now },
        });
        if (ended.count !== 1 || !task.runId) continue;
        await this.#db.run.updateMany({ where: { id: task.runId, state: "live" }, data: { state: "expired", endedAt: now, endReason: "lease expired without an exit" } });
        out.expired++;
      } catch (err) {
        out.errors++;
        this.#log.warn({ task: task.id, err: errText(err) }, "sweep: lease expiry failed; next sweep retries");
      }
    }
    // Runs that ended without a PR and still owe a class or a recovery.
    const owed = await this.#db.run.findMany({
      where: { state: { in: ["exited", "expired"] }, recoveredAt: null },
      orderBy: { endedAt: "asc" },
      take: 20,
    });
    for (const run of owed) {
      if (budgetExhausted()) break;
      try {
        const v = await this.settleRun(run.id, run.state === "expired" ? "lease-expired" : "exit");
        if (v) out.classified++;
      } catch (err) {
        out.errors++;
        this.#log.warn({ run: run.id, err: errText(err) }, "sweep: classification failed; next sweep retries");
      }
    }
    const unsynced = await this.#db.task.findMany({ where: { labelSynced: false }, orderBy: { updatedAt: "asc" }, take: 20 });
    for (const task of unsynced) {
      if (budgetExhausted()) break;
      try {
        await this.syncLabel(task);
        out.labelsSynced++;
      } catch (err) {
        if (err instanceof WriteBudgetExhausted) break;
        out.errors++;
        this.#log.warn({ task: task.id, err: errText(err) }, "sweep: label write failed; next sweep retries");
      }
    }
    const queued = await this.#db.task.findMany({
      where: { state: "queued", OR: [{ backoffUntil: null }, { backoffUntil: { lte: now } }] },
      orderBy: [{ priority: "asc" }, { queuedAt: "asc" }],
      take: 25,
    });
    for (const task of queued) {
      if (budgetExhausted()) break;
      try {
        const config = await this.#config(task);
        if (!config?.dispatch) continue;
        if (await this.dispatch(task, config)) out.dispatched++;
      } catch (err) {
        out.errors++;
        this.#log.warn({ task: task.id, err: errText(err) }, "sweep: dispatch failed; next sweep retries");
      }
    }
    return out;
  }

  async #reportBadConfig(on: Pick<Task, "installationId" | "repo" | "issue">, problems: string[], github: GitHub): Promise<void> {
    const digest = createHash("sha256").update(problems.join("\n")).digest("hex").slice(0, 12);
    await this.#comment(
      on,
      `bad-config:${on.repo}:${on.issue}:${digest}`,
      `Orchestra is paused for this repository: \`.github/orchestra.yml\` is invalid.\n\n${problems.map((p) => `- ${p}`).join("\n")}\n\nFix the file on the default branch; the next label change is handled with the corrected configuration.`,
      github,
    );
    this.#log.warn({ repo: on.repo, problems }, "invalid .github/orchestra.yml: repository paused");
  }
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
