/**
 * A forced push to a task's branch: when it dropped commits that were on the
 * branch, work may be lost (an agent is told to push without force), so the
 * task is escalated with the evidence. A forced push that drops nothing (a
 * branch that only moved forward) changes nothing.
 */
import { repoRef, type GitHub } from "../github/port.js";
import type { Tasks } from "../apply/tasks.js";
import type { ChecksQueries } from "./queries.js";

export class Rewrites {
  constructor(readonly deps: { queries: Pick<ChecksQueries, "onBranch">; tasks: Tasks }) {}

  /** Any push to a task's branch: the task follows its head. */
  async onPush(repo: string, branch: string, after: string): Promise<void> {
    if (/^0+$/.test(after)) return;
    const task = await this.deps.queries.onBranch(repo, branch);
    if (task) await this.deps.tasks.raise({ taskId: task.id }, { kind: "branch-pushed", branch, headSha: after });
  }

  async onForcedPush(
    github: Pick<GitHub, "compare">,
    repo: string,
    branch: string,
    before: string,
    after: string,
    pusher: string,
  ): Promise<boolean> {
    if (/^0+$/.test(before) || /^0+$/.test(after)) return false; // created or deleted
    const task = await this.deps.queries.onBranch(repo, branch);
    if (!task || task.state === "done" || task.state === "cancelled") return false;
    // Commits the old head had that the new one lacks: what the push dropped.
    const cmp = await github.compare(repoRef(repo), after, before);
    if (!cmp || cmp.aheadBy === 0) return false;
    const r = await this.deps.tasks.raise(
      { taskId: task.id },
      { kind: "branch-rewritten", branch, before, after, dropped: cmp.aheadBy, pusher },
    );
    return r.outcome !== "refused";
  }
}
