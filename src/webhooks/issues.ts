/**
 * `issues` webhooks: the label queue. A queue label from a trusted person
 * creates or re-queues a task; anyone else's is taken off with a reply (at
 * most one a day per person and issue); a trusted person removing it from a
 * queued task cancels it, anyone else's removal is undone. Changes to the
 * other agent:* labels by someone not trusted are undone too; closing the
 * issue ends the task. Orchestra's own label changes are recognised by their
 * sender and ignored, and the fleet issue (fleet/) never becomes a task.
 * Everything ignored is counted (ignored/counters.ts).
 */
import type { ConfigResult } from "../config/repo.js";
import type { GitHub } from "../github/port.js";
import type { Tasks } from "../apply/tasks.js";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import { judge, type Actor } from "../trust/trust.js";
import type { PermissionCache } from "../trust/permissions.js";
import type { EventContext } from "../events/router.js";
import { openBlockersInPayload, type Blockers } from "../blockers/blockers.js";
import type { HostGitHub } from "../github/features.js";
import { errorText } from "../github/errors.js";
import type { Audit } from "../human/audit.js";
import { stateLabelsOf, type Labels } from "../machine/model.js";
import { raiseCounted, type Counters } from "../ignored/counters.js";
import type { FleetIssues } from "../fleet/issues.js";
import type { WebhookQueries } from "./queries.js";

export interface IssueHandlerDeps {
  queries: Pick<WebhookQueries, "task">;
  tasks: Tasks;
  dispatcher: Dispatcher;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  permissions: PermissionCache;
  blockers: Blockers;
  audit: Audit;
  counters: Counters;
  /** Whether the actor is this App's own bot. */
  isSelf(actor: Actor): Promise<boolean>;
  /** The repositories' fleet issues: a view, never a task. */
  fleet?: Pick<FleetIssues, "isFleetIssue">;
}

/** Label names are case-insensitive on GitHub. */
const sameLabel = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
/** One of the agent:* state labels this repository uses. */
const isStateLabel = (labels: Labels, name: string) => stateLabelsOf(labels).some((l) => sameLabel(l, name));

export const actorOf = (sender: { login?: string; type?: string } | null | undefined): Actor => ({
  login: sender?.login ?? "",
  type: sender?.type ?? "User",
});

export class IssueHandlers {
  constructor(readonly deps: IssueHandlerDeps) {}

  async labeled(ctx: EventContext<"issues.labeled">): Promise<void> {
    const { payload: p } = ctx;
    const { counters } = this.deps;
    const actor = actorOf(p.sender);
    if (ctx.installationId === null) return counters.bump("ignored.unmanaged");
    // never turn a PR (ours or anyone's) into a task
    if (p.issue.pull_request) return counters.bump("ignored.irrelevant");
    if (await this.deps.isSelf(actor)) return counters.bump("ignored.own-echo");
    const subject = { installationId: ctx.installationId, repo: p.repository.full_name, issue: p.issue.number };
    const label = p.label?.name ?? "";
    if (await this.deps.fleet?.isFleetIssue(subject.repo, subject.issue, p.issue.body)) {
      // The fleet issue is never a task: an agent:* label put on it is taken off, as on any issue without a task.
      await this.deps.tasks.raise({ subject }, { kind: "drift", labels: [label] });
      return counters.bump("ignored.irrelevant");
    }
    const cfg = await this.deps.configs.get(subject.installationId, subject.repo);
    if (!cfg.ok) {
      if (label.startsWith("agent:"))
        await this.deps.tasks.raise({ subject }, { kind: "config-invalid", problems: cfg.problems });
      else await counters.bump("ignored.irrelevant");
      return;
    }
    const config = cfg.config;
    if (!isStateLabel(config.labels, label) || p.issue.state === "closed") return counters.bump("ignored.irrelevant");
    const github: Pick<GitHub, "permission"> & HostGitHub = await ctx.github();
    const verdict = await judge(actor, config, () => this.deps.permissions.of(github, subject.repo, actor.login));
    if (!verdict.trusted) {
      const event = sameLabel(label, config.labels.queued)
        ? ({ kind: "queue-label-untrusted", actor: actor.login, why: verdict.why, deliveryId: ctx.deliveryId } as const)
        : ({
            kind: "label-untrusted",
            actor: actor.login,
            why: verdict.why,
            label,
            change: "added",
            deliveryId: ctx.deliveryId,
          } as const);
      await raiseCounted(this.deps.tasks, counters, { subject }, event, "ignored.untrusted-label");
      await this.deps.audit.ignored({
        installationId: subject.installationId,
        repo: subject.repo,
        actor: actor.login,
        input: `label ${label} added on #${subject.issue}`,
        why: verdict.why,
      });
      ctx.log.info(
        { repo: subject.repo, issue: subject.issue, actor: actor.login, label },
        "untrusted label change undone",
      );
      return;
    }
    // A trusted hand edit of another state label is put right by reconciliation (drift), with a comment.
    if (!sameLabel(label, config.labels.queued)) return;
    const issue = {
      title: p.issue.title,
      body: p.issue.body ?? "",
      labels: (p.issue.labels ?? []).map((l) => l.name),
      repoId: p.repository.id,
      ...(await this.#blockers(ctx, github)),
    };
    const r = await this.deps.tasks.raise({ subject }, { kind: "queue-label", actor: actor.login, issue });
    if (config.dispatch && r.outcome === "applied" && r.decision.to === "queued") {
      const task = await this.deps.queries.task(r.taskId);
      if (task) await this.deps.dispatcher.dispatch(task, config);
    }
  }

  /**
   * The issue's open blockers at queue time: none when the payload says so
   * (no call), else read from GitHub. A failed read queues the task with its
   * blockers unknown — unclaimable until the sweep reads them.
   */
  async #blockers(ctx: EventContext<"issues.labeled">, github: HostGitHub): Promise<{ blockedBy?: string[] }> {
    const p = ctx.payload;
    if (openBlockersInPayload(p.issue) === 0) return { blockedBy: [] };
    try {
      // On a host without issue dependencies this is none (the fallback), not a task left unread.
      return { blockedBy: (await this.deps.blockers.read(github, p.repository.full_name, p.issue.number)).blockers };
    } catch (err) {
      ctx.log.warn(
        { repo: p.repository.full_name, issue: p.issue.number, err: errorText(err) },
        "could not read the issue's blockers; the sweep reads them before it can be claimed",
      );
      return {};
    }
  }

  /**
   * Removing the queue label cancels a queued task only when a trusted
   * person does it; anyone else's removal of an agent:* label is undone
   * (the task stays as it was).
   */
  async unlabeled(ctx: EventContext<"issues.unlabeled">): Promise<void> {
    const { payload: p } = ctx;
    const { counters } = this.deps;
    const actor = actorOf(p.sender);
    if (ctx.installationId === null) return counters.bump("ignored.unmanaged");
    if (p.issue.pull_request) return counters.bump("ignored.irrelevant");
    if (await this.deps.isSelf(actor)) return counters.bump("ignored.own-echo");
    const subject = { installationId: ctx.installationId, repo: p.repository.full_name, issue: p.issue.number };
    const label = p.label?.name ?? "";
    const cfg = await this.deps.configs.get(subject.installationId, subject.repo);
    if (!cfg.ok || !isStateLabel(cfg.config.labels, label)) return counters.bump("ignored.irrelevant");
    const config = cfg.config;
    const github: Pick<GitHub, "permission"> = await ctx.github();
    const verdict = await judge(actor, config, () => this.deps.permissions.of(github, subject.repo, actor.login));
    if (!verdict.trusted) {
      await raiseCounted(
        this.deps.tasks,
        counters,
        { subject },
        {
          kind: "label-untrusted",
          actor: actor.login,
          why: verdict.why,
          label,
          change: "removed",
          deliveryId: ctx.deliveryId,
        },
        "ignored.untrusted-label",
      );
      await this.deps.audit.ignored({
        installationId: subject.installationId,
        repo: subject.repo,
        actor: actor.login,
        input: `label ${label} removed from #${subject.issue}`,
        why: verdict.why,
      });
      ctx.log.info(
        { repo: subject.repo, issue: subject.issue, actor: actor.login, label },
        "untrusted label change undone",
      );
      return;
    }
    if (sameLabel(label, config.labels.queued))
      await this.deps.tasks.raise({ subject }, { kind: "queue-label-removed", actor: actor.login });
  }

  async closed(ctx: EventContext<"issues.closed">): Promise<void> {
    const { payload: p } = ctx;
    const subject = { installationId: ctx.installationId!, repo: p.repository.full_name, issue: p.issue.number };
    await this.deps.tasks.raise(
      { subject },
      {
        kind: "issue-closed",
        actor: p.sender?.login ?? "someone",
        completed: p.issue.state_reason === "completed",
        labels: (p.issue.labels ?? []).flatMap((l) => (typeof l === "string" ? [l] : l.name ? [l.name] : [])),
        deliveryId: ctx.deliveryId,
      },
    );
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
