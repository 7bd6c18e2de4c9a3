/**
 * `pull_request_review` webhooks on a task's PR. A trusted reviewer's
 * "changes requested" sends the task back to its agent with a
 * `changes-requested` continuation carrying the review and its inline
 * comments (the resubmission reuses the PR); an approval is recorded on the
 * task. A review from someone without the trusted permission changes nothing.
 */
import type { Tasks } from "../apply/tasks.js";
import type { ConfigResult } from "../config/repo.js";
import { repoRef, type GitHub } from "../github/port.js";
import type { EventContext } from "../events/router.js";
import { judge } from "../trust/trust.js";
import type { PermissionCache } from "../trust/permissions.js";
import { actorOf } from "./issues.js";
import type { Audit } from "../human/audit.js";
import type { Counters } from "../ignored/counters.js";
import type { WebhookQueries } from "./queries.js";

const STATES = { changes_requested: "changes_requested", approved: "approved", commented: "commented" } as const;

export class ReviewHandlers {
  constructor(
    readonly deps: {
      queries: Pick<WebhookQueries, "taskOnPr">;
      tasks: Tasks;
      configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
      permissions: PermissionCache;
      audit: Audit;
      counters: Counters;
    },
  ) {}

  async submitted(ctx: EventContext<"pull_request_review.submitted">): Promise<void> {
    const { review, pull_request: pr, repository } = ctx.payload;
    const repo = repository.full_name;
    const task = await this.deps.queries.taskOnPr(repo, pr.number);
    if (!task) return this.deps.counters.bump("ignored.irrelevant");
    const state = STATES[review.state.toLowerCase() as keyof typeof STATES];
    if (!state) return; // dismissed, pending
    const cfg = await this.deps.configs.get(task.installationId, repo);
    if (!cfg.ok) return;
    const actor = actorOf(review.user);
    const github: Pick<GitHub, "permission" | "reviewComments"> = await ctx.github();
    const verdict = await judge(actor, cfg.config, () => this.deps.permissions.of(github, repo, actor.login));
    if (!verdict.trusted) {
      await this.deps.audit.ignored({
        installationId: ctx.installationId,
        repo,
        actor: actor.login,
        input: `review ${review.id} on #${pr.number}: ${state}`,
        why: verdict.why,
      });
      await this.deps.counters.bump("ignored.untrusted-review");
      return;
    }
    const comments =
      state === "changes_requested" ? await github.reviewComments(repoRef(repo), pr.number, review.id) : [];
    await this.deps.tasks.raise(
      { taskId: task.id },
      {
        kind: "review-submitted",
        pr: { number: pr.number, headSha: pr.head.sha },
        review: state,
        reviewId: review.id,
        author: actor.login,
        body: review.body ?? "",
        comments,
      },
    );
  }
}
