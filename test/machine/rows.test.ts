/**
 * What the rows decide, case by case: fences, recoveries, budgets, usage and
 * backoffs, as tables over plain contexts (no database, no GitHub).
 */
import { parseRepoConfig, type RepoConfig } from "../../src/config/repo.js";
import type { Applied, Context, Decision } from "../../src/machine/decision.js";
import type { TaskEvent } from "../../src/machine/events.js";
import { contextIn, exampleRun, NOW } from "../../src/machine/examples.js";
import type { State } from "../../src/machine/model.js";
import { decide } from "../../src/machine/table.js";
import { LANES, laneOf } from "../../src/machine/effects.js";
import type { Verdict } from "../../src/outcomes/classify.js";

function config(doc: unknown = {}): RepoConfig {
  const r = parseRepoConfig(doc);
  if (!r.ok) throw new Error(r.problems.join("; "));
  return r.config;
}

const ctx = (state: State, over: Parameters<typeof contextIn>[1] = {}): Context => contextIn(state, over);

function applied(d: Decision): Applied {
  if (d.outcome !== "applied") throw new Error(`expected a transition, got ${d.outcome}: ${JSON.stringify(d)}`);
  return d;
}

const kinds = (d: Decision) => d.effects.map((e) => e.kind);
const verdict = (
  recovery: Verdict["recovery"],
  klass: Verdict["class"] = "phantom",
  evidence: Record<string, unknown> = { why: "w" },
): Verdict => ({ class: klass, recovery, evidence });
const classified = (v: Verdict, extra: Partial<Extract<TaskEvent, { kind: "run-classified" }>> = {}): TaskEvent => ({
  kind: "run-classified",
  runId: "r1",
  verdict: v,
  ...extra,
});
const ENDED = { state: "exited" as const };

describe("the lease fence", () => {
  test.each([
    ["the lease's epoch, live run", {}, "e1", "applied", null],
    ["another epoch", {}, "e9", "refused", "stale-epoch"],
    ["an expired run", { run: { state: "expired" as const } }, "e1", "refused", "expired"],
    [
      "a revoked run",
      { run: { state: "revoked" as const, endReason: "issue closed by alice" } },
      "e1",
      "refused",
      "revoked",
    ],
    ["a run the task no longer holds", { task: { runId: "r2" } }, "e1", "refused", "superseded"],
  ])("heartbeat with %s", (_name, over, epoch, outcome, reason) => {
    const d = decide(ctx("claimed", over), { kind: "heartbeat", runId: "r1", leaseEpoch: epoch });
    expect(d.outcome).toBe(outcome);
    if (d.outcome === "refused") expect(d.reason).toBe(reason);
  });

  test("a renewal extends the lease by the repository's leaseSeconds and writes no label", () => {
    const d = applied(
      decide(ctx("claimed", { config: config({ limits: { leaseSeconds: 120 } }) }), {
        kind: "heartbeat",
        runId: "r1",
        leaseEpoch: "e1",
      }),
    );
    expect(d.task.leaseExpiresAt).toEqual(new Date(NOW.getTime() + 120_000));
    expect(d.fence).toEqual({ runId: "r1", leaseEpoch: "e1" });
    expect(d.effects).toEqual([]);
  });
});

describe("an exit for a run that already exited", () => {
  const exit: TaskEvent = {
    kind: "run-exited",
    runId: "r1",
    leaseEpoch: "e1",
    report: { leaseEpoch: "e1", exitCode: 1 },
    pr: null,
  };
  const exited = {
    state: "exited" as const,
    class: "debris-empty" as const,
    endReason: "exited 1 without a pull request",
  };
  test.each<[string, State, Parameters<typeof ctx>[1], string]>([
    // Its recovery not run yet, or run already (the task requeued): the same answer either way.
    ["the task still claimed", "claimed", { task: { runId: "r1" }, run: exited }, "exited"],
    ["the task requeued by its recovery", "queued", { task: { runId: null }, run: exited }, "exited"],
    [
      "a successor claimed since",
      "claimed",
      {
        task: { runId: "r2" },
        run: exited,
        runs: [
          { ...exampleRun("exited"), ...exited },
          { ...exampleRun("live"), id: "r2", startedAt: new Date(NOW.getTime() + 1) },
        ],
      },
      "superseded",
    ],
  ])("%s (the task %s): refused %s", (_n, state, over, reason) => {
    const d = decide(ctx(state, over), exit);
    expect(d).toMatchObject({ outcome: "refused", reason });
  });
});

describe("usage is a running total per run", () => {
  test.each([
    [
      { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      { inputTokens: 100, outputTokens: 10, costUsd: 0.5 },
      { inputTokens: 100, outputTokens: 10, costUsd: 0.5 },
    ],
    [
      { inputTokens: 100, outputTokens: 10, costUsd: 0.5 },
      { inputTokens: 150, outputTokens: 30, costUsd: 0.75 },
      { inputTokens: 50, outputTokens: 20, costUsd: 0.25 },
    ],
    // A retried or reordered report never takes usage back.
    [
      { inputTokens: 150, outputTokens: 30, costUsd: 0.75 },
      { inputTokens: 100, outputTokens: 10, costUsd: 0.5 },
      { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    ],
  ])("run had %j, reports %j → the task gains %j", (had, reported, gained) => {
    const d = applied(
      decide(ctx("claimed", { run: had }), { kind: "heartbeat", runId: "r1", leaseEpoch: "e1", usage: reported }),
    );
    expect(d.task.usage).toEqual(gained);
    expect(d.run?.patch).toMatchObject({ costUsd: Math.max(had.costUsd, reported.costUsd) });
  });
});

describe("claims", () => {
  test("run N+1 under a new epoch, the in-progress label, the lease from config", () => {
    const d = applied(
      decide(ctx("queued", { task: { attempt: 2 } }), {
        kind: "claim",
        mode: "worker",
        runId: "r9",
        leaseEpoch: "e9",
        workerId: "w",
      }),
    );
    expect(d).toMatchObject({
      to: "claimed",
      label: "agent:in-progress",
      newRun: { id: "r9", attempt: 3, leaseEpoch: "e9", mode: "worker" },
      task: { attempt: 3, runId: "r9", leaseEpoch: "e9", workerId: "w" },
    });
    expect(kinds(d)).toEqual(["label"]);
    // The interlock label goes before every other write of the installation.
    expect(d.effects.map((e) => [e.kind, laneOf(e)])).toEqual([["label", LANES.indexOf("interlock")]]);
  });
  test("the repository's own in-progress label is the interlock; the label of a task leaving claimed is ownership", () => {
    const labels = config({ labels: { inProgress: "bot:working" } });
    const claim = applied(
      decide(ctx("queued", { config: labels }), {
        kind: "claim",
        mode: "worker",
        runId: "r9",
        leaseEpoch: "e9",
        workerId: "w",
      }),
    );
    expect(claim.effects.map((e) => [e.payload, laneOf(e)])).toEqual([
      [expect.objectContaining({ label: "bot:working" }), LANES.indexOf("interlock")],
    ]);
    const closed = applied(
      decide(ctx("claimed", { config: labels }), { kind: "issue-closed", actor: "alice", completed: false }),
    );
    expect(closed.effects.filter((e) => e.kind === "label").map((e) => laneOf(e))).toEqual([
      LANES.indexOf("ownership"),
    ]);
  });
  test.each([
    ["backing off", { task: { backoffUntil: new Date(NOW.getTime() + 1000) } }, "worker", "backing-off"],
    [
      "a worker in a dispatch-mode repository",
      { config: config({ dispatch: { workflow: "agent.yml" } }) },
      "worker",
      "dispatch-mode",
    ],
    ["a dispatch where none is configured", {}, "dispatch", "illegal"],
  ] as const)("refused when %s", (_n, over, mode, reason) => {
    const d = decide(ctx("queued", over), { kind: "claim", mode, runId: "r9", leaseEpoch: "e9", workerId: null });
    expect(d).toMatchObject({ outcome: "refused", reason });
  });
  test("a dispatch claim records the workflow dispatch with the run's inputs", () => {
    const d = applied(
      decide(
        ctx("queued", {
          task: { continuation: { kind: "resume" } },
          config: config({ dispatch: { workflow: "agent.yml", ref: "dev" } }),
        }),
        { kind: "claim", mode: "dispatch", runId: "r9", leaseEpoch: "e9", workerId: null },
      ),
    );
    const dispatch = d.effects.find((e) => e.kind === "dispatch");
    expect(dispatch).toEqual({
      kind: "dispatch",
      key: "dispatch:r9",
      runId: "r9",
      payload: {
        workflow: "agent.yml",
        ref: "dev",
        inputs: {
          task: "t1",
          run: "r9",
          attempt: "2",
          lease_epoch: "e9",
          branch: "agent/issue-12",
          continuation: '{"kind":"resume"}',
        },
      },
    });
  });
});

describe("a refused dispatch", () => {
  const refuse = (backoffCount: number, why = "422 Workflow does not have 'workflow_dispatch' trigger") =>
    applied(
      decide(ctx("claimed", { task: { backoffCount, workerId: null } }), {
        kind: "dispatch-refused",
        runId: "r1",
        why,
      }),
    );
  test.each([
    [0, 60_000],
    [1, 120_000],
    [6, 3_600_000],
  ])("after %i earlier refusals backs off %i ms, uncharged", (count, ms) => {
    const d = refuse(count);
    expect(d).toMatchObject({
      to: "queued",
      task: { attempt: 0, backoffCount: count + 1, backoffUntil: new Date(NOW.getTime() + ms), runId: null },
    });
    expect(d.run).toMatchObject({ id: "r1", patch: { state: "aborted", error: { class: "preparation" } } });
  });
  test("one comment per distinct error, however many times (numbers in it do not count)", () => {
    const key = (why: string) => refuse(0, why).effects.find((e) => e.kind === "comment")!.key;
    expect(key("run 12345 refused")).toBe(key("run 67890 refused"));
    expect(key("run 12345 refused")).not.toBe(key("workflow not found"));
  });
});

describe("a run's class and the one recovery it names", () => {
  const max3 = config({ limits: { maxAttempts: 3 } });
  test.each([
    ["delete-branch-requeue, attempts left", verdict("delete-branch-requeue"), 1, "queued", ["label", "delete-branch"]],
    [
      "delete-branch-requeue, attempts spent",
      verdict("delete-branch-requeue"),
      3,
      "failed",
      ["label", "delete-branch", "comment"],
    ],
    ["hold-resume, attempts left", verdict("hold-resume", "debris-half-done"), 1, "queued", ["label"]],
    ["hold-resume, attempts spent", verdict("hold-resume", "debris-half-done"), 3, "blocked", ["label", "comment"]],
    ["publish", verdict("publish", "debris-publishable"), 1, "claimed", ["create-pull"]],
    ["escalate", verdict("escalate", "turn-cap-spinning"), 1, "blocked", ["label", "comment"]],
    [
      "block-question",
      verdict("block-question", "question", { question: "Which API?" }),
      1,
      "blocked",
      ["label", "comment"],
    ],
  ] as const)("%s", (_n, v, attempt, to, effects) => {
    const d = applied(decide(ctx("claimed", { task: { attempt }, run: ENDED, config: max3 }), classified(v)));
    expect(d.to).toBe(to);
    expect(kinds(d)).toEqual(effects);
    expect(d.run?.patch).toMatchObject({ class: v.class, recovery: v.recovery });
    // The class is recorded with the move; only publishing waits for its outcome.
    expect(d.run?.patch.recoveredAt !== undefined).toBe(v.recovery !== "publish");
  });

  test("continuations: hold-resume queues a resume on the same branch", () => {
    const d = applied(decide(ctx("claimed", { run: ENDED }), classified(verdict("hold-resume", "debris-half-done"))));
    expect(d.task.continuation).toEqual({ kind: "resume" });
  });

  test("a question is recorded as a decision, once per run", () => {
    const d = applied(
      decide(
        ctx("claimed", { run: ENDED }),
        classified(verdict("block-question", "question", { question: "Which API?" })),
      ),
    );
    expect(d.decisions).toEqual([
      expect.objectContaining({ kind: "question", body: "Which API?", source: "question:r1" }),
    ]);
  });

  test("the attempts-spent comment lists every attempt with its class", () => {
    const earlier = {
      ...exampleRun("exited", "phantom"),
      id: "r0",
      attempt: 1,
      endReason: "exited 0 without a pull request",
    };
    const now = { ...exampleRun("expired"), attempt: 2, endReason: "lease expired without an exit" };
    const d = applied(
      decide(
        ctx("claimed", {
          task: { attempt: 2 },
          run: { ...now },
          runs: [earlier, now],
          config: config({ limits: { maxAttempts: 2 } }),
        }),
        classified(verdict("delete-branch-requeue", "debris-empty")),
      ),
    );
    const body = (d.effects.find((e) => e.kind === "comment")!.payload as { body: string }).body;
    expect(body).toContain("attempt 1: exited 0 without a pull request — phantom");
    expect(body).toContain("attempt 2: lease expired without an exit — debris-empty");
  });

  test("settle needs the merge: done with a receipt binding it to the run", () => {
    const merge = { prNumber: 7, mergeSha: "m", headSha: "h", mergedAt: NOW };
    expect(
      decide(ctx("claimed", { run: ENDED }), classified(verdict("settle", "merged", { pr: { number: 7 } }))),
    ).toMatchObject({ outcome: "unchanged" });
    const d = applied(
      decide(ctx("claimed", { run: ENDED }), classified(verdict("settle", "merged", { pr: { number: 7 } }), { merge })),
    );
    expect(d).toMatchObject({ to: "done", label: null, receipt: { runId: "r1", prNumber: 7, mergeSha: "m" } });
  });

  test.each([
    ["the task moved on to another run", { task: { runId: "r2" }, run: ENDED }],
    ["the run is still live", {}],
    ["the run already has its class", { run: { ...ENDED, class: "phantom" } }],
  ])("nothing is owed when %s", (_n, over) => {
    const d = decide(ctx("claimed", over), classified(verdict("delete-branch-requeue")));
    expect(d).toMatchObject({ outcome: "unchanged", effects: [] });
  });
});

describe("the model budget", () => {
  const budget = config({ limits: { maxCostUsd: 5 } });
  test.each([
    [4.99, "queued", ["label", "delete-branch"]],
    [5, "blocked", ["label", "delete-branch", "comment"]],
    [12, "blocked", ["label", "delete-branch", "comment"]],
  ] as const)("spent $%d of $5: a run that would re-queue goes %s", (spent, to, effects) => {
    const d = applied(
      decide(
        ctx("claimed", { task: { costUsd: spent }, run: ENDED, config: budget }),
        classified(verdict("delete-branch-requeue")),
      ),
    );
    expect(d.to).toBe(to);
    expect(kinds(d)).toEqual(effects);
    if (to === "blocked") expect(d.effects.find((e) => e.kind === "comment")!.key).toBe("budget:r1");
  });
  test("no budget configured: never blocked for spend", () => {
    expect(
      applied(
        decide(ctx("claimed", { task: { costUsd: 1e6 }, run: ENDED }), classified(verdict("delete-branch-requeue"))),
      ).to,
    ).toBe("queued");
  });
});

describe("closing the issue", () => {
  test.each([
    [true, null, "done"],
    [false, null, "cancelled"],
    [false, 7, "done"],
  ])("completed %s with PR %s → %s, lease revoked, labels cleared", (completed, prNumber, to) => {
    const d = applied(
      decide(ctx("claimed", { task: { prNumber } }), { kind: "issue-closed", actor: "alice", completed }),
    );
    expect(d).toMatchObject({
      to,
      label: null,
      task: { runId: null, leaseEpoch: null },
      run: { id: "r1", patch: { state: "revoked", endReason: "issue closed by alice" } },
    });
    expect(d.effects.find((e) => e.kind === "label")!.payload).toMatchObject({
      label: null,
      others: ["agent:queued", "agent:in-progress", "agent:review", "agent:blocked", "agent:failed"],
    });
  });
});

describe("merges", () => {
  test("the receipt binds the merge to the run that submitted the PR", () => {
    const submitter = { ...exampleRun("review"), id: "r0", attempt: 1, prNumber: 7 };
    const later = { ...exampleRun("exited"), id: "r1", attempt: 2 };
    const d = applied(
      decide(ctx("review", { runs: [submitter, later] }), {
        kind: "pr-merged",
        merge: { prNumber: 7, mergeSha: "m", headSha: "h", mergedAt: NOW },
      }),
    );
    expect(d.receipt).toMatchObject({ runId: "r0", prNumber: 7 });
  });
  test.each([
    [
      "the repository keeps merged branches",
      {},
      [["delete-merged-branch", { branch: "agent/7-x", pr: 7, headSha: "h" }]],
    ],
    ["GitHub's delivery says the repository deletes them itself", { deletesBranch: true as const }, []],
  ])("%s: the submitted branch's delete", (_name, fact, deletes) => {
    const submitter = { ...exampleRun("review"), id: "r0", attempt: 1, prNumber: 7, branch: "agent/7-x" };
    const d = applied(
      decide(ctx("review", { runs: [submitter] }), {
        kind: "pr-merged",
        merge: { prNumber: 7, mergeSha: "m", headSha: "h", mergedAt: NOW, ...fact },
      }),
    );
    expect(d.to).toBe("done");
    expect(d.effects.filter((e) => e.kind === "delete-merged-branch").map((e) => [e.kind, e.payload])).toEqual(deletes);
  });
});
