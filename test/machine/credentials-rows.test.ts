/**
 * Brokered credentials end with the lease: every event that ends the live
 * lease of a brokered run records one `revoke-credentials` effect for it,
 * whichever row ended it; nothing else does (a hand list, checked against
 * every example event on a claimed task).
 */
import { DEFAULT_CONFIG } from "../../src/config/repo.js";
import type { Context } from "../../src/machine/decision.js";
import { EVENT_KINDS, type EventKind } from "../../src/machine/events.js";
import { EXAMPLE_EVENTS, exampleContext } from "../../src/machine/examples.js";
import { decide } from "../../src/machine/table.js";

function brokered(kind: EventKind): Context {
  const ctx = exampleContext("claimed", kind);
  const run = ctx.run ? { ...ctx.run, credentials: "broker" as const } : null;
  return { ...ctx, run, runs: run ? [run] : [] };
}

/** The example events that end a claimed task's live lease. */
const ENDS_LEASE: ReadonlySet<EventKind> = new Set<EventKind>([
  "issue-closed",
  "lease-expired",
  "lease-stalled",
  "worker-revoked",
  "run-released",
  "run-exited",
  "pr-opened",
  "pr-merged",
  "dispatch-refused",
  "decision-requested",
  "installation-removed",
  "access-lost",
]);

describe("revoke-credentials", () => {
  test.each(EVENT_KINDS.map((k) => [k]))("%s on a claimed task with a brokered live run", (kind) => {
    const ctx = brokered(kind);
    const d = decide(ctx, EXAMPLE_EVENTS[kind]);
    const revokes = d.effects.filter((e) => e.kind === "revoke-credentials");
    if (ENDS_LEASE.has(kind) && ctx.run?.state === "live") {
      expect(revokes).toEqual([
        { kind: "revoke-credentials", key: "revoke-credentials:r1", payload: { why: expect.any(String) }, runId: "r1" },
      ]);
    } else expect(revokes).toEqual([]);
  });

  test("orchestra cancel and hold end the lease; retry and status leave it", () => {
    for (const command of ["cancel", "hold", "retry", "status"] as const) {
      const d = decide(brokered("command"), { ...EXAMPLE_EVENTS.command, command });
      const revoked = d.effects.some((e) => e.kind === "revoke-credentials");
      expect([command, revoked]).toEqual([command, command === "cancel" || command === "hold"]);
    }
  });

  test("a run that was handed no tokens revokes nothing", () => {
    for (const kind of ENDS_LEASE) {
      const d = decide(exampleContext("claimed", kind), EXAMPLE_EVENTS[kind]);
      expect(d.effects.map((e) => e.kind)).not.toContain("revoke-credentials");
    }
  });

  test("a worker's claim is brokered unless the repository says credentials: none; a dispatched run never is", () => {
    const queued = (config = DEFAULT_CONFIG): Context => ({ ...exampleContext("queued", "claim"), config });
    const claim = EXAMPLE_EVENTS.claim;
    const newRun = (ctx: Context, e = claim) => {
      const d = decide(ctx, e);
      if (d.outcome !== "applied") throw new Error(d.outcome);
      return d.newRun;
    };
    expect(newRun(queued())).toMatchObject({ credentials: "broker" });
    expect(newRun(queued({ ...DEFAULT_CONFIG, credentials: "none" }))).not.toHaveProperty("credentials");
    const dispatch = { ...DEFAULT_CONFIG, dispatch: { workflow: "agent.yml", ref: "main", leaseSeconds: 600 } };
    expect(newRun(queued(dispatch), { ...claim, mode: "dispatch", workerId: null })).not.toHaveProperty("credentials");
  });
});
