/** One task: facts and links, the operator's actions, runs, decisions, effects, and the cost ledger. */
import { html, time, type Html } from "./html.js";
import {
  duration,
  folded,
  issueLink,
  layout,
  postButton,
  pullLink,
  stateBadge,
  table,
  type PageContext,
} from "./layout.js";
import type { TaskDetail } from "../views/task-detail.js";
import { TASK_ACTIONS } from "../human/actions.js";
import { describeEffect, type EffectSpec } from "../machine/effects.js";

const ACTION_HELP: Record<(typeof TASK_ACTIONS)[number], string> = {
  retry: "queue it again with a fresh attempt budget",
  resume: "queue it again, continuing the work on its branch",
  hold: "stop it (a live run is told to stop) and mark it blocked",
  cancel: "stop it and take it off the queue",
};

const ring = (errors: Array<{ at: string; class?: string; message: string; count?: number }>): Html => {
  const items = errors.map((e) => {
    const label = e.class ? html`<b>${e.class}</b> ` : html``;
    const count = e.count && e.count > 1 ? html` <span class="muted">×${e.count}</span>` : html``;
    return html`<li><time datetime="${e.at}">${e.at}</time> ${label}${e.message}${count}</li>`;
  });
  const summary = html`<summary>${errors.length} error${errors.length === 1 ? "" : "s"}</summary>`;
  return errors.length === 0
    ? html`<span class="muted">—</span>`
    : html`<details>${summary}<ul>${items}</ul></details>`;
};

export function taskPage(ctx: PageContext, d: TaskDetail): Html {
  const t = d.task;
  const lease = t.lease;
  let receipt = html``;
  if (d.receipt) {
    const { prNumber, mergedAt, mergeSha, headSha, runId } = d.receipt;
    const shas = html`<code>${mergeSha.slice(0, 12)}</code> from head <code>${headSha.slice(0, 12)}</code>`;
    const by = runId ? html`, submitted by run <code>${runId}</code>` : html``;
    receipt = html`<p>Completion receipt: PR #${prNumber} merged ${time(mergedAt, ctx.now)} at ${shas}${by}.</p>`;
  }
  return layout(
    ctx,
    `${t.repo}#${t.issue}`,
    html`
<h2>${t.title} ${stateBadge(t.state)}</h2>
<dl class="facts">
  <dt>Issue</dt><dd>${issueLink(ctx, t.repo, t.issue)}</dd>
  <dt>Pull request</dt><dd>${pullLink(ctx, t.repo, t.prNumber)}</dd>
  <dt>Task</dt><dd><code>${t.id}</code></dd>
  <dt>Branch</dt><dd><code>${t.branch}</code></dd>
  <dt>Label</dt><dd>${t.label ?? html`<span class="muted">none</span>`}</dd>
  <dt>Attempt</dt><dd>${t.attempt}</dd>
  <dt>Queued</dt><dd>${time(t.queuedAt, ctx.now)}</dd>
  ${
    lease
      ? html`<dt>Lease</dt><dd>run <code>${lease.runId ?? ""}</code> by ${
          lease.workerId ?? "dispatch"
        }, expires ${time(lease.leaseExpiresAt, ctx.now)}</dd>`
      : html``
  }
  ${
    "waitingFor" in t && t.waitingFor
      ? html`<dt>Waiting for</dt><dd><b>${t.waitingFor.gate}</b>: ${t.waitingFor.detail}</dd>`
      : html``
  }
  ${t.diagnostic ? html`<dt>Diagnostic</dt><dd>${t.diagnostic}</dd>` : html``}
  ${t.backoffUntil ? html`<dt>Backoff until</dt><dd>${time(t.backoffUntil, ctx.now)}</dd>` : html``}
</dl>

<section aria-labelledby="actions-h">
  <h2 id="actions-h">Actions</h2>
  <p class="muted">Each is the same as the comment command <code>orchestra &lt;action&gt;</code> by a trusted person:\
 the same rules apply, and a refusal says why.</p>
  <div class="actions">${TASK_ACTIONS.map((a) =>
    postButton(ctx, `/dashboard/tasks/${encodeURIComponent(t.id)}/${a}`, a[0]!.toUpperCase() + a.slice(1), {
      name: `${a[0]!.toUpperCase() + a.slice(1)} this task: ${ACTION_HELP[a]}`,
      danger: a === "cancel",
    }),
  )}</div>
</section>

<section aria-labelledby="runs-h">
  <h2 id="runs-h">Runs <span class="muted">(${d.runs.length})</span></h2>
  ${table(
    "Runs",
    [
      "Attempt",
      "Run",
      "Mode",
      "Worker",
      "State",
      "Started",
      "Duration",
      "Ended because",
      "Class",
      "Recovery",
      "Evidence",
      "Errors",
    ],
    [...d.runs].reverse().map((r) => {
      const run = html`<td class="num">${r.attempt}</td><td><code>${r.id}</code></td><td>${r.mode}</td>`;
      const started = html`<td>${r.workerId ?? "—"}</td><td>${r.state}</td><td>${time(r.startedAt, ctx.now)}</td>`;
      const took = duration(((r.endedAt ?? ctx.now).getTime() - r.startedAt.getTime()) / 1000);
      const ended = html`<td>${r.endReason ?? "—"}</td><td><b>${r.class ?? "—"}</b></td>`;
      const why = typeof r.evidence?.["why"] === "string" ? r.evidence["why"] : "evidence";
      return html`<tr>${run}${started}
      <td>${took}</td>${ended}<td>${r.recovery ?? "—"}</td>
      <td>${folded(why, r.evidence)}</td><td>${ring(r.errors)}</td></tr>`;
    }),
    "No run yet.",
  )}
</section>

<section aria-labelledby="decisions-h">
  <h2 id="decisions-h">Decisions <span class="muted">(${d.decisions.length})</span></h2>
  ${table(
    "Decisions",
    ["Kind", "Subject", "From", "When", "Text", "Handed to runs"],
    d.decisions.map((x) => {
      const stale = "stale" in x && x.stale ? html` <b>stale</b>` : html``;
      const superseded = "supersededAt" in x ? html` <span class="muted">superseded</span>` : html``;
      const unreceipted = x.unreceipted ? html` <b>never receipted</b>` : html``;
      const handed = x.deliveries.length
        ? x.deliveries.map(
            (h) =>
              html`<div><code>${h.runId}</code> ×${h.count}, ${
                h.receiptAt ? html`receipted ${time(h.receiptAt, ctx.now)}` : html`<b>no receipt</b>`
              }</div>`,
          )
        : html`<span class="muted">not yet</span>`;
      return html`<tr><td>${x.kind}${stale}${superseded}${unreceipted}</td>
      <td>${x.subject ?? "—"}</td><td>${x.author}</td><td>${time(x.createdAt, ctx.now)}</td><td>${x.body}</td>
      <td>${handed}</td></tr>`;
    }),
    "No correction, sign-off, answer or question.",
  )}
  ${receipt}
</section>

<section aria-labelledby="effects-h">
  <h2 id="effects-h">Effects on GitHub <span class="muted">(${d.effects.length})</span></h2>
  ${table(
    "Effects",
    ["Kind", "State", "Attempts", "Created", "Done", "What", "Errors", ""],
    [...d.effects].reverse().map((e) => {
      const kind = html`<td>${e.kind}${e.dryRun ? html` <span class="muted">(dry run)</span>` : html``}</td>`;
      const times = html`<td>${time(e.createdAt, ctx.now)}</td><td>${time(e.doneAt, ctx.now)}</td>`;
      const what = folded(describeEffect({ kind: e.kind, key: e.key, payload: e.payload } as EffectSpec), e.payload);
      const note = e.note ? html`<div class="muted">${e.note}</div>` : html``;
      const replay =
        e.state === "parked"
          ? postButton(ctx, `/dashboard/effects/${encodeURIComponent(e.id)}/replay`, "Replay", {
              name: `Replay effect ${e.id}`,
            })
          : html``;
      return html`<tr>${kind}<td>${stateBadge(e.state)}</td><td class="num">${e.attempts}</td>${times}
      <td>${what}${note}</td><td>${ring(e.errors)}</td>
      <td>${replay}</td></tr>`;
    }),
    "No effect yet.",
  )}
</section>

<section aria-labelledby="cost-h">
  <h2 id="cost-h">Cost</h2>
  <dl class="facts">
    <dt>Runs</dt><dd>${d.cost.runs} (attempt ${d.cost.attempts})</dd>
    <dt>Wall time</dt><dd>${duration(d.cost.wallSeconds)}</dd>
    <dt>Model tokens</dt><dd>${d.cost.inputTokens} in, ${d.cost.outputTokens} out</dd>
    <dt>Model spend</dt><dd>$${d.cost.costUsd.toFixed(4)}</dd>
    <dt>GitHub calls</dt><dd>${d.cost.githubCalls} (${d.cost.githubReads} reads, ${d.cost.githubWrites} writes)</dd>
  </dl>
</section>`,
  );
}
