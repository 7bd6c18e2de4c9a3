/** Which webhook goes to which handler. */
import type { EventRouter } from "../events/router.js";
import { CONFIG_PATH } from "../config/loader.js";
import type { Dispatcher } from "../dispatch/dispatcher.js";
import type { IssueHandlers } from "./issues.js";
import type { PullHandlers } from "./pulls.js";
import type { ReviewHandlers } from "./reviews.js";
import type { SubmissionHandlers } from "./checks.js";
import type { CommentHandlers } from "./comments.js";
import type { Questions } from "../human/conditions.js";
import type { InstallationHandlers } from "./installations.js";
import type { FleetWebhooks } from "./fleet.js";

export function registerWebhooks(
  events: EventRouter,
  h: {
    issues: IssueHandlers;
    pulls: PullHandlers;
    reviews: ReviewHandlers;
    comments: CommentHandlers;
    submission: SubmissionHandlers;
    questions: Pick<Questions, "onClosed">;
    installations: InstallationHandlers;
    /** Reads one repository's labelled issues again (a sub-issue changed). */
    reconcileRepo(installationId: number, repo: string): Promise<void>;
    dispatcher: Dispatcher;
    invalidateConfig(repo: string): void;
    fleet: FleetWebhooks;
  },
): void {
  // Each event is registered once; where several rooms take it, one handler calls them in turn.
  events.on("issues.labeled", (ctx) => h.issues.labeled(ctx));
  events.on("issues.unlabeled", (ctx) => h.issues.unlabeled(ctx));
  events.on("issues.closed", async (ctx) => {
    await h.issues.closed(ctx);
    // Questions waiting for this issue to close.
    await h.questions.onClosed(ctx.payload.repository.full_name, ctx.payload.issue.number, false);
  });
  events.on("pull_request.closed", async (ctx) => {
    // Questions waiting for this pull request to merge.
    if (ctx.payload.pull_request.merged)
      await h.questions.onClosed(ctx.payload.repository.full_name, ctx.payload.pull_request.number, true);
    await h.pulls.closed(ctx);
  });
  events.on("issue_comment.created", (ctx) => h.comments.created(ctx));
  events.on("issue_comment.edited", (ctx) => h.comments.edited(ctx));
  events.on("installation", (ctx) => h.installations.installation(ctx));
  events.on("installation_repositories", (ctx) => h.installations.repositories(ctx));
  events.onEach(["repository.renamed", "repository.transferred"], (ctx) => h.installations.renamed(ctx));
  // A sub-issue added, removed or closed: its parent may be superseded now.
  events.on("sub_issues", (ctx) =>
    ctx.installationId && ctx.payload.repository
      ? h.reconcileRepo(ctx.installationId, ctx.payload.repository.full_name)
      : Promise.resolve(),
  );
  events.on("issue_dependencies", (ctx) => h.issues.dependencyChanged(ctx));
  events.onEach(["pull_request.opened", "pull_request.reopened", "pull_request.ready_for_review"], (ctx) =>
    h.pulls.opened(ctx),
  );
  events.on("pull_request.synchronize", (ctx) => h.pulls.synchronized(ctx));
  events.on("pull_request_review.submitted", (ctx) => h.reviews.submitted(ctx));
  events.on("check_run.completed", (ctx) => h.submission.checkRun(ctx));
  events.on("check_suite.completed", (ctx) => h.submission.checkSuite(ctx));
  events.on("workflow_run", async (ctx) => {
    await h.submission.workflowRun(ctx);
    await h.dispatcher.onWorkflowRun(ctx.payload);
  });
  events.on("workflow_job", (ctx) => h.dispatcher.onWorkflowJob(ctx.payload));
  events.on("push", async (ctx) => {
    // A push that touches the config makes the next read fetch it again (and shows a fleet issue just turned on).
    const touched = ctx.payload.commits.some((c) =>
      [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])].includes(CONFIG_PATH),
    );
    if (touched) {
      h.invalidateConfig(ctx.payload.repository.full_name);
      if (ctx.installationId !== null)
        await h.fleet.refresh(ctx.installationId, ctx.payload.repository.full_name, `${CONFIG_PATH} changed`);
    }
    await h.submission.push(ctx);
  });
  // The fleet issue: deleted or transferred away (a new one is opened), reopened (kept current again).
  events.onEach(["issues.deleted", "issues.transferred"], (ctx) => h.fleet.gone(ctx));
  events.on("issues.reopened", (ctx) => h.fleet.reopened(ctx));
}
