/**
 * Webhooks about a repository's fleet issue. Deleted or transferred away:
 * the stored number is forgotten and the issue is refreshed, which opens a
 * new one. Reopened: refreshed, so it is current again. A push that changes
 * `.github/orchestra.yml` refreshes it too, so turning `fleetIssue` on shows
 * the issue without waiting for a task to change. Everything goes through
 * the machine's `fleet-refresh` event (issue 0: the repository), which
 * records the window's one debounced effect. Orchestra's own edits of the
 * issue (`issues.edited`) are not handled at all: they are never task input.
 */
import type { Tasks } from "../apply/tasks.js";
import type { EventContext } from "../events/router.js";
import type { FleetIssues } from "../fleet/issues.js";

export class FleetWebhooks {
  constructor(readonly deps: { tasks: Pick<Tasks, "raise">; fleet: Pick<FleetIssues, "forget" | "isFleetIssue"> }) {}

  /** The repository's fleet issue should catch up (no-op unless `fleetIssue: true`). */
  async refresh(installationId: number, repo: string, why: string): Promise<void> {
    await this.deps.tasks.raise({ subject: { installationId, repo, issue: 0 } }, { kind: "fleet-refresh", why });
  }

  async gone(ctx: EventContext<"issues.deleted" | "issues.transferred">): Promise<void> {
    const p = ctx.payload;
    if (ctx.installationId === null) return;
    const repo = p.repository.full_name;
    if (!(await this.deps.fleet.forget(repo, p.issue.number))) return;
    await this.refresh(
      ctx.installationId,
      repo,
      `#${p.issue.number} was ${ctx.action === "transferred" ? "transferred away" : "deleted"}: ` +
        `a new fleet issue is opened`,
    );
  }

  async reopened(ctx: EventContext<"issues.reopened">): Promise<void> {
    const p = ctx.payload;
    if (ctx.installationId === null || p.issue.pull_request) return;
    if (!(await this.deps.fleet.isFleetIssue(p.repository.full_name, p.issue.number, p.issue.body))) return;
    await this.refresh(ctx.installationId, p.repository.full_name, `#${p.issue.number} was reopened`);
  }
}
