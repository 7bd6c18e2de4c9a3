/**
 * One example event of each kind and one example task in each state. The
 * transition table in docs/design.md is rendered by running every example
 * event against every example state (`npm run docs:machine`), and the
 * exhaustive table test checks the same runs against a matrix written by
 * hand: what the docs say, the tests hold.
 */
import { DEFAULT_CONFIG } from "../config/repo.js";
import type { Verdict } from "../outcomes/classify.js";
import type { Context, Decision, RunView, TaskView } from "./decision.js";
import type { EventKind, EventOf } from "./events.js";
import { labelFor, type RunState, type State } from "./model.js";
import { decide } from "./table.js";

export const NOW = new Date("2026-06-01T12:00:00.000Z");
const past = new Date(NOW.getTime() - 1000);
const later = new Date(NOW.getTime() + 300_000);

const verdict = (v: Verdict) => v;
const MERGE = { prNumber: 7, mergeSha: "m".repeat(40), headSha: "h".repeat(40), mergedAt: NOW };
const PR = { number: 7, headSha: "h".repeat(40) };

export const EXAMPLE_EVENTS: { readonly [K in EventKind]: EventOf<K> } = {
  "queue-label": {
    kind: "queue-label",
    actor: "alice",
    issue: { title: "Fix it", body: "Please", labels: ["agent:queued"] },
  },
  "queue-label-untrusted": {
    kind: "queue-label-untrusted",
    actor: "eve",
    why: "eve has read permission; write or higher is needed",
    deliveryId: "d1",
  },
  "queue-label-removed": { kind: "queue-label-removed", actor: "alice" },
  "label-untrusted": {
    kind: "label-untrusted",
    actor: "eve",
    why: "eve has read permission; write or higher is needed",
    label: "agent:queued",
    change: "removed",
    deliveryId: "d2",
  },
  "issue-closed": { kind: "issue-closed", actor: "alice", completed: false },
  "config-invalid": { kind: "config-invalid", problems: ["limits.maxAttempts: expected number"] },
  claim: { kind: "claim", mode: "worker", runId: "r2", leaseEpoch: "e2", workerId: "w1" },
  dispatched: { kind: "dispatched", runId: "r1", workflowRunId: 99 },
  "dispatch-refused": {
    kind: "dispatch-refused",
    runId: "r1",
    why: "Workflow does not have 'workflow_dispatch' trigger",
  },
  heartbeat: { kind: "heartbeat", runId: "r1", leaseEpoch: "e1", progress: "step:tests" },
  "lease-expired": { kind: "lease-expired", runId: "r1", leaseEpoch: "e1" },
  "lease-stalled": { kind: "lease-stalled", runId: "r1", leaseEpoch: "e1" },
  "worker-revoked": { kind: "worker-revoked", runId: "r1", workerName: "laptop" },
  "run-released": { kind: "run-released", runId: "r1", leaseEpoch: "e1", reason: "clone failed: no space left" },
  "run-exited": {
    kind: "run-exited",
    runId: "r1",
    leaseEpoch: "e1",
    report: { leaseEpoch: "e1", exitCode: 0 },
    pr: null,
  },
  "run-classified": {
    kind: "run-classified",
    runId: "r1",
    verdict: verdict({
      class: "phantom",
      recovery: "delete-branch-requeue",
      evidence: { why: "exit 0, no PR, nothing ahead" },
    }),
  },
  "pr-published": { kind: "pr-published", runId: "r1", pr: PR },
  "publish-refused": { kind: "publish-refused", runId: "r1", why: "failing: test (failure)" },
  "branch-kept": { kind: "branch-kept", runId: "r0", why: "the branch gained 1 commit" },
  "sweep-failed": { kind: "sweep-failed", why: "config could not be read", retryAt: later },
  "recovery-stuck": {
    kind: "recovery-stuck",
    runId: "r1",
    stage: "publish",
    why: "create pull request: 422 Validation Failed (base: invalid)",
  },
  "blockers-read": { kind: "blockers-read", blockers: ["acme/app#3"] },
  "breaker-opened": {
    kind: "breaker-opened",
    klass: "debris-empty",
    runs: ["r1", "r2", "r3", "r4", "r5"],
    until: later,
  },
  "pr-opened": { kind: "pr-opened", pr: PR, branch: "agent/issue-12" },
  "pr-merged": { kind: "pr-merged", merge: MERGE },
  "pr-closed": { kind: "pr-closed", pr: PR },
  "check-failed": {
    kind: "check-failed",
    pr: PR,
    verdict: verdict({ class: "checks-failed", recovery: "continue-fix-checks", evidence: { why: "failing: test" } }),
    reruns: [],
    failureKey: "c501",
    failing: [{ name: "test", conclusion: "failure", summary: "1 failed" }],
  },
  "base-moved": { kind: "base-moved", pr: PR, mergeable: "conflicting", baseSha: "b".repeat(40) },
  "pr-synchronized": { kind: "pr-synchronized", pr: { number: 7, headSha: "i".repeat(40) } },
  "branch-pushed": { kind: "branch-pushed", branch: "agent/issue-12", headSha: "j".repeat(40) },
  "branch-rewritten": {
    kind: "branch-rewritten",
    branch: "agent/issue-12",
    before: "b".repeat(40),
    after: "a".repeat(40),
    dropped: 2,
    pusher: "agent-bot",
  },
  "review-submitted": {
    kind: "review-submitted",
    pr: PR,
    review: "changes_requested",
    reviewId: 5,
    author: "alice",
    body: "Rename it",
    comments: [],
  },
  command: { kind: "command", command: "retry", author: "alice", commentId: 42 },
  correction: { kind: "correction", author: "alice", commentId: 43, body: "Use the v2 API" },
  "decision-receipted": { kind: "decision-receipted", decisionId: "d1", runId: "r1", commentId: 43 },
  "decision-requested": {
    kind: "decision-requested",
    runId: "r1",
    leaseEpoch: "e1",
    decisionId: "q1",
    question: "Keep the old API?",
    blocks: "run",
  },
  "question-answered": { kind: "question-answered", decisionId: "q1", author: "alice", answer: "Yes" },
  "condition-met": { kind: "condition-met", decisionId: "q1", condition: "issue-closed:3" },
  "question-expired": { kind: "question-expired", decisionId: "q1", question: "Keep the old API?" },
  drift: { kind: "drift", labels: ["agent:queued", "agent:failed"] },
  "sub-issues-closed": { kind: "sub-issues-closed", subIssues: ["acme/app#13", "acme/app#14"] },
  "installation-removed": { kind: "installation-removed", why: "the App was uninstalled" },
  "access-lost": { kind: "access-lost", why: "the App's installation is suspended" },
  "access-restored": { kind: "access-restored", why: "the App's installation was unsuspended" },
  "fleet-refresh": { kind: "fleet-refresh", why: "reconcile" },
};

/** Events about a run that already ended: the example claimed task holds an ended run for them. */
const ENDED_RUN_EVENTS: ReadonlySet<EventKind> = new Set([
  "run-classified",
  "pr-published",
  "publish-refused",
  "recovery-stuck",
]);

export function exampleRun(state: RunState, klass: string | null = null): RunView {
  return {
    id: "r1",
    attempt: 1,
    state,
    mode: "worker",
    leaseEpoch: "e1",
    leaseExpiresAt: past,
    branch: "agent/issue-12",
    prNumber: null,
    class: klass,
    recovery: null,
    endReason: state === "live" ? null : "exited 0 without a pull request",
    startedAt: new Date(NOW.getTime() - 600_000),
    endedAt: state === "live" ? null : past,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    workflowRunId: null,
    progress: "step:build",
    progressAt: new Date(NOW.getTime() - 300_000),
    stalled: false,
    reported: false,
  };
}

export function exampleTask(state: Exclude<State, "none">, over: Partial<TaskView> = {}): TaskView {
  const claimed = state === "claimed";
  return {
    id: "t1",
    installationId: 1,
    repo: "acme/app",
    issue: 12,
    title: "Fix it",
    body: "Please",
    state,
    attempt: 1,
    priority: 1000,
    branch: "agent/issue-12",
    continuation: null,
    prNumber: state === "review" ? 7 : null,
    headSha: state === "review" ? "h".repeat(40) : null,
    runId: claimed ? "r1" : null,
    leaseEpoch: claimed ? "e1" : null,
    leaseExpiresAt: claimed ? past : null,
    workerId: claimed ? "w1" : null,
    label: labelFor(state, DEFAULT_CONFIG.labels),
    backoffUntil: null,
    backoffCount: 0,
    diagnostic: null,
    blockedBy: null,
    blockersAt: past,
    freeRequeues: 0,
    costUsd: 0,
    version: 3,
    ...over,
  };
}

/** A context in a state: the example task (and, when claimed, a live run), with what a table row needs changed. */
export function contextIn(
  state: State,
  over: {
    task?: Partial<TaskView>;
    run?: (Partial<RunView> & { state?: RunState }) | null;
    runs?: RunView[];
    config?: Context["config"];
    now?: Date;
    fleetDebounceMs?: number;
  } = {},
): Context {
  const task = state === "none" ? null : exampleTask(state, over.task);
  const run =
    over.run === null
      ? null
      : over.run
        ? { ...exampleRun(over.run.state ?? "live"), ...over.run }
        : state === "claimed"
          ? exampleRun("live")
          : null;
  return {
    subject: { installationId: 1, repo: "acme/app", issue: 12 },
    task,
    run,
    runs: over.runs ?? (run ? [run] : []),
    config: over.config ?? DEFAULT_CONFIG,
    hasReceipt: false,
    dryRun: false,
    ...(over.fleetDebounceMs ? { fleetDebounceMs: over.fleetDebounceMs } : {}),
    now: over.now ?? NOW,
  };
}

/** The example context for an event in a state. */
export function exampleContext(state: State, kind: EventKind): Context {
  const ended = ENDED_RUN_EVENTS.has(kind);
  let run =
    state === "claimed"
      ? exampleRun(
          ended ? "exited" : "live",
          kind === "publish-refused" || kind === "recovery-stuck" ? "debris-publishable" : null,
        )
      : null;
  // A stall is about a run whose heartbeats last reported progress two hours ago.
  if (run && kind === "lease-stalled") run = { ...run, progressAt: new Date(NOW.getTime() - 2 * 3600_000) };
  return contextIn(state, {
    run,
    // The fleet issue's own event is shown in a repository that opted in (every other example runs with the defaults).
    config: kind === "fleet-refresh" ? { ...DEFAULT_CONFIG, fleetIssue: true } : DEFAULT_CONFIG,
  });
}

export function exampleDecision(state: State, kind: EventKind): Decision {
  return decide(exampleContext(state, kind), EXAMPLE_EVENTS[kind]);
}
