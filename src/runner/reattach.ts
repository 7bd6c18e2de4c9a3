/**
 * A worker restarted after a crash re-attaches through
 * `GET /api/v1/workers/me/runs`. The agent's session died with the worker,
 * so the agent is not started again: a run whose worktree is still here has
 * its work committed as handoff work and pushed, and its exit reports
 * `handoff: true` (and `infra: runner-lost`: the worker died, not the agent),
 * so the next run continues it on the same branch. A run whose worktree is
 * gone is released.
 */
import { existsSync } from "node:fs";
import { signalGroup } from "./agent.js";
import { finish } from "./finish.js";
import type { LiveRun } from "./protocol.js";
import { release } from "./run.js";
import { Session, type WorkerContext } from "./session.js";
import { loadRecord, mirrorPath, worktreePath } from "./workspace.js";
import { setTimeout as sleep } from "node:timers/promises";

/** The agent a dead worker left behind, stopped before its worktree is committed. */
async function stopOrphan(pid: number | undefined, graceMs: number): Promise<void> {
  if (!pid || !signalGroup(pid, "SIGTERM")) return;
  const until = Date.now() + graceMs;
  while (Date.now() < until && signalGroup(pid, 0)) await sleep(100);
  signalGroup(pid, "SIGKILL");
}

export async function reattach(ctx: WorkerContext): Promise<void> {
  const answer = await ctx.client.get<{ runs?: LiveRun[] }>("/api/v1/workers/me/runs");
  if (answer.status !== 200) {
    ctx.report.step(null, "reattach", `GET /api/v1/workers/me/runs answered ${answer.status}; skipped`, {}, "error");
    return;
  }
  for (const run of answer.body.runs ?? []) {
    const record = await loadRecord(ctx.settings.workdir, run.id);
    const path = worktreePath(ctx.settings.workdir, run.id);
    const s = new Session(
      {
        runId: run.id,
        leaseEpoch: run.leaseEpoch,
        leaseExpiresAt: run.leaseExpiresAt,
        repo: run.task.repo,
        issue: run.task.issue,
        title: record?.title ?? run.task.title ?? `#${run.task.issue}`,
        branch: record?.branch ?? run.branch ?? "",
        continuation: run.continuation ?? null,
        credentials: null,
        cloneUrl: record?.cloneUrl ?? `${ctx.settings.githubUrl}/${run.task.repo}.git`,
        apiUrl: record?.apiUrl ?? ctx.settings.githubApiUrl,
      },
      ctx,
    );
    if (!record || !existsSync(path) || record.leaseEpoch !== run.leaseEpoch) {
      await release(s, "the worker restarted without this run's worktree");
      continue;
    }
    s.worktree = path;
    s.mirror = mirrorPath(ctx.settings.workdir, run.task.repo);
    s.defaultBranch = record.defaultBranch;
    s.startSha = record.startSha;
    s.say("reattached", `run ${run.id}: the worker restarted; its work in ${path} is handed off`);
    await stopOrphan(record.agentPid, ctx.settings.graceSeconds * 1000);
    s.step = "recovering";
    // Renews the lease and, from a brokering server, the credentials for the push.
    await s.heartbeat();
    await finish(s, {
      exitCode: 137,
      stopped: "worker-restarted",
      infra: "runner-lost",
    });
  }
}
