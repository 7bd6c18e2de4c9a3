/**
 * Drift repair: GitHub is the source of truth for labels, and people edit
 * them by hand, webhooks get lost, the App is down sometimes. Periodically
 * each repository's `agent:*`-labelled issues are read (one GraphQL query per
 * 100 issues, with who added the labels and the sub-issues) and compared with
 * the task table; each difference is raised as one event through the
 * machine, which applies the one documented rule for it:
 *
 * - an open issue with the queue label and no task: queued if the person who
 *   added the label is trusted (from the issue's timeline), else the label
 *   goes with the usual reply;
 * - a closed issue: its task ends (lease released) and no `agent:*` label
 *   stays; a queue label on a closed issue is removed;
 * - other `agent:*` labels with no task behind them are removed (also the
 *   queue label on the fleet issue, which is never a task);
 * - labels that disagree with the task (two at once, one changed or removed
 *   by hand) are restored to the task's truth with one comment;
 * - a failed parent whose sub-issues are all closed is done, with one comment.
 *
 * A listing that fails changes nothing (positive evidence only). Each run is
 * recorded with its counts.
 */
import type { Logger } from "pino";
import type { ReconcileQueries } from "./queries.js";
import { repoRef, type GitHub, type GitHubFor, type LabelledIssue } from "../github/port.js";
import { errorText } from "../github/errors.js";
import type { Tasks } from "../apply/tasks.js";
import type { ConfigResult } from "../config/repo.js";
import { stateLabelsOf } from "../machine/model.js";
import type { Task } from "../store/generated/sqlite/client.js";
import { judge } from "../trust/trust.js";
import type { PermissionCache } from "../trust/permissions.js";
import type { FailureStreaks, RunOutcome } from "./failing.js";
import type { FleetIssues } from "../fleet/issues.js";

export type ReconcileGitHub = Pick<GitHub, "issuesLabelled" | "permission" | "installationRepos">;

export interface ReconcileDeps {
  queries: Pick<
    ReconcileQueries,
    "goneInstallations" | "knownRepos" | "unfinishedRepos" | "report" | "repoTasks" | "latestLabelSeqs" | "effectTasks"
  >;
  tasks: Tasks;
  githubFor: GitHubFor;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  permissions: PermissionCache;
  /** The App's installations (as the App itself); without it, those Orchestra has seen. */
  installations?: () => Promise<Array<{ id: number; suspended: boolean }>>;
  clock: { now(): Date };
  log: Logger;
  /** The service-wide dry run (ORCHESTRA_DRY_RUN); a repository's own is in its config. */
  dryRun?: boolean;
  /** Escalates a repository or installation that fails run after run (once per streak). */
  streaks?: FailureStreaks;
  /** The repositories' fleet issues: refreshed with each run, and never queued as a task. */
  fleet?: Pick<FleetIssues, "isFleetIssue">;
  /** What the last deliveries said of issues' labels (effects/seen.ts): forgotten where they drifted. */
  seen?: { forgetLabels(repo: string, issue: number): Promise<void> };
  /** Runs right after a repository's labelled issues are read (tests put a concurrent write there). */
  afterLabelsRead?: (repo: string) => Promise<void>;
}

/** What one reconcile did, per action. */
export type ReconcileCounts = Record<
  "issues" | "queued" | "untrusted" | "closed" | "cleared" | "restored" | "superseded" | "errors" | "queries",
  number
>;

const FINISHED = new Set(["done", "cancelled"]);

export function emptyCounts(): ReconcileCounts {
  return {
    issues: 0,
    queued: 0,
    untrusted: 0,
    closed: 0,
    cleared: 0,
    restored: 0,
    superseded: 0,
    errors: 0,
    queries: 0,
  };
}
const LABELLED = new Set(["queued", "claimed", "review", "blocked", "failed"]);
const same = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

export class Reconciler {
  constructor(readonly deps: ReconcileDeps) {}

  /** Every repository Orchestra knows in these installations (skipping the held ones). */
  async run(skip: ReadonlySet<number> = new Set()): Promise<ReconcileCounts> {
    const { queries } = this.deps;
    const counts = emptyCounts();
    const outcome: RunOutcome = new Map();
    const gone = new Set((await queries.goneInstallations()).map((i) => i.id));
    const repos = new Map<string, number>();
    for (const r of await queries.knownRepos()) repos.set(r.id, r.installationId);
    for (const t of await queries.unfinishedRepos()) repos.set(t.repo, t.installationId);
    // Repositories no webhook has told Orchestra about yet (a queue label added while it was down).
    const installations = this.deps.installations
      ? await this.deps.installations().catch((err: unknown) => {
          counts.errors++;
          this.deps.log.warn(
            { err: errorText(err) },
            "reconcile: could not list the App's installations; only known repositories are reconciled",
          );
          return [];
        })
      : [];
    for (const inst of installations) {
      if (inst.suspended || skip.has(inst.id) || gone.has(inst.id)) continue;
      try {
        const gh: ReconcileGitHub = await this.deps.githubFor(inst.id);
        for (const repo of await gh.installationRepos()) if (!repos.has(repo)) repos.set(repo, inst.id);
        outcome.set(`installation ${inst.id}`, null);
      } catch (err) {
        counts.errors++;
        outcome.set(`installation ${inst.id}`, errorText(err));
        this.deps.log.warn(
          { installationId: inst.id, err: errorText(err) },
          "reconcile: could not list the installation's repositories",
        );
      }
    }
    for (const [repo, installationId] of repos) {
      if (skip.has(installationId) || gone.has(installationId)) continue;
      try {
        await this.repo(installationId, repo, counts);
        outcome.set(repo, null);
      } catch (err) {
        counts.errors++;
        outcome.set(repo, errorText(err));
        this.deps.log.warn(
          { repo, err: errorText(err) },
          "reconcile: could not read the repository's labelled issues; nothing changed there, the next run tries again",
        );
      }
    }
    await queries.report({ kind: "reconcile", at: this.deps.clock.now(), counts: JSON.stringify(counts) });
    await this.deps.streaks?.record(outcome);
    const acted =
      counts.queued + counts.untrusted + counts.closed + counts.cleared + counts.restored + counts.superseded;
    if (acted > 0 || counts.errors > 0) this.deps.log.info(counts, "reconcile");
    return counts;
  }

  /**
   * One repository: read its labelled issues (all pages, or nothing is decided), then raise one event per difference.
   */
  async repo(installationId: number, repo: string, counts: ReconcileCounts, github?: ReconcileGitHub): Promise<void> {
    const cfg = await this.deps.configs.get(installationId, repo);
    if (!cfg.ok) return;
    const config = cfg.config;
    // The fleet issue catches up on what no task change told it
    // (pauses, gates, lease times); debounced like any change.
    if (config.fleetIssue)
      await this.deps.tasks.raise(
        { subject: { installationId, repo, issue: 0 } },
        { kind: "fleet-refresh", why: "reconcile" },
      );
    const labels = stateLabelsOf(config.labels);
    const gh: ReconcileGitHub = github ?? (await this.deps.githubFor(installationId));
    const readFrom = this.deps.clock.now();
    const issues = await gh.issuesLabelled(repoRef(repo), labels);
    await this.deps.afterLabelsRead?.(repo);
    counts.queries += Math.max(1, Math.ceil(issues.length / 100));
    counts.issues += issues.length;
    const tasks = await this.deps.queries.repoTasks(repo);
    const byIssue = new Map(tasks.map((t) => [t.issue, t]));
    const writing = await this.#labelsInHand(repo, this.deps.dryRun === true || config.dryRun, readFrom);
    const seen = new Set<number>();
    for (const issue of issues) {
      seen.add(issue.number);
      const task = byIssue.get(issue.number) ?? null;
      // A close is news even while a label write is in hand; a finished task's labels are not.
      if (task && writing.has(task.id) && (issue.state === "open" || FINISHED.has(task.state))) continue;
      await this.#issue(installationId, repo, issue, task, labels, config.labels.queued, gh, config, counts);
    }
    // A task that shows a label but whose issue carries none any more: the label was removed by hand.
    for (const t of tasks) {
      if (seen.has(t.issue) || !LABELLED.has(t.state) || writing.has(t.id)) continue;
      const r = await this.#drift({ taskId: t.id }, repo, t.issue, []);
      if (r.outcome === "unchanged" && r.stepsRan) counts.restored++;
    }
  }

  /** Drift: the repair reads GitHub's labels again rather than trust what the last delivery said of them. */
  async #drift(target: Parameters<Tasks["raise"]>[0], repo: string, issue: number, labels: string[]) {
    await this.deps.seen?.forgetLabels(repo, issue);
    return this.deps.tasks.raise(target, { kind: "drift", labels });
  }

  /**
   * Tasks whose latest label write is not settled on GitHub yet, so GitHub is
   * behind the task rather than drifted from it: still in the outbox, parked
   * (an operator replays it; raising it again would only park another), or,
   * in dry run, recorded as the plan (it never reaches GitHub, and planning
   * it again each run would pile up the same plan). One settled since the
   * read began counts too: the read may have caught it halfway (a claim's
   * label added, the queued one not yet off).
   */
  async #labelsInHand(repo: string, dryRun: boolean, readFrom: Date): Promise<Set<string | null>> {
    const { queries } = this.deps;
    const seqs = (await queries.latestLabelSeqs(repo)).filter((n): n is number => n !== null);
    if (seqs.length === 0) return new Set();
    const unsettled = ["pending", "running", "parked", ...(dryRun ? ["dry-run"] : [])];
    const rows = await queries.effectTasks(seqs, unsettled, readFrom);
    return new Set(rows.map((r) => r.taskId));
  }

  async #issue(
    installationId: number,
    repo: string,
    issue: LabelledIssue,
    task: Task | null,
    stateLabels: string[],
    queued: string,
    gh: ReconcileGitHub,
    config: NonNullable<Extract<ConfigResult, { ok: true }>["config"]>,
    counts: ReconcileCounts,
  ): Promise<void> {
    const { tasks } = this.deps;
    const subject = { installationId, repo, issue: issue.number };
    const agent = issue.labels.filter((l) => stateLabels.includes(l));
    if (issue.state === "closed") {
      if (task && !FINISHED.has(task.state)) {
        await tasks.raise(
          { taskId: task.id },
          { kind: "issue-closed", actor: "reconcile", completed: task.prNumber !== null },
        );
        counts.closed++;
      } else if (agent.length > 0) {
        const r = await this.#drift(task ? { taskId: task.id } : { subject }, repo, issue.number, agent);
        if (r.stepsRan) counts.cleared++;
      }
      return;
    }
    if (!task) {
      if (agent.includes(queued) && !(await this.deps.fleet?.isFleetIssue(repo, issue.number, issue.body))) {
        const by = issue.labelledBy.find((l) => l.label.toLowerCase() === queued.toLowerCase());
        const actor = { login: by?.actor ?? "", type: by?.actorType === "Bot" ? "Bot" : "User" };
        const verdict = by
          ? await judge(actor, config, () => this.deps.permissions.of(gh, repo, actor.login))
          : { trusted: false, why: "who added the label is not on the issue's timeline" };
        if (verdict.trusted) {
          await tasks.raise(
            { subject },
            {
              kind: "queue-label",
              actor: actor.login,
              issue: { title: issue.title, body: issue.body, labels: issue.labels },
            },
          );
          counts.queued++;
        } else {
          await tasks.raise(
            { subject },
            {
              kind: "queue-label-untrusted",
              actor: actor.login || "someone",
              why: verdict.why,
              deliveryId: `reconcile:${repo}#${issue.number}:${by?.at ?? "unknown"}`,
            },
          );
          counts.untrusted++;
        }
        return;
      }
      const r = await this.#drift({ subject }, repo, issue.number, agent);
      if (r.stepsRan) counts.cleared++;
      return;
    }
    const open = issue.subIssues.filter((s) => s.state === "open");
    if (
      task.state === "failed" &&
      issue.subIssuesTotal > 0 &&
      issue.subIssuesTotal === issue.subIssues.length &&
      open.length === 0
    ) {
      const r = await tasks.raise(
        { taskId: task.id },
        { kind: "sub-issues-closed", subIssues: issue.subIssues.map((s) => `${s.repo}#${s.number}`) },
      );
      if (r.outcome === "applied") counts.superseded++;
      return;
    }
    const want = task.label === null ? [] : [task.label];
    if (!same(agent, want)) {
      const r = await this.#drift({ taskId: task.id }, repo, issue.number, agent);
      if (r.stepsRan) counts.restored++;
    }
  }
}
