/**
 * How each kind of effect is performed. Every performer is safe to run again:
 * labels are brought to a wanted state (write only what differs from what
 * GitHub last said, effects/perform-labels.ts), a comment or a dispatch whose answer was lost is looked for
 * before it is sent again, and whatever destroys or publishes re-checks its
 * positive evidence on GitHub right before acting. An effect that a later
 * state made pointless is dropped, not performed.
 */
import { allGreen } from "../outcomes/classify.js";
import { refusalScope } from "../outcomes/dispatch-refusal.js";
import { GitHubError, repoRef, type GitHub, type RepoRef } from "../github/port.js";
import { commentMarker, withMarker } from "../texts/comments.js";
import type { EffectKind } from "../machine/effects.js";
import type { OutboxEffect } from "./outbox.js";
import { done, dropped, type Performed, type Performer } from "./performed.js";
import { labelPerformer, removeLabelPerformer } from "./perform-labels.js";
import { checkRunPerformer } from "./perform-check-run.js";

export type { PerformContext, Performed, Performer } from "./performed.js";

/** Where the operator finds the whole text of an effect that GitHub's limits cut: its payload in the operator API. */
export function fullTextAt(effect: Pick<OutboxEffect, "id" | "taskId">): string {
  return effect.taskId
    ? `in effect ${effect.id} of task ${effect.taskId} in Orchestra's operator API ` +
        `(GET /api/v1/tasks/${effect.taskId}, or orchestra effects --task ${effect.taskId} --json)`
    : `in effect ${effect.id} in Orchestra's operator API (GET /api/v1/effects, or orchestra effects --json)`;
}

/** A lost answer is looked for from a minute before the effect was recorded. */
const lookBack = (e: OutboxEffect) => new Date(e.createdAt.getTime() - 60_000);

/** A rerun is for a commit: skipped once that commit is no longer the head of its open PR. */
async function ifStillHead(
  github: GitHub,
  repo: string,
  p: { pr: number; headSha: string },
  rerun: (r: RepoRef) => Promise<void>,
): Promise<Performed> {
  const r = repoRef(repo);
  const pr = await github.getPull(r, p.pr);
  if (!pr || pr.state !== "open" || pr.headSha !== p.headSha)
    return dropped(`${p.headSha.slice(0, 12)} is no longer the head of pull request #${p.pr}`);
  await rerun(r);
  return done();
}

export const PERFORMERS: { readonly [K in EffectKind]: Performer<K> } = {
  label: labelPerformer,
  "remove-label": removeLabelPerformer,
  comment: {
    async perform({ effect, github }, p) {
      const r = repoRef(effect.repo);
      if (effect.maybeSent) {
        const marker = commentMarker(effect.key);
        const found = (await github.listComments(r, p.issue, { since: lookBack(effect) })).find((c) =>
          c.body.includes(marker),
        );
        if (found)
          return done(
            { commentId: found.id, url: found.url },
            "the comment was posted by an attempt whose answer was lost",
          );
      }
      const c = await github.createComment(r, p.issue, withMarker(p.body, effect.key, fullTextAt(effect)));
      return done({ commentId: c.id, url: c.url });
    },
  },
  reaction: {
    async perform({ effect, github }, p) {
      await github.addReaction(repoRef(effect.repo), p.commentId, p.content);
      return done();
    },
  },
  "delete-branch": {
    async perform({ effect, task, github }, p) {
      if (task && task.attempt > p.attempt) return dropped("a newer run has started on the branch");
      const r = repoRef(effect.repo);
      const branch = await github.getBranch(r, p.branch);
      if (!branch) return done({ deleted: false }, "the branch was already gone");
      // Positive evidence, right before deleting: nothing ahead, no PR.
      const base = await github.defaultBranch(r);
      const cmp = await github.compare(r, base, p.branch);
      const pr = (await github.pullsForBranch(r, p.branch, "all")).find((x) => x.state === "open" || x.merged);
      if (!cmp || cmp.aheadBy > 0 || pr) {
        const why = !cmp
          ? `compare ${base}...${p.branch} found no base`
          : pr
            ? `pull request #${pr.number} uses it`
            : `it has ${cmp.aheadBy} commit(s) ahead of ${base}`;
        return dropped(
          `branch kept: ${why}`,
          effect.runId ? { kind: "branch-kept", runId: effect.runId, why } : undefined,
        );
      }
      await github.deleteBranch(r, p.branch);
      return done({ deleted: true, sha: branch.sha });
    },
  },
  "delete-merged-branch": {
    async perform({ effect, github }, p) {
      const r = repoRef(effect.repo);
      const branch = await github.mergedBranch(r, p.branch);
      if (!branch) return done({ deleted: false }, "the branch was already gone");
      if (branch.deletesMergedBranches)
        return done({ deleted: false }, "left to GitHub: the repository deletes merged branches itself");
      // Positive evidence, right before deleting: still at the merged head, and no other pull request from it.
      if (branch.sha !== p.headSha)
        return dropped(
          `branch kept: it moved to ${branch.sha.slice(0, 12)} after pull request #${p.pr} ` +
            `merged at ${p.headSha.slice(0, 12)}, so it holds commits no pull request has`,
        );
      if (branch.openPull !== null) return dropped(`branch kept: pull request #${branch.openPull} uses it`);
      await github.deleteBranch(r, p.branch);
      return done({ deleted: true, sha: branch.sha });
    },
  },
  "create-pull": {
    async perform({ effect, task, github }, p) {
      const runId = effect.runId ?? "";
      if (!task || task.state !== "claimed" || task.runId !== runId)
        return dropped("the task moved on before publishing");
      const r = repoRef(effect.repo);
      const open = (await github.pullsForBranch(r, p.branch, "open"))[0];
      if (open)
        return done({ pr: open.number }, "a pull request from the branch is already open", {
          kind: "pr-published",
          runId,
          pr: { number: open.number, headSha: open.headSha },
        });
      const branch = await github.getBranch(r, p.branch);
      if (!branch)
        return dropped("the branch disappeared before publishing", {
          kind: "publish-refused",
          runId,
          why: "the branch disappeared",
        });
      // Re-verified right before opening: checks that turned keep the work, never publish it.
      const green = allGreen(await github.checkRunsForRef(r, branch.sha), branch.sha);
      if (!green.green)
        return dropped(`not published: ${green.why}`, { kind: "publish-refused", runId, why: green.why });
      const pr = await github.createPull(r, {
        title: p.title,
        head: p.branch,
        base: await github.defaultBranch(r),
        body: p.body,
      });
      return done({ pr: pr.number }, undefined, {
        kind: "pr-published",
        runId,
        pr: { number: pr.number, headSha: branch.sha },
      });
    },
    // Parked (GitHub kept refusing it, or was down for the whole retry window): the task would stay claimed,
    // holding a concurrent slot, with nothing left to finish its recovery. It is blocked instead.
    onGiveUp: ({ effect }, _p, why) =>
      effect.runId ? { kind: "recovery-stuck", runId: effect.runId, stage: "publish", why } : null,
  },
  "rerun-failed-jobs": {
    perform: ({ effect, github }, p) =>
      ifStillHead(github, effect.repo, p, (r) => github.rerunFailedJobs(r, p.workflowRunId)),
  },
  "rerequest-check-suite": {
    perform: ({ effect, github }, p) =>
      ifStillHead(github, effect.repo, p, (r) => github.rerequestCheckSuite(r, p.checkSuiteId)),
  },
  "update-branch": {
    async perform({ effect, github }, p) {
      try {
        await github.updatePullBranch(repoRef(effect.repo), p.pr, p.expectedHeadSha);
        return done();
      } catch (err) {
        // 422: the head moved, or there is nothing to merge: a later base-moved event decides again.
        if (err instanceof GitHubError && err.status === 422) return dropped(`not updated: ${err.message}`);
        throw err;
      }
    },
  },
  dispatch: {
    async perform({ effect, task, run, github }, p) {
      const runId = effect.runId ?? "";
      if (!task || task.state !== "claimed" || task.runId !== runId || !run || run.state !== "live")
        return dropped("the run is no longer live");
      const r = repoRef(effect.repo);
      if (effect.maybeSent) {
        // A dispatch names its run in the inputs; a workflow with `run-name` shows it in the title.
        const found = (await github.dispatchedRuns(r, p.workflow, lookBack(effect))).find((w) =>
          w.displayTitle.includes(runId),
        );
        if (found)
          return done({ workflowRunId: found.id }, "the dispatch was made by an attempt whose answer was lost", {
            kind: "dispatched",
            runId,
            workflowRunId: found.id,
          });
      }
      const { workflowRunId } = await github.dispatchWorkflow(r, p.workflow, p.ref, p.inputs);
      return done({ workflowRunId }, undefined, { kind: "dispatched", runId, workflowRunId });
    },
    // GitHub's refusal (no workflow_dispatch trigger, unknown workflow) will not change by asking again: the
    // repository's breaker holds every task there when the refusal is the repository's, else the task backs off.
    deterministicAttempts: 1,
    onGiveUp: ({ effect }, p, why, err) =>
      effect.runId
        ? {
            kind: "dispatch-refused",
            runId: effect.runId,
            why: `GitHub refused the workflow dispatch of ${p.workflow}@${p.ref}: ${why}`,
            scope: err instanceof GitHubError ? refusalScope(err.status, err.message) : "task",
          }
        : null,
  },
  "check-run": checkRunPerformer,
  "fleet-issue": {
    perform: ({ effect, github, fleet }) =>
      fleet ? fleet.perform(effect, github) : Promise.resolve(dropped("no fleet issue here: this process keeps none")),
  },
  "revoke-credentials": {
    perform: ({ effect, github, credentials }) =>
      credentials
        ? credentials.revoke(effect, github)
        : Promise.resolve(dropped("no credentials here: this process brokers none")),
  },
};
