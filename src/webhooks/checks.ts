/**
 * The webhooks after submission, mapped to their handlers: failing check
 * runs, check suites and workflow runs on a PR head; pushes to a base
 * branch. (A dispatched workflow's own completion is its run's exit, handled
 * by dispatch.)
 */
import type { EventContext } from "../events/router.js";
import type { CheckFailures } from "../checks/failures.js";
import type { BaseMoves } from "../checks/base.js";
import type { Rewrites } from "../checks/rewrites.js";

const PASSING = new Set(["success", "neutral", "skipped"]);
const failed = (conclusion: string | null | undefined) => typeof conclusion === "string" && !PASSING.has(conclusion);
type MatchedPull = { number: number; head: { repo: { id: number } | null }; base: { repo: { id: number } | null } };
/**
 * The pull requests GitHub matched to the check's suite, this repository's only: a suite of a fork's branch
 * lists none (whatever its sha), and then it is no task's check.
 */
const numbers = (prs: ReadonlyArray<MatchedPull | null> | null | undefined) =>
  (prs ?? []).flatMap((p) => (p?.head.repo && p.head.repo.id === p.base.repo?.id ? [p.number] : []));

export class SubmissionHandlers {
  constructor(
    readonly deps: {
      failures: CheckFailures;
      base: BaseMoves;
      rewrites: Rewrites;
      branchPrefixOf(installationId: number, repo: string): Promise<string | null>;
    },
  ) {}

  async checkRun(ctx: EventContext<"check_run.completed">): Promise<void> {
    const { check_run: c, repository } = ctx.payload;
    if (!failed(c.conclusion) || !ctx.installationId) return;
    await this.deps.failures.onFailure(
      await ctx.github(),
      ctx.installationId,
      repository.full_name,
      c.head_sha,
      numbers(c.pull_requests),
      { checkRunId: c.id },
    );
  }

  async checkSuite(ctx: EventContext<"check_suite.completed">): Promise<void> {
    const { check_suite: s, repository } = ctx.payload;
    if (!failed(s.conclusion) || !ctx.installationId) return;
    await this.deps.failures.onFailure(
      await ctx.github(),
      ctx.installationId,
      repository.full_name,
      s.head_sha,
      numbers(s.pull_requests),
      { checkSuiteId: s.id },
    );
  }

  async workflowRun(ctx: EventContext<"workflow_run">): Promise<void> {
    const { workflow_run: w, repository, action } = ctx.payload;
    if (action !== "completed" || w.event === "workflow_dispatch" || !failed(w.conclusion) || !ctx.installationId)
      return;
    await this.deps.failures.onFailure(
      await ctx.github(),
      ctx.installationId,
      repository.full_name,
      w.head_sha,
      // A run of a fork's branch: GitHub lists no pull requests for it, and says where its head is.
      w.head_repository?.full_name === repository.full_name ? numbers(w.pull_requests) : [],
      { checkSuiteId: w.check_suite_id },
    );
  }

  async push(ctx: EventContext<"push">): Promise<void> {
    const { ref, repository, deleted } = ctx.payload;
    if (deleted || !ref.startsWith("refs/heads/") || !ctx.installationId) return;
    const branch = ref.slice("refs/heads/".length);
    // A push to an agent branch is a PR head moving (pull_request.synchronize), not a base moving.
    const prefix = await this.deps.branchPrefixOf(ctx.installationId, repository.full_name);
    if (prefix && branch.startsWith(prefix)) {
      if (ctx.payload.forced)
        await this.deps.rewrites.onForcedPush(
          await ctx.github(),
          repository.full_name,
          branch,
          ctx.payload.before,
          ctx.payload.after,
          ctx.payload.sender?.login ?? "someone",
        );
      await this.deps.rewrites.onPush(repository.full_name, branch, ctx.payload.after);
      return;
    }
    await this.deps.base.onPush(await ctx.github(), ctx.installationId, repository.full_name, branch);
  }
}
