/**
 * After the agent: the facts from git (dirty, commits ahead, head), the test
 * command, work left uncommitted committed as handoff work, the push (never
 * forced, but a `rebase` continuation with --force-with-lease against the
 * head Orchestra named), the pull request when the run finished its work,
 * then the exit. "No change at all" is reported as what it is: nothing
 * pushed, dirty false, the agent's own exit code.
 */
import { existsSync } from "node:fs";
import { readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { errorOf, reasonOf } from "./client.js";
import { ORCHESTRA_DIR, parseUsage } from "./facts.js";
import { commitHandoff, git, worktreeState } from "./git.js";
import { ensurePullRequest } from "./pulls.js";
import type { ExitAnswer, ExitBody } from "./protocol.js";
import type { Session } from "./session.js";
import { removeWorktree } from "./workspace.js";
import { runTests } from "./tests.js";

export type RunEnd =
  | { kind: "exited"; answer: ExitAnswer; body: ExitBody; pushed: boolean }
  | { kind: "released"; reason: string }
  | { kind: "question"; decisionId: string | null }
  | { kind: "lost"; reason: string }
  | { kind: "failed"; error: string };

export interface AgentEnd {
  exitCode: number;
  /** Why the worker stopped the agent (idle, wall-clock-cap, lease-<reason>, worker-stopped, question), or null. */
  stopped: string | null;
  /** The agent's environment, for the test command. */
  env?: Record<string, string>;
  harness?: string;
  infra?: ExitBody["infra"];
}

export const QUESTION_FILE = "question.md";

async function push(s: Session): Promise<string | null> {
  const wt = s.worktree!;
  const c = s.init.continuation;
  const args = ["push", "--quiet", "--porcelain"];
  // A rebase rewrites the branch: replaced only if it is still what Orchestra named, never blindly.
  if (c?.kind === "rebase") args.push(`--force-with-lease=refs/heads/${s.init.branch}:${c.headSha ?? s.startSha}`);
  // To the claim's URL, not the remote's: the token goes nowhere else, whatever the mirror's config says.
  args.push(s.init.cloneUrl, `HEAD:refs/heads/${s.init.branch}`);
  const r = await git(args, { cwd: wt, token: s.token });
  if (r.code === 0) return null;
  const said = (r.stderr + r.stdout).trim().split("\n").slice(-4).join(" / ");
  return said || `git push exited ${r.code}`;
}

export async function finish(s: Session, end: AgentEnd): Promise<RunEnd> {
  const wt = s.worktree!;
  const { settings } = s.ctx;
  const base = `refs/remotes/origin/${s.defaultBranch}`;
  s.step = "facts";
  const left = await worktreeState(wt, base);
  const handoff = end.stopped ?? (left.dirty ? "uncommitted-work" : null);

  let testsPassed: boolean | undefined;
  const changed = left.dirty || left.headSha !== s.startSha;
  if (settings.test && !end.stopped && changed) {
    s.step = "tests";
    testsPassed = await runTests(settings.test, wt, end.env ?? {}, settings.maxRunMinutes * 60_000, s.logFile);
    s.say("tests", testsPassed ? "passed" : "failed", { testsPassed });
  }
  let committed = false;
  if (handoff && left.dirty) {
    committed = await commitHandoff(wt, handoff);
    s.say("handoff", `uncommitted work committed (Orchestra-Handoff: ${handoff})`, { reason: handoff });
  }
  // Asked again only when the worker has run something in the worktree since: the test command, a commit.
  const facts = committed || testsPassed !== undefined ? await worktreeState(wt, base) : left;
  const moved = facts.headSha !== s.startSha;

  if (s.superseded) {
    s.say(
      "superseded",
      `another run holds the task now: nothing pushed; this run's work stays committed in ${wt} (branch ` +
        `${s.init.branch}, ${facts.headSha.slice(0, 12)}); compare it with the successor's before removing it`,
      {},
      "error",
    );
    await s.stopHeartbeats();
    return { kind: "lost", reason: s.lost! };
  }

  let pushed = !moved;
  if (moved) {
    s.step = "push";
    const refused = await push(s);
    pushed = refused === null;
    if (pushed) s.say("pushed", `${s.init.branch} at ${facts.headSha.slice(0, 12)} (${facts.ahead} ahead)`);
    else
      s.say(
        "push failed",
        `${refused}; the work stays in ${wt}; push it by hand (git -C ${wt} push origin HEAD:${s.init.branch}) ` +
          "or let the next run redo it",
        {},
        "error",
      );
  } else s.say("no change", "the agent changed nothing: nothing to push", { exitCode: end.exitCode });

  const questionFile = join(wt, ORCHESTRA_DIR, QUESTION_FILE);
  if (end.stopped === "question") return relayQuestion(s, questionFile, pushed);

  const finished = end.exitCode === 0 && !handoff && testsPassed !== false && facts.ahead > 0 && pushed;
  let prNumber: number | undefined = s.init.continuation?.prNumber;
  if (finished && prNumber === undefined) {
    s.step = "pr";
    if (!s.token) s.say("pr", "no credentials to open the pull request; Orchestra publishes it", {}, "error");
    else
      try {
        const pr = await ensurePullRequest({
          apiUrl: s.init.apiUrl,
          token: s.token,
          repo: s.init.repo,
          branch: s.init.branch,
          base: s.defaultBranch,
          title: s.init.title,
          issue: s.init.issue,
        });
        prNumber = pr.number;
        s.say("pr", `#${pr.number} ${pr.opened ? "opened" : "already open"} ${pr.url}`, { pr: pr.number });
      } catch (err) {
        s.say("pr", `${(err as Error).message}; Orchestra classifies the pushed branch`, {}, "error");
      }
  }

  const usage = parseUsage(await readFile(join(wt, ORCHESTRA_DIR, "usage.json"), "utf8").catch(() => null));
  await s.stopHeartbeats();
  const body: ExitBody = {
    leaseEpoch: s.init.leaseEpoch,
    exitCode: end.exitCode,
    branch: s.init.branch,
    headSha: facts.headSha,
    ...(prNumber === undefined ? {} : { prNumber }),
    dirty: left.dirty,
    ...(testsPassed === undefined ? {} : { testsPassed }),
    ...(handoff ? { handoff: true } : {}),
    ...(usage ? { usage } : {}),
    ...(end.harness ? { harness: end.harness.slice(0, 200) } : {}),
    ...(end.infra ? { infra: end.infra } : {}),
  };
  s.step = "exit";
  const answer = await s.ctx.client.post<ExitAnswer>(`/api/v1/runs/${encodeURIComponent(s.init.runId)}/exit`, body);
  const keep = !pushed;
  if (!keep)
    await removeWorktree(s.ctx.settings.workdir, s.mirror!, s.init.runId, s.init.branch, s.ctx.settings.concurrency);
  if (answer.status === 200) {
    const a = answer.body;
    const what =
      a.outcome === "review"
        ? `review #${a.prNumber ?? prNumber ?? "?"}`
        : a.outcome === "dispatched"
          ? "the job's conclusion reports it"
          : `classified ${a.class ?? "?"}${a.recovery ? ` (${a.recovery})` : ""}`;
    s.say("exit", `→ ${what}`, { outcome: a.outcome, class: a.class, recovery: a.recovery, prNumber: a.prNumber });
    return { kind: "exited", answer: a, body, pushed };
  }
  const why = `${answer.status} ${reasonOf(answer.body) ?? ""} ${errorOf(answer.body) ?? ""}`.replace(/\s+/g, " ");
  s.say("exit", `refused: ${why.trim()}`, { status: answer.status }, "error");
  return answer.status === 409
    ? { kind: "lost", reason: reasonOf(answer.body) ?? "conflict" }
    : { kind: "failed", error: why };
}

/**
 * The agent asked a human: its work is pushed first (the question ends the
 * lease, and with it the brokered token), then the question is relayed once
 * and its file renamed so it is not asked again.
 */
async function relayQuestion(s: Session, file: string, pushed: boolean): Promise<RunEnd> {
  await s.stopHeartbeats();
  const question = existsSync(file) ? (await readFile(file, "utf8")).trim().slice(0, 10_000) : "";
  const answer = await s.ctx.client.post<{ decisionId?: string }>(
    `/api/v1/runs/${encodeURIComponent(s.init.runId)}/decision-requests`,
    { leaseEpoch: s.init.leaseEpoch, question },
  );
  if (existsSync(file)) await rename(file, join(s.worktree!, ORCHESTRA_DIR, "question.sent.md"));
  if (answer.status !== 201 && answer.status !== 200) {
    s.say("question", `not relayed: ${answer.status} ${errorOf(answer.body) ?? ""}`, {}, "error");
    return { kind: "lost", reason: reasonOf(answer.body) ?? "conflict" };
  }
  s.say("question", "relayed: the task waits for a human's answer", { decision: answer.body.decisionId });
  if (pushed)
    await removeWorktree(s.ctx.settings.workdir, s.mirror!, s.init.runId, s.init.branch, s.ctx.settings.concurrency);
  return { kind: "question", decisionId: answer.body.decisionId ?? null };
}
