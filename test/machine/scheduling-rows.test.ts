/**
 * The scheduling rows, case by case: stalls, late exits, uncharged
 * infrastructure deaths, claims refused by a gate, blockers — tables over
 * plain contexts (no database, no GitHub).
 */
import { parseRepoConfig, type RepoConfig } from "../../src/config/repo.js";
import type { Context, Decision } from "../../src/machine/decision.js";
import type { TaskEvent } from "../../src/machine/events.js";
import { contextIn, exampleRun, NOW } from "../../src/machine/examples.js";
import type { State } from "../../src/machine/model.js";
import { decide } from "../../src/machine/table.js";

function config(doc: unknown = {}): RepoConfig {
  const r = parseRepoConfig(doc);
  if (!r.ok) throw new Error(r.problems.join("; "));
  return r.config;
}

const ago = (ms: number) => new Date(NOW.getTime() - ms);
const MIN = 60_000;

const ctx = (state: State, over: Parameters<typeof contextIn>[1] = {}): Context => contextIn(state, over);

const outcome = (d: Decision) =>
  d.outcome === "applied" ? `→${d.to}` : d.outcome === "refused" ? `✗${d.reason}` : "·";

describe("heartbeats and stalls (limits.stallSeconds 1800)", () => {
  test.each([
    ["progress changed, long after the last change", "step:b", "step:a", 120 * MIN, "worker", "→claimed"],
    ["no progress, within the limit", undefined, "step:a", 29 * MIN, "worker", "→claimed"],
    ["the same progress, within the limit", "step:a", "step:a", 29 * MIN, "worker", "→claimed"],
    ["the same progress, at the limit", "step:a", "step:a", 30 * MIN, "worker", "✗stalled"],
    ["no progress, past the limit", undefined, "step:a", 31 * MIN, "worker", "✗stalled"],
    ["never any progress, past the limit since the claim", undefined, null, 31 * MIN, "worker", "✗stalled"],
    ["a dispatched workflow is not judged by progress", undefined, null, 300 * MIN, "dispatch", "→claimed"],
  ])("%s", (_name, progress, had, since, mode, want) => {
    const run = { progress: had, progressAt: had === null ? null : ago(since), startedAt: ago(since), mode };
    const e: TaskEvent = { kind: "heartbeat", runId: "r1", leaseEpoch: "e1", ...(progress ? { progress } : {}) };
    const d = decide(ctx("claimed", { run: { state: "live", ...run } }), e);
    expect(outcome(d)).toBe(want);
    if (d.outcome === "applied")
      expect(d.run?.patch.progressAt).toEqual(progress && progress !== had ? NOW : undefined);
  });
  test("a renewal lasts leaseSeconds; a dispatched run's lasts dispatch.leaseSeconds", () => {
    const worker = decide(ctx("claimed"), { kind: "heartbeat", runId: "r1", leaseEpoch: "e1", progress: "p" });
    const dispatch = decide(
      ctx("claimed", { run: { mode: "dispatch" }, config: config({ dispatch: { workflow: "agent.yml" } }) }),
      { kind: "heartbeat", runId: "r1", leaseEpoch: "e1" },
    );
    expect(worker.outcome === "applied" && worker.task.leaseExpiresAt).toEqual(new Date(NOW.getTime() + 300_000));
    expect(dispatch.outcome === "applied" && dispatch.task.leaseExpiresAt).toEqual(
      new Date(NOW.getTime() + 21_600_000),
    );
  });
  test("lease-stalled ends the run like an expired lease, marked stalled, classified after the grace", () => {
    const d = decide(ctx("claimed", { run: { progressAt: ago(31 * MIN) } }), {
      kind: "lease-stalled",
      runId: "r1",
      leaseEpoch: "e1",
    });
    expect(d.outcome === "applied" && d.run?.patch).toMatchObject({
      state: "expired",
      stalled: true,
      classifyAfter: new Date(NOW.getTime() + 120_000),
    });
    const fresh = decide(ctx("claimed", { run: { progressAt: ago(MIN) } }), {
      kind: "lease-stalled",
      runId: "r1",
      leaseEpoch: "e1",
    });
    expect(outcome(fresh)).toBe("·");
  });
});

describe("late exits", () => {
  const exit = (pr: null | { number: number; headSha: string; merged: false }): TaskEvent => ({
    kind: "run-exited",
    runId: "r1",
    leaseEpoch: "e1",
    report: { leaseEpoch: "e1", exitCode: 0 },
    pr,
  });
  const PR = { number: 7, headSha: "h".repeat(40), merged: false as const };
  const successor = { ...exampleRun("live"), id: "r2", startedAt: NOW };
  const expiredRun = { state: "expired" as const, endReason: "lease expired without an exit" };
  test.each([
    ["live lease, with a PR", "claimed", { run: { state: "live" as const } }, PR, "→review"],
    [
      "expired, in the grace, with a PR",
      "claimed",
      { task: { leaseEpoch: null, leaseExpiresAt: null }, run: expiredRun },
      PR,
      "→review",
    ],
    [
      "expired, in the grace, without a PR: owed a class as an exit",
      "claimed",
      { task: { leaseEpoch: null, leaseExpiresAt: null }, run: expiredRun },
      null,
      "→claimed",
    ],
    [
      "expired and already classified, the task claimed by a successor",
      "claimed",
      { task: { runId: "r2" }, run: { ...expiredRun, class: "debris-empty" } },
      PR,
      "✗superseded",
    ],
    [
      "classified and re-queued, nobody claimed since, with a PR",
      "queued",
      { task: { runId: null }, run: { ...expiredRun, class: "debris-empty" } },
      PR,
      "→review",
    ],
    [
      "classified and re-queued, nobody claimed since, without a PR",
      "queued",
      { task: { runId: null }, run: { ...expiredRun, class: "debris-empty" } },
      null,
      "·",
    ],
    [
      "re-queued and a successor started since",
      "queued",
      {
        task: { runId: null },
        run: { ...expiredRun, class: "debris-empty" },
        runs: [
          { ...exampleRun("expired"), class: "debris-empty" },
          { ...successor, state: "aborted" as const },
        ],
      },
      PR,
      "✗superseded",
    ],
    ["the task is done", "done", { task: { runId: null }, run: { ...expiredRun, class: "merged" } }, PR, "✗superseded"],
    ["a revoked run (its issue closed)", "cancelled", { run: { state: "revoked" as const } }, PR, "✗revoked"],
  ])("%s", (_name, state, over, pr, want) => {
    expect(outcome(decide(ctx(state as State, over as never), exit(pr)))).toBe(want);
  });
});

describe("run-level infrastructure deaths are re-queued without using up an attempt, within limits.infraRequeues", () => {
  const classified = (infra: boolean, recovery: "delete-branch-requeue" | "hold-resume"): TaskEvent => ({
    kind: "run-classified",
    runId: "r1",
    verdict: {
      class: recovery === "hold-resume" ? "debris-half-done" : "debris-empty",
      recovery,
      evidence: { why: "w", ...(infra ? { infraDeath: "provider-unavailable" } : {}) },
    },
  });
  test.each([
    [
      "an infrastructure death, budget left",
      true,
      0,
      1,
      "delete-branch-requeue",
      "→queued",
      { attempt: 0, freeRequeues: 1 },
    ],
    [
      "an infrastructure death on the last attempt is still free",
      true,
      2,
      3,
      "delete-branch-requeue",
      "→queued",
      { attempt: 2, freeRequeues: 3 },
    ],
    ["the budget of free re-queues spent: charged", true, 3, 3, "delete-branch-requeue", "→failed", {}],
    ["an ordinary failure on the last attempt", false, 0, 3, "delete-branch-requeue", "→failed", {}],
    [
      "half-done work of an infrastructure death resumes free",
      true,
      0,
      3,
      "hold-resume",
      "→queued",
      { attempt: 2, freeRequeues: 1 },
    ],
  ])("%s", (_name, infra, freeRequeues, attempt, recovery, want, patch) => {
    const d = decide(
      ctx("claimed", { task: { attempt, freeRequeues }, run: { state: "exited" } }),
      classified(infra, recovery as "hold-resume"),
    );
    expect(outcome(d)).toBe(want);
    if (d.outcome === "applied") expect(d.task).toMatchObject(patch);
  });
});

describe("claims refused by a task's own gates", () => {
  const claim: TaskEvent = { kind: "claim", mode: "worker", runId: "r2", leaseEpoch: "e2", workerId: "w1" };
  test.each([
    ["claimable", {}, {}, "→claimed"],
    ["paused by configuration", {}, { paused: true }, "✗paused"],
    ["blocked by an open issue", { blockedBy: ["acme/app#3"] }, {}, "✗blocked"],
    ["blockers not read yet", { blockersAt: null }, {}, "✗blocked"],
    ["backing off", { backoffUntil: new Date(NOW.getTime() + MIN) }, {}, "✗backing-off"],
    ["in dispatch mode", {}, { dispatch: { workflow: "agent.yml" } }, "✗dispatch-mode"],
  ])("%s", (_name, task, doc, want) => {
    expect(outcome(decide(ctx("queued", { task, config: config(doc) }), claim))).toBe(want);
  });
  test("the claim's lease is leaseSeconds long (default 5 minutes)", () => {
    const d = decide(ctx("queued"), claim);
    expect(d.outcome === "applied" && d.newRun?.leaseExpiresAt).toEqual(new Date(NOW.getTime() + 300_000));
  });
});

describe("blockers", () => {
  test.each([
    [
      ["acme/app#9", "acme/app#3", "acme/app#9"],
      ["acme/app#3", "acme/app#9"],
    ],
    [[], null],
  ])("%j are recorded as %j, with when they were read", (blockers, want) => {
    const d = decide(ctx("queued", { task: { blockedBy: ["acme/app#1"] } }), { kind: "blockers-read", blockers });
    expect(d.outcome === "applied" && d.task).toEqual({ blockedBy: want, blockersAt: NOW });
    expect(d.effects).toEqual([]);
  });
});
