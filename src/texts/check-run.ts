/**
 * What the Orchestra check run on an agent's PR head says: the task, its
 * attempt, each run with its class, recovery and evidence, the reruns used
 * on this head, the continuation it waits on, and the completion receipt
 * once merged. It is `neutral` while work is open and `success` when the
 * task is done: it informs, it never blocks a merge by itself.
 */
import type { Continuation } from "../machine/model.js";

export interface CheckRunTask {
  id: string;
  issue: number;
  state: string;
  attempt: number;
  continuation: Continuation | null;
}

export interface CheckRunRun {
  id: string;
  attempt: number;
  state: string;
  endReason: string | null;
  class: string | null;
  recovery: string | null;
  evidence: string | null;
  startedAt: Date;
}

export interface CheckRunView {
  title: string;
  summary: string;
  conclusion: "neutral" | "success";
}

/** The check run's name on every agent PR head. */
export const CHECK_RUN_NAME = "Orchestra";

function why(evidence: string | null): string | null {
  if (!evidence) return null;
  try {
    const w = (JSON.parse(evidence) as { why?: unknown }).why;
    return typeof w === "string" ? w : null;
  } catch {
    return null;
  }
}

export function renderCheckRun(
  task: CheckRunTask,
  runs: CheckRunRun[],
  rerunsUsed: number,
  receipt: { mergeSha: string; runId: string | null } | null,
): CheckRunView {
  const done = task.state === "done";
  const title = done
    ? `Done: merged as ${receipt?.mergeSha.slice(0, 12) ?? "(merge)"}`
    : `Task ${task.state}, ` +
      `attempt ${task.attempt}${task.continuation ? `, continuation ${task.continuation.kind}` : ""}`;
  const lines = [
    `Issue #${task.issue} is managed by Orchestra (task \`${task.id}\`). ` +
      `State: **${task.state}**, attempt ${task.attempt}.`,
    "",
    "| attempt | run | ended | class | recovery | why |",
    "| --- | --- | --- | --- | --- | --- |",
    ...runs.map(
      (r) =>
        `| ${r.attempt} | \`${r.id.slice(0, 8)}\` | ${(r.endReason ?? r.state).replace(/\|/g, "/")} | ` +
        `${r.class ?? ""} | ${r.recovery ?? ""} | ${(why(r.evidence) ?? "").replace(/\|/g, "/").slice(0, 300)} |`,
    ),
    "",
    `Reruns of failed checks on this head: ${rerunsUsed}.`,
  ];
  if (task.continuation && !done)
    lines.push(
      "",
      `Waiting on continuation ` +
        `**${task.continuation.kind}**${task.continuation.reason ? `: ${task.continuation.reason}` : ""}.`,
    );
  if (receipt)
    lines.push(
      "",
      `Completion receipt: ` +
        `merged as \`${receipt.mergeSha}\`${receipt.runId ? `, submitted by run \`${receipt.runId}\`` : ""}.`,
    );
  // Cut to GitHub's limit where it is sent (effects/perform.ts), like every comment.
  const summary = lines.join("\n");
  return { title, summary, conclusion: done ? "success" : "neutral" };
}
