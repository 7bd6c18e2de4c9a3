/**
 * Work that cannot go on by itself, case by case: a recovery that cannot
 * finish, a dispatch GitHub refuses for the whole repository, a repository
 * the App cannot reach for now. Plain contexts, no database, no GitHub.
 */
import type { Applied, Decision } from "../../src/machine/decision.js";
import { contextIn, NOW } from "../../src/machine/examples.js";
import { decide } from "../../src/machine/table.js";
import { refusalScope } from "../../src/outcomes/dispatch-refusal.js";

function applied(d: Decision): Applied {
  if (d.outcome !== "applied") throw new Error(`expected a transition, got ${d.outcome}: ${JSON.stringify(d)}`);
  return d;
}
const comments = (d: Decision) => d.effects.filter((e) => e.kind === "comment");
const ended = (state: "exited" | "expired" | "revoked", klass: string | null = null) =>
  contextIn("claimed", { task: { leaseEpoch: null, leaseExpiresAt: null }, run: { state, class: klass } });

describe("a recovery that cannot finish", () => {
  test.each([
    ["facts", "exited", null],
    ["publish", "exited", "debris-publishable"],
    ["facts", "expired", null],
  ] as const)("%s, run %s: blocked with the diagnostic, one comment, the slot freed", (stage, state, klass) => {
    const why = "compare main...agent/issue-12 found no base";
    const d = applied(decide(ended(state, klass), { kind: "recovery-stuck", runId: "r1", stage, why }));
    expect(d).toMatchObject({ to: "blocked", task: { runId: null, diagnostic: expect.stringContaining(why) } });
    expect(d.run).toMatchObject({ id: "r1", from: [state], patch: { error: { class: "stuck" } } });
    expect(comments(d).map((c) => c.key)).toEqual([`stuck:r1:${stage}`]);
    const body = (comments(d)[0]!.payload as { body: string }).body;
    expect(body).toContain("`orchestra resume`");
    expect(body).not.toMatch(/label/i);
  });

  test.each([
    ["a live run", contextIn("claimed")],
    ["another run", contextIn("claimed", { task: { runId: "r2" }, run: { id: "r2", state: "exited" } })],
    ["a queued task", contextIn("queued")],
  ])("%s is left alone", (_what, ctx) => {
    const d = decide(ctx, { kind: "recovery-stuck", runId: "r1", stage: "facts", why: "x" });
    expect(d.outcome).toBe("unchanged");
  });
});

describe("a dispatch refused for the whole repository", () => {
  const refuse = (breaker?: { opened: boolean; until: Date }) =>
    applied(
      decide(contextIn("claimed", { task: { workerId: null, backoffCount: 2 } }), {
        kind: "dispatch-refused",
        runId: "r1",
        why: "422 Workflow does not have 'workflow_dispatch' trigger",
        scope: "repository",
        ...(breaker ? { breaker } : {}),
      }),
    );
  const until = new Date(NOW.getTime() + 600_000);

  test("queued with no attempt counted and no backoff of its own: the breaker holds it", () => {
    const d = refuse({ opened: false, until });
    expect(d).toMatchObject({ to: "queued", task: { attempt: 0, runId: null } });
    expect(d.task.backoffUntil).toBeUndefined();
    expect(d.task.backoffCount).toBeUndefined();
    expect(d.run).toMatchObject({ patch: { state: "aborted" } });
    expect(comments(d)).toEqual([]);
  });

  test("the refusal that opened the breaker comments once, keyed by the repository and the opening", () => {
    const d = refuse({ opened: true, until });
    expect(comments(d).map((c) => c.key)).toEqual([`dispatch-breaker:acme/app:${until.toISOString()}`]);
  });

  test.each([
    [404, "Not Found", "repository"],
    [422, "Workflow does not have 'workflow_dispatch' trigger", "repository"],
    [422, "Cannot trigger a 'workflow_dispatch' on a disabled workflow", "repository"],
    [422, "No ref found for: main", "repository"],
    [403, "Resource not accessible by integration", "repository"],
    [403, "Actions has been disabled for this repository.", "repository"],
    [422, 'Unexpected inputs provided: ["extra"]', "task"],
    [422, "Required input 'task' not provided", "task"],
    [500, "Server Error", "task"],
    [undefined, "socket hang up", "task"],
  ] as const)("GitHub's %s %s is about the %s", (status, message, scope) => {
    expect(refusalScope(status, message)).toBe(scope);
  });
});

describe("a repository the App cannot reach for now", () => {
  const why = "the App's installation is suspended";

  test("a live run's lease is revoked and the task queued again, uncharged, to resume its branch", () => {
    const d = applied(decide(contextIn("claimed"), { kind: "access-lost", why }));
    expect(d).toMatchObject({
      to: "queued",
      task: {
        attempt: 0,
        runId: null,
        leaseEpoch: null,
        continuation: { kind: "resume" },
        diagnostic: `paused: ${why}`,
      },
    });
    expect(d.run).toMatchObject({ id: "r1", from: ["live"], patch: { state: "revoked", endReason: why } });
    expect(comments(d)).toEqual([]);
  });

  test("a run owed a class is not classified from GitHub: the task is queued again with it unclassified", () => {
    const d = applied(decide(ended("exited"), { kind: "access-lost", why }));
    expect(d).toMatchObject({ to: "queued", task: { attempt: 0 } });
    expect(d.run).toMatchObject({ from: ["exited"], patch: { error: { class: "access" } } });
  });

  test.each(["queued", "review", "blocked", "failed"] as const)("a %s task keeps its state and says why", (state) => {
    const d = applied(decide(contextIn(state), { kind: "access-lost", why }));
    expect(d).toMatchObject({ to: state, task: { diagnostic: `paused: ${why}` } });
    expect(d.effects.filter((e) => e.kind === "label")).toEqual([]);
    const back = decide(contextIn(state, { task: { diagnostic: `paused: ${why}` } }), {
      kind: "access-restored",
      why: "unsuspended",
    });
    expect(applied(back)).toMatchObject({ to: state, task: { diagnostic: null } });
  });

  test("restoring access leaves a diagnostic of something else alone", () => {
    const d = decide(contextIn("queued", { task: { diagnostic: "sweep failed" } }), {
      kind: "access-restored",
      why: "unsuspended",
    });
    expect(d.outcome).toBe("unchanged");
  });
});
