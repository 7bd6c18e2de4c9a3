/**
 * `orchestra worker --dispatched`: one run inside the GitHub Actions job a
 * repository in dispatch mode starts (docs/workflows/orchestra-agent.yml).
 * The run comes from the workflow_dispatch's inputs (GITHUB_EVENT_PATH), the
 * issue's text from GitHub with the job's token, and everything after that is
 * the worker's own run: mirror, worktree, agent, facts, push, pull request.
 * No service is called: Orchestra follows the job through its workflow_run
 * events, so the job's conclusion is the exit (success: the agent finished
 * and its work is pushed, or it changed nothing; anything else: failure).
 */
import { appendFile, readFile } from "node:fs/promises";
import type { Answer, ServiceClient } from "./client.js";
import type { WorkerSettings } from "./config.js";
import type { RunEnd } from "./finish.js";
import type { ClaimAnswer, ExitBody, RunContinuation } from "./protocol.js";
import { reporter } from "./report.js";
import { runClaim } from "./run.js";
import type { WorkerIo } from "./worker.js";

/** The workflow_dispatch inputs Orchestra sends (src/machine/rows/runs.ts), all strings as GitHub hands them on. */
export const DISPATCH_INPUTS = ["task", "run", "attempt", "lease_epoch", "branch", "continuation"] as const;
type Inputs = Record<(typeof DISPATCH_INPUTS)[number], string>;

/** The dispatched job's exit codes (docs/worker.md): the job's conclusion is what Orchestra reads. */
export const DISPATCHED_EXIT = {
  /** The agent finished (exit 0, tests not failed) and its work is pushed, or it changed nothing. */
  success: 0,
  /** The agent failed, was stopped (its work pushed as a handoff), or the push failed. */
  failure: 1,
  /** The job is not a dispatch from Orchestra: the event, its inputs or the job's environment are wrong. */
  usage: 2,
  /** Preflight failed before the agent started (the agent's program, the clone, the worktree). */
  preflight: 4,
} as const;

/** The run a dispatch names, from the event's JSON; a string says what is wrong. */
export function dispatchOf(event: unknown): { inputs: Inputs; issue: number } | string {
  const raw = (event as { inputs?: unknown } | null)?.inputs;
  if (!raw || typeof raw !== "object")
    return "the event has no inputs: run this only in a job started by workflow_dispatch from Orchestra";
  const inputs = raw as Record<string, unknown>;
  const missing = DISPATCH_INPUTS.filter((k) => k !== "continuation" && typeof inputs[k] !== "string");
  if (missing.length) return `the dispatch lacks the input(s) ${missing.join(", ")}; declare all of them (see docs)`;
  const value = Object.fromEntries(
    DISPATCH_INPUTS.map((k) => [k, typeof inputs[k] === "string" ? inputs[k] : ""]),
  ) as Inputs;
  if (!/^[1-9][0-9]*$/.test(value.attempt)) return `the input attempt is not a run's attempt: "${value.attempt}"`;
  const issue = /(?:^|\/)issue-([1-9][0-9]*)$/.exec(value.branch);
  if (!issue) return `the input branch "${value.branch}" is not a task's branch (<branchPrefix>issue-<number>)`;
  if (value.continuation) {
    try {
      const c: unknown = JSON.parse(value.continuation);
      if (!c || typeof c !== "object" || typeof (c as { kind?: unknown }).kind !== "string") throw new Error("kind");
    } catch {
      return "the input continuation is not a continuation's JSON";
    }
  }
  return { inputs: value, issue: Number(issue[1]) };
}

/** The job's conclusion for the run's end: what Orchestra classifies when the workflow run completes. */
export function dispatchedExitCode(end: RunEnd): number {
  if (end.kind === "released") return DISPATCHED_EXIT.preflight;
  if (end.kind !== "exited") return DISPATCHED_EXIT.failure;
  const b = end.body;
  const finished = b.exitCode === 0 && !b.handoff && b.testsPassed !== false && end.pushed;
  return finished ? DISPATCHED_EXIT.success : DISPATCHED_EXIT.failure;
}

/**
 * The service's part of a run, answered locally: heartbeats keep the run's
 * own clocks going, the exit is kept for the job's conclusion, and a question
 * cannot be relayed (a dispatched run has no channel back; it is in the job's
 * summary and the job fails).
 */
export class LocalService implements ServiceClient {
  exit: ExitBody | null = null;
  released: string | null = null;
  question: string | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  get<T>(_path: string): Promise<Answer<T>> {
    return Promise.resolve({ status: 200, body: { runs: [] } as T });
  }

  post<T>(path: string, body: unknown): Promise<Answer<T>> {
    const b = body as { reason?: string; question?: string };
    const answer = (status: number, value: unknown) => Promise.resolve({ status, body: value as T });
    if (path.endsWith("/heartbeat"))
      return answer(200, { leaseExpiresAt: new Date(this.now() + 3_600_000).toISOString(), decisions: [] });
    if (path.endsWith("/exit")) {
      this.exit = body as ExitBody;
      return answer(200, { outcome: "dispatched" });
    }
    if (path.endsWith("/release")) {
      this.released = b.reason ?? "";
      return answer(200, {});
    }
    if (path.endsWith("/decision-requests")) {
      this.question = b.question ?? "";
      return answer(422, {
        reason: "dispatched",
        error: "a dispatched run cannot wait for an answer: the question is in the job's summary",
      });
    }
    return answer(200, {});
  }
}

/** The issue's title and body, read with the job's token. A failure says what GitHub answered. */
async function readIssue(apiUrl: string, repo: string, issue: number, token: string) {
  const res = await fetch(`${apiUrl}/repos/${repo}/issues/${issue}`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
    },
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (!res.ok)
    throw new Error(
      `GitHub answered ${res.status} for ${repo}#${issue}: ${text.slice(0, 200)}; ` +
        "the job needs `permissions: issues: read`",
    );
  const json = JSON.parse(text) as { title?: string; body?: string | null };
  return { title: json.title ?? `#${issue}`, body: json.body ?? "" };
}

function summaryOf(claim: ClaimAnswer, end: RunEnd, local: LocalService, code: number): string {
  const lines = [
    `### Orchestra run ${claim.run.id}`,
    "",
    `${claim.task.repo}#${claim.task.issue}, attempt ${claim.run.attempt}, branch \`${claim.run.branch}\`: ` +
      (code === DISPATCHED_EXIT.success ? "success" : "failure"),
    "",
  ];
  if (end.kind === "released") lines.push(`Released before the agent started: ${end.reason}`);
  if (local.exit)
    lines.push(
      `Agent exit code ${local.exit.exitCode}; head ${local.exit.headSha ?? "?"}` +
        `${local.exit.handoff ? "; unfinished work pushed as a handoff" : ""}` +
        `${local.exit.testsPassed === false ? "; tests failed" : ""}`,
    );
  if (local.question) lines.push("", "The agent asked:", "", local.question);
  if (end.kind === "failed") lines.push(`Failed: ${end.error}`);
  return `${lines.join("\n")}\n`;
}

/** The dispatched run, start to end; answers the process's exit code (the job's conclusion). */
export async function runDispatched(
  settings: WorkerSettings,
  io: WorkerIo,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const report = reporter({ json: settings.json, verbose: settings.verbose, out: io.out, err: io.err });
  const fail = (text: string) => (report.step(null, "dispatched", text, {}, "error"), DISPATCHED_EXIT.usage);
  const eventPath = env["GITHUB_EVENT_PATH"];
  const repo = env["GITHUB_REPOSITORY"];
  if (!eventPath || !repo)
    return fail("GITHUB_EVENT_PATH and GITHUB_REPOSITORY are not set: --dispatched runs inside a GitHub Actions job");
  let event: unknown;
  try {
    event = JSON.parse(await readFile(eventPath, "utf8"));
  } catch (err) {
    return fail(`cannot read the job's event ${eventPath}: ${(err as Error).message}`);
  }
  const dispatch = dispatchOf(event);
  if (typeof dispatch === "string") return fail(dispatch);
  const { inputs, issue } = dispatch;
  const token = settings.gitToken!;
  let text: { title: string; body: string };
  try {
    text = await readIssue(settings.githubApiUrl, repo, issue, token);
  } catch (err) {
    report.step(null, "dispatched", `cannot read the task's issue: ${(err as Error).message}`, {}, "error");
    return DISPATCHED_EXIT.failure;
  }
  const claim: ClaimAnswer = {
    task: {
      id: inputs.task,
      repo,
      issue,
      ...text,
      cloneUrl: `${settings.githubUrl}/${repo}.git`,
      apiUrl: settings.githubApiUrl,
    },
    run: {
      id: inputs.run,
      attempt: Number(inputs.attempt),
      leaseEpoch: inputs.lease_epoch,
      leaseExpiresAt: new Date(Date.now() + settings.maxRunMinutes * 60_000).toISOString(),
      branch: inputs.branch,
      continuation: inputs.continuation ? (JSON.parse(inputs.continuation) as RunContinuation) : null,
    },
    // Corrections reach a dispatched task through its next continuation: a job has no heartbeat channel.
    decisions: [],
    credentials: null,
  };
  const local = new LocalService();
  // A cancelled job gets SIGINT, then SIGTERM: the agent is stopped and its work pushed as a handoff.
  let stopping: string | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    stopping = "worker-stopped";
    report.step(null, "stopping", `${signal}: the agent is stopped and its work handed off`);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let end: RunEnd;
  try {
    end = await runClaim(claim, { settings, client: local, report, stopping: () => stopping });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  const code = dispatchedExitCode(end);
  const summary = env["GITHUB_STEP_SUMMARY"];
  if (summary) await appendFile(summary, summaryOf(claim, end, local, code)).catch(() => undefined);
  report.step(
    { repo, issue, runId: inputs.run },
    "conclusion",
    code === DISPATCHED_EXIT.success ? "success" : `failure (exit ${code})`,
    { exitCode: code },
    code === DISPATCHED_EXIT.success ? "info" : "error",
  );
  return code;
}
