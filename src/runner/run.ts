/**
 * One claimed run, start to end: preflight (the agent's program resolves,
 * the mirror fetches with the run's token, the worktree is made), the task
 * written for the agent, the agent run under two clocks beside the lease (a
 * watchdog for no output and no worktree change, a wall-clock cap), then
 * finish.ts. A failure before the agent starts is a release, never an
 * attempt.
 */
import { accessSync, constants as fs, existsSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { startAgent, type AgentProcess } from "./agent.js";
import { errorOf } from "./client.js";
import { agentEnv, commandProgram, ORCHESTRA_DIR } from "./facts.js";
import { finish, QUESTION_FILE, type RunEnd } from "./finish.js";
import { worktreeFacts } from "./git.js";
import { renderTask } from "./prompt.js";
import type { ClaimAnswer } from "./protocol.js";
import { Session, type WorkerContext } from "./session.js";
import { addWorktree, ensureMirror, removeWorktree, saveRecord, type RunRecord } from "./workspace.js";

/** Whether `program` names an executable: a path as it is, a bare name on PATH. */
export function resolves(program: string, path: string): boolean {
  const executable = (p: string) => {
    try {
      accessSync(p, fs.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes("/")) return executable(program);
  return path.split(delimiter).some((dir) => dir !== "" && executable(join(dir, program)));
}

/** Hands the run back before the agent started: no attempt used. An older server without release gets an exit. */
export async function release(s: Session, reason: string): Promise<RunEnd> {
  const runPath = `/api/v1/runs/${encodeURIComponent(s.init.runId)}`;
  const body = { leaseEpoch: s.init.leaseEpoch, reason: reason.slice(0, 1000) };
  await s.stopHeartbeats();
  let r = await s.ctx.client.post(`${runPath}/release`, body);
  if (r.status === 404)
    r = await s.ctx.client.post(`${runPath}/exit`, { leaseEpoch: s.init.leaseEpoch, exitCode: 127 });
  if (s.worktree && s.mirror)
    await removeWorktree(s.ctx.settings.workdir, s.mirror, s.init.runId, s.init.branch, s.ctx.settings.concurrency);
  const accepted = r.status >= 200 && r.status < 300;
  s.say(
    "released",
    `${reason}${accepted ? "" : ` (the service answered ${r.status}: ${errorOf(r.body) ?? ""})`}`,
    { reason, status: r.status },
    "error",
  );
  return { kind: "released", reason };
}

/** Waits for `promise` at most `ms`, leaving no timer behind (a pending timer would keep the process alive). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The run's session from its claim: the clone URL and API base from the claim, else the worker's settings. */
export function sessionOf(claim: ClaimAnswer, ctx: WorkerContext): Session {
  const { settings } = ctx;
  return new Session(
    {
      runId: claim.run.id,
      leaseEpoch: claim.run.leaseEpoch,
      leaseExpiresAt: claim.run.leaseExpiresAt,
      ...(claim.run.leaseSeconds !== undefined ? { leaseSeconds: claim.run.leaseSeconds } : {}),
      repo: claim.task.repo,
      issue: claim.task.issue,
      title: claim.task.title,
      branch: claim.run.branch,
      continuation: claim.run.continuation,
      credentials: claim.credentials,
      cloneUrl: claim.task.cloneUrl ?? `${settings.githubUrl}/${claim.task.repo}.git`,
      apiUrl: claim.task.apiUrl ?? settings.githubApiUrl,
    },
    ctx,
  );
}

export function recordOf(s: Session, agentPid?: number): RunRecord {
  return {
    runId: s.init.runId,
    leaseEpoch: s.init.leaseEpoch,
    repo: s.init.repo,
    issue: s.init.issue,
    title: s.init.title,
    branch: s.init.branch,
    defaultBranch: s.defaultBranch,
    startSha: s.startSha,
    cloneUrl: s.init.cloneUrl,
    apiUrl: s.init.apiUrl,
    continuation: s.init.continuation ? JSON.stringify(s.init.continuation) : null,
    ...(agentPid ? { agentPid } : {}),
  };
}

export async function runClaim(claim: ClaimAnswer, ctx: WorkerContext): Promise<RunEnd> {
  const s = sessionOf(claim, ctx);
  try {
    return await runSession(s, claim);
  } catch (err) {
    // Nothing is removed: whatever the run's worktree holds stays for a person (or a restart) to hand off.
    const where = s.worktree ? `; its worktree is kept at ${s.worktree}` : "";
    s.say("failed", `${(err as Error).message}${where}`, {}, "error");
    return { kind: "failed", error: (err as Error).message };
  } finally {
    await s.stopHeartbeats();
  }
}

async function runSession(s: Session, claim: ClaimAnswer): Promise<RunEnd> {
  const { ctx } = s;
  const { settings } = ctx;
  const kind = claim.run.continuation?.kind ?? "fresh";
  s.say("claimed", `run ${claim.run.id}, attempt ${claim.run.attempt}, ${kind}, branch ${claim.run.branch}`, {
    attempt: claim.run.attempt,
    continuation: kind,
    branch: claim.run.branch,
  });
  s.startHeartbeats();

  const program = commandProgram(settings.agent);
  if (program !== null && !resolves(program, process.env["PATH"] ?? ""))
    return release(s, `preflight: the agent's program ${program} is not found on PATH; install it or fix --agent`);
  try {
    s.step = "mirror";
    const mirror = await ensureMirror(settings.workdir, s.init.repo, s.init.cloneUrl, s.token, s.init.branch);
    s.mirror = mirror.path;
    s.defaultBranch = mirror.defaultBranch;
    s.say("mirror", `fetched ${s.init.repo} (default branch ${mirror.defaultBranch})`);
  } catch (err) {
    const hint = s.token ? "" : "; the claim carried no credentials (set ORCHESTRA_GIT_TOKEN for credentials: none)";
    return release(s, `preflight: cannot fetch ${s.init.repo}: ${(err as Error).message}${hint}`);
  }
  let env: Record<string, string>;
  try {
    s.step = "worktree";
    const wt = await addWorktree(
      settings.workdir,
      { path: s.mirror, defaultBranch: s.defaultBranch },
      s.init.runId,
      s.init.branch,
    );
    s.worktree = wt.path;
    s.startSha = wt.startSha;
    const dir = join(wt.path, ORCHESTRA_DIR);
    await writeFile(join(dir, "task.md"), renderTask(claim));
    await mkdir(join(settings.workdir, "logs"), { recursive: true });
    await saveRecord(settings.workdir, recordOf(s));
    env = agentEnv(process.env, {
      ORCHESTRA_TASK_FILE: join(dir, "task.md"),
      ORCHESTRA_RUN_ID: s.init.runId,
      ORCHESTRA_REPO: s.init.repo,
      ORCHESTRA_ISSUE: String(s.init.issue),
      ORCHESTRA_BRANCH: s.init.branch,
      ORCHESTRA_CONTINUATION: kind,
      ORCHESTRA_DECISIONS_DIR: join(dir, "decisions"),
      ORCHESTRA_QUESTION_FILE: join(dir, QUESTION_FILE),
      ORCHESTRA_USAGE_FILE: join(dir, "usage.json"),
    });
    s.say("worktree", `${wt.path} on ${s.init.branch} from ${wt.existing ? "the existing branch" : s.defaultBranch}`, {
      path: wt.path,
      startSha: wt.startSha,
    });
  } catch (err) {
    return release(s, `preflight: cannot make the run's worktree: ${(err as Error).message}`);
  }
  await s.deliver(claim.decisions);

  s.step = "agent";
  const logFile = s.logFile;
  const agent = startAgent({ command: settings.agent, cwd: s.worktree, env, logFile });
  try {
    await saveRecord(settings.workdir, recordOf(s, agent.pid));
  } catch (err) {
    await agent.stop(0);
    throw err;
  }
  s.say("agent started", `pid ${agent.pid}, output in ${logFile}`, { pid: agent.pid, log: logFile });
  const { exitCode, stopped } = await supervise(s, agent);
  s.say(
    "agent exited",
    `exit code ${exitCode}${stopped ? `, stopped by the worker: ${stopped}` : ""}`,
    { exitCode, stopped },
    stopped ? "error" : "info",
  );
  return finish(s, { exitCode, stopped, env, ...(program ? { harness: program } : {}) });
}

/**
 * Waits for the agent, and stops it when a clock runs out, the lease is
 * lost, the worker stops, or the agent asks a question.
 */
async function supervise(s: Session, agent: AgentProcess): Promise<{ exitCode: number; stopped: string | null }> {
  const { settings } = s.ctx;
  const started = Date.now();
  const idleMs = settings.idleMinutes * 60_000;
  const capMs = settings.maxRunMinutes * 60_000;
  // Flags are looked at often; git status (the worktree's digest) at most every 5 s, or a quarter of the idle time.
  const tick = 250;
  const digestEvery = Math.min(5000, Math.max(tick, idleMs / 4));
  let digestAt = 0;
  const question = join(s.worktree!, ORCHESTRA_DIR, QUESTION_FILE);
  let digest = "";
  let changedAt = started;
  let exited: number | null = null;
  void agent.exited.then((code) => (exited = code));
  for (;;) {
    await within(agent.exited, tick);
    const asked = existsSync(question) && statSync(question).size > 0;
    if (exited !== null) return { exitCode: exited, stopped: asked ? "question" : null };
    const now = Date.now();
    const due = now - digestAt >= digestEvery;
    if (due) digestAt = now;
    const f = due ? await worktreeFacts(s.worktree!, `refs/remotes/origin/${s.defaultBranch}`).catch(() => null) : null;
    if (f && f.digest !== digest) {
      digest = f.digest;
      changedAt = now;
    }
    const quiet = now - Math.max(agent.lastOutputAt(), changedAt);
    const stop =
      (s.lost ? `lease-${s.lost}` : null) ??
      s.ctx.stopping() ??
      (asked ? "question" : null) ??
      (now - started >= capMs ? "wall-clock-cap" : null) ??
      (quiet >= idleMs ? "idle" : null);
    if (stop) return { exitCode: await agent.stop(settings.graceSeconds * 1000), stopped: stop };
  }
}
