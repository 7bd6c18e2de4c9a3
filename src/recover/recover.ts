/**
 * Recoveries: the one mechanical action each failure class names, performed
 * after the class is recorded. Each is idempotent (a sweep may run it again
 * after a failure) and destructive only on positive evidence re-checked right
 * before acting. They move tasks only through `TaskMoves`.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../store/db.js";
import type { RepoConfig } from "../config/repo.js";
import { repoRef, type GitHub } from "../github/port.js";
import { allGreen } from "../outcomes/classify.js";
import { afterFailedRun, QUESTION_TTL_MS, type Continuation } from "../tasks/model.js";
import type { Run, Task } from "../store/generated/sqlite/client.js";

/** The task transitions a recovery may make (implemented by the lifecycle). */
export interface TaskMoves {
  db: Db;
  clock: { now(): Date };
  finish(task: Task, run: Run, config: RepoConfig, to: "queued" | "failed" | "blocked", continuation: Continuation | null, gh: GitHub): Promise<void>;
  toReview(task: Task, prNumber: number, headSha: string, gh: GitHub): Promise<boolean>;
  settle(task: Task, merge: { prNumber: number; mergeSha: string; headSha: string; mergedAt: Date }, gh: GitHub): Promise<void>;
  comment(task: Task, key: string, body: string, gh: GitHub): Promise<void>;
  runError(runId: string, klass: string, message: string): Promise<void>;
}

/** The one recovery the recorded class names. Each is idempotent. */
export async function recover(m: TaskMoves, task: Task, run: Run, config: RepoConfig, gh: GitHub): Promise<void> {
  const r = repoRef(task.repo);
  const evidence = run.evidence ? (JSON.parse(run.evidence) as Record<string, unknown>) : {};
  switch (run.recovery) {
    case "settle": {
      const prNumber = (evidence["pr"] as { number: number } | null)?.number;
      const pr = prNumber ? await gh.getPull(r, prNumber) : null;
      if (!pr?.merged) throw new Error(`pull request #${prNumber} is not merged on GitHub; reclassifying`);
      await m.db.run.update({ where: { id: run.id }, data: { prNumber: pr.number } });
      await m.settle(task, { prNumber: pr.number, mergeSha: pr.mergeCommitSha ?? "", headSha: pr.headSha, mergedAt: m.clock.now() }, gh);
      return;
    }
    case "delete-branch-requeue": {
      // Positive evidence, checked again right before deleting: the branch
      // has no commits ahead and no PR. Anything else reclassifies.
      const branch = await gh.getBranch(r, run.branch);
      if (branch) {
        const cmp = await gh.compare(r, await gh.defaultBranch(r), run.branch);
        const pulls = await gh.pullsForBranch(r, run.branch, "all");
        if (!cmp || cmp.aheadBy > 0 || pulls.some((p) => p.state === "open" || p.merged)) {
          await reclassify(m, run, "the branch changed after classification");
          throw new Error("branch is no longer empty; reclassifying");
        }
        await gh.deleteBranch(r, run.branch);
      }
      await m.finish(task, run, config, afterFailedRun(task.attempt, config.limits.maxAttempts), null, gh);
      return;
    }
    case "publish": {
      const branch = await gh.getBranch(r, run.branch);
      if (!branch) {
        await reclassify(m, run, "the branch disappeared before publishing");
        throw new Error("branch gone; reclassifying");
      }
      const existing = (await gh.pullsForBranch(r, run.branch, "open"))[0];
      let prNumber = existing?.number;
      if (!existing) {
        const checks = (await gh.checkRunsForRef(r, branch.sha)).map((c) => ({ name: c.name, headSha: c.headSha, status: c.status, conclusion: c.conclusion }));
        const green = allGreen(checks, branch.sha);
        if (!green.green) {
          // Re-verified right before opening: the checks turned. Keep the work, resume it.
          await m.db.run.update({
            where: { id: run.id },
            data: { class: "debris-half-done", recovery: "hold-resume", evidence: JSON.stringify({ ...evidence, why: `publishing stopped: ${green.why}`, republished: false }) },
          });
          await holdResume(m, task, run, config, `publishing stopped: ${green.why}`, gh);
          return;
        }
        const pr = await gh.createPull(r, {
          title: task.title,
          head: run.branch,
          base: await gh.defaultBranch(r),
          body: `Closes #${task.issue}\n\nOpened by Orchestra from run ${run.id} (attempt ${run.attempt}): the agent committed this work and exited without opening a pull request. Its head checks were green at ${branch.sha.slice(0, 12)} when it was published.`,
        });
        prNumber = pr.number;
      }
      await m.db.run.update({ where: { id: run.id }, data: { prNumber: prNumber!, headSha: branch.sha } });
      await m.toReview(task, prNumber!, branch.sha, gh);
      return;
    }
    case "hold-resume":
      await holdResume(m, task, run, config, String(evidence["why"] ?? "see the run's evidence"), gh);
      return;
    case "block-question": {
      const question = String(evidence["question"] ?? "");
      await m.db.decision.upsert({
        where: { source: `question:${run.id}` },
        create: { id: randomUUID(), taskId: task.id, runId: run.id, kind: "question", body: question, author: `run:${run.id}`, source: `question:${run.id}`, createdAt: m.clock.now(), expiresAt: new Date(m.clock.now().getTime() + QUESTION_TTL_MS) },
        update: {},
      });
      await m.comment(task, `escalation:${run.id}:question`, `The agent working on this issue (attempt ${run.attempt}) has a question and stopped:\n\n> ${question.split("\n").join("\n> ")}\n\nAnswer in a comment, then remove \`${config.labels.blocked}\` and add \`${config.labels.queued}\` to let an agent continue.`, gh);
      await m.finish(task, run, config, "blocked", null, gh);
      return;
    }
    case "escalate":
    default:
      await escalate(m, task, run, config, evidence, gh);
      return;
  }
}

async function reclassify(m: TaskMoves, run: Run, why: string): Promise<void> {
  await m.db.run.update({ where: { id: run.id }, data: { class: null, recovery: null } });
  await m.runError(run.id, "reclassify", why);
}

/** Class C: never delete. Resume on the same branch while attempts remain, then block. */
async function holdResume(m: TaskMoves, task: Task, run: Run, config: RepoConfig, why: string, gh: GitHub): Promise<void> {
  if (task.attempt >= config.limits.maxAttempts) {
    await m.finish(task, run, config, "blocked", null, gh);
    await m.comment(
      task,
      `blocked-half-done:${task.id}:${task.attempt}`,
      `Agents made ${task.attempt} attempts at this issue. The branch \`${run.branch}\` has unfinished work (${why}), so it is kept and the task is \`${config.labels.blocked}\`. Finish it by hand, or remove \`${config.labels.blocked}\` and add \`${config.labels.queued}\` to let an agent resume it with a fresh attempt budget.`,
      gh,
    );
    return;
  }
  await m.finish(task, run, config, "queued", { kind: "resume" }, gh);
}

async function escalate(m: TaskMoves, task: Task, run: Run, config: RepoConfig, evidence: Record<string, unknown>, gh: GitHub): Promise<void> {
  const calls = Array.isArray(evidence["lastToolCalls"]) ? (evidence["lastToolCalls"] as string[]) : [];
  const lines = [
    `Orchestra needs a human for this issue. Run ${run.id} (attempt ${run.attempt}) ended as **${run.class}**: ${String(evidence["why"] ?? "")}.`,
    ...(calls.length ? ["", `Last tool calls: ${calls.map((c) => `\`${c}\``).join(" → ")}`] : []),
    "",
    "<details><summary>Evidence</summary>",
    "",
    "```json",
    JSON.stringify(evidence, null, 2),
    "```",
    "</details>",
    "",
    `What you can do: fix what stopped the agent (or answer it in a comment), then remove \`${config.labels.blocked}\` and add \`${config.labels.queued}\` to queue the issue again; or close the issue.`,
  ];
  // One escalation per run and class, however often the sweep comes by.
  await m.comment(task, `escalation:${run.id}:${run.class}`, lines.join("\n"), gh);
  await m.finish(task, run, config, "blocked", null, gh);
}
