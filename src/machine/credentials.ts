/**
 * Brokered credentials end with the lease. A lease ends by many rows (an
 * exit, expiry, a stall, a revoked worker, a closed issue, a cancel, a PR
 * that moved the task on); rather than each row remembering to revoke, every
 * applied decision that ends the live lease of a run whose worker was handed
 * tokens records one `revoke-credentials` effect for that run, in the same
 * transaction as the transition. A superseded worker's push is then refused
 * by GitHub, not only by Orchestra.
 */
import type { Context, Decision, RunView } from "./decision.js";
import { effect } from "./effects.js";

/** The run holding the task's live lease before the decision, when its worker holds brokered tokens. */
function brokeredHolder(ctx: Context): RunView | null {
  const task = ctx.task;
  if (!task?.runId) return null;
  const run = [ctx.run, ...ctx.runs].find((r) => r?.id === task.runId && r.state === "live");
  return run?.credentials === "broker" ? run : null;
}

/** The decision, with the revocation of the holder's tokens when it ends the holder's lease. */
export function withRevocation(ctx: Context, d: Decision): Decision {
  if (d.outcome !== "applied") return d;
  const run = brokeredHolder(ctx);
  if (!run) return d;
  const runPatch = d.run?.id === run.id ? d.run.patch : undefined;
  const runEnds = runPatch?.state !== undefined && runPatch.state !== "live";
  const leaseGone = d.task.leaseEpoch === null || (d.task.runId !== undefined && d.task.runId !== run.id);
  if (!runEnds && !leaseGone) return d;
  const why = runPatch?.endReason ?? d.summary;
  return {
    ...d,
    effects: [...d.effects, effect("revoke-credentials", `revoke-credentials:${run.id}`, { why }, run.id)],
  };
}
