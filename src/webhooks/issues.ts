/**
 * `issues` webhooks: the label queue. A queue label from a trusted person
 * creates or re-queues a task; anyone else's is taken off with a reply;
 * removing it from a queued task cancels it; closing the issue ends the task.
 * Orchestra's own label changes are recognised by their sender and ignored.
 */
import type { ConfigResult } from "../config/repo.js";
import type { GitHub } from "../github/port.js";
import type { Tasks } from "../apply/tasks.js";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { Db } from "../store/db.js";
import { judge, type Actor } from "../trust/trust.js";
import type { PermissionCache } from "../trust/permissions.js";
import type { EventContext } from "../events/router.js";
import { openBlockersInPayload, readOpenBlockers, type Blockers } from "../blockers/blockers.js";
import { errorText } from "../github/errors.js";
import type { Audit } from "../human/audit.js";


export interface IssueHandlerDeps {
  db: Db;
  tasks: Tasks;
  dispatcher: Dispatcher;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  permissions: PermissionCache;
  blockers: Blockers;
  audit: Audit;
  /** Whether the actor is this App's own bot. */
  isSelf(actor: Actor): Promise<boolean>;
}

export const actorOf = (sender: { login?: string; type?: string } | null | undefined): Actor => ({ login: sender?.login ?? "", type: sender?.type ?? "User" });

export class IssueHandlers {
  constructor(readonly deps: IssueHandlerDeps) {}

  async labeled(ctx: EventContext<"issues.labeled">): Promise<void> {
    const { payload: p } = ctx;
    const actor = actorOf(p.sender);
    if (p.issue.pull_request) return; // never turn a PR (ours or anyone's) into a task
    if (await this.deps.isSelf(actor)) return;
    const subject = { installationId: ctx.installationId!, repo: p.repository.full_name, issue: p.issue.number };
    const label = p.label?.name ?? "";
    const cfg = await this.deps.configs.get(subject.installationId, subject.repo);
    if (!cfg.ok) {
      if (label.startsWith("agent:")) await this.deps.tasks.raise({ subject }, { kind: "config-invalid", problems: cfg.problems });
      return;
    }
    const config = cfg.config;
    if (label !== config.labels.queued || p.issue.state === "closed") return;
    const github: Pick<GitHub, "permission" | "blockedBy"> = await ctx.github();
    const verdict = await judge(actor, config, () => this.deps.permissions.of(github, subject.repo, actor.login));
    if (!verdict.trusted) {
      await this.deps.tasks.raise({ subject }, { kind: "queue-label-untrusted", actor: actor.login, why: verdict.why, deliveryId: ctx.deliveryId });
      await this.deps.audit.ignored({ installationId: subject.installationId, repo: subject.repo, actor: actor.login, input: `label ${label} on #${subject.issue}`, why: verdict.why });
      ctx.log.info({ repo: subject.repo, issue: subject.issue, actor: actor.login }, "untrusted queue label reverted");
      return;
    }
    const issue = { title: p.issue.title, body: p.issue.body ?? "", labels: (p.issue.labels ?? []).map((l) => l.name), repoId: p.repository.id, ...(await this.#blockers(ctx, github)) };
    const r = await this.deps.tasks.raise({ subject }, { kind: "queue-label", actor: actor.login, issue });
    if (config.dispatch && r.outcome === "applied" && r.decision.to === "queued") {
      const task = await this.deps.db.task.findUnique({ where: { id: r.taskId } });
      if (task) await this.deps.dispatcher.dispatch(task, config);
    }
  }

  /**
   * The issue's open blockers at queue time: none when the payload says so
   * (no call), else read from GitHub. A failed read queues the task with its
   * blockers unknown — unclaimable until the sweep reads them.
   */
  async #blockers(ctx: EventContext<"issues.labeled">, github: Pick<GitHub, "blockedBy">): Promise<{ blockedBy?: string[] }> {
    const p = ctx.payload;
    if (openBlockersInPayload(p.issue as { issue_dependencies_summary?: { blocked_by?: number } }) === 0) return { blockedBy: [] };
    try {
      return { blockedBy: await readOpenBlockers(github, p.repository.full_name, p.issue.number) };
    } catch (err) {
      ctx.log.warn({ repo: p.repository.full_name, issue: p.issue.number, err: errorText(err) }, "could not read the issue's blockers; the sweep reads them before it can be claimed");
      return {};
    }
  }

  async unlabeled(ctx: EventContext<"issues.unlabeled">): Promise<void> {
    const { payload: p } = ctx;
    const actor = actorOf(p.sender);
    if (await this.deps.isSelf(actor)) return;
    const subject = { installationId: ctx.installationId!, repo: p.repository.full_name, issue: p.issue.number };
    const cfg = await this.deps.configs.get(subject.installationId, subject.repo);
    if (!cfg.ok || p.label?.name !== cfg.config.labels.queued) return;
    await this.deps.tasks.raise({ subject }, { kind: "queue-label-removed", actor: actor.login });
  }

  async closed(ctx: EventContext<"issues.closed">): Promise<void> {
    const { payload: p } = ctx;
    const subject = { installationId: ctx.installationId!, repo: p.repository.full_name, issue: p.issue.number };
    await this.deps.tasks.raise({ subject }, { kind: "issue-closed", actor: p.sender?.login ?? "someone", completed: p.issue.state_reason === "completed" });
    // Tasks this issue was blocking may be claimable now.
    await this.deps.blockers.onIssueStateChanged(subject.repo, subject.issue, await ctx.github());
  }

  async dependencyChanged(ctx: EventContext<"issue_dependencies">): Promise<void> {
    const p = ctx.payload as { blocked_issue?: { number?: number }; repository?: { full_name?: string } };
    const issue = p.blocked_issue?.number;
    const repo = p.repository?.full_name;
    if (typeof issue !== "number" || typeof repo !== "string") return;
    await this.deps.blockers.onDependencyChanged(repo, issue, await ctx.github());
  }
}
