/**
 * `pull_request` webhooks: a PR opened from a task's branch (in the task's
 * own repository, never a fork) moves the task to review; merged, it settles
 * the task with a completion receipt; closed unmerged, it blocks it.
 */
import type { Tasks } from "../apply/tasks.js";
import type { EventContext } from "../events/router.js";
import type { WebhookQueries } from "./queries.js";

export class PullHandlers {
  constructor(
    readonly deps: { queries: Pick<WebhookQueries, "taskOnPr" | "taskOnBranch">; tasks: Tasks; clock: { now(): Date } },
  ) {}

  /** The task a PR belongs to: by its number once linked, else by its branch in the task's repository. */
  async #taskOf(
    repo: string,
    pr: { number: number; head: { ref: string; repo?: { full_name: string } | null } },
    byNumber: boolean,
  ) {
    const { queries } = this.deps;
    const linked = byNumber ? await queries.taskOnPr(repo, pr.number) : null;
    if (linked) return linked;
    if (pr.head.repo?.full_name !== repo) return null; // forks are not agent branches
    return queries.taskOnBranch(repo, pr.head.ref);
  }

  /** Opened, reopened, or a draft marked ready for review (then it is no longer a draft). */
  async opened(
    ctx: EventContext<"pull_request.opened" | "pull_request.reopened" | "pull_request.ready_for_review">,
  ): Promise<void> {
    const { pull_request: pr, repository } = ctx.payload;
    const task = await this.#taskOf(repository.full_name, pr, false);
    if (!task) return; // a PR Orchestra did not expect: ignored
    await this.deps.tasks.raise(
      { taskId: task.id },
      {
        kind: "pr-opened",
        pr: { number: pr.number, headSha: pr.head.sha },
        branch: pr.head.ref,
        ...(pr.draft === true ? { draft: true } : {}),
      },
    );
  }

  /** A push to the PR's branch: the task follows its new head. */
  async synchronized(ctx: EventContext<"pull_request.synchronize">): Promise<void> {
    const { pull_request: pr, repository } = ctx.payload;
    const task = await this.#taskOf(repository.full_name, pr, true);
    if (!task || task.prNumber !== pr.number) return;
    await this.deps.tasks.raise(
      { taskId: task.id },
      { kind: "pr-synchronized", pr: { number: pr.number, headSha: pr.head.sha } },
    );
  }

  async closed(ctx: EventContext<"pull_request.closed">): Promise<void> {
    const { pull_request: pr, repository } = ctx.payload;
    const task = await this.#taskOf(repository.full_name, pr, true);
    if (!task) return;
    if (pr.merged) {
      const merge = {
        prNumber: pr.number,
        mergeSha: pr.merge_commit_sha ?? "",
        headSha: pr.head.sha,
        mergedAt: pr.merged_at ? new Date(pr.merged_at) : this.deps.clock.now(),
        ...(pr.base.repo.delete_branch_on_merge === true ? { deletesBranch: true as const } : {}),
      };
      await this.deps.tasks.raise({ taskId: task.id }, { kind: "pr-merged", merge });
      return;
    }
    await this.deps.tasks.raise(
      { taskId: task.id },
      { kind: "pr-closed", pr: { number: pr.number, headSha: pr.head.sha } },
    );
  }
}
