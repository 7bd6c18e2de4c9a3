/** The fleet overview page: counts, charts, queue, leases, review and done, blocked, failed, parked. */
import { html, time, type Html } from "./html.js";
import {
  duration,
  issueLink,
  layout,
  postButton,
  pullLink,
  stateBadge,
  table,
  taskLink,
  type PageContext,
} from "./layout.js";
import { stackedBars } from "./charts.js";
import { DONE_LISTED, LISTED, QUEUE_READ, type FleetOverview, type SubmittedTask } from "../views/fleet.js";
import type { HourSeries } from "../views/activity.js";
import { TASK_STATES } from "../machine/model.js";
import { healthSection, type Health } from "./health.js";

export interface OverviewData {
  fleet: FleetOverview;
  runs: HourSeries;
  calls: HourSeries;
  health: Health;
}

/** Markdown emphasis and code marks taken out of a line written for a GitHub comment. */
const plain = (line: string): string => line.replace(/\*\*|`/g, "");

/** The line under a list cut at LISTED: how many more, and the command that lists them all. */
const more = (total: number, state: string): Html => {
  const command = html`<code>orchestra tasks --state ${state}</code>`;
  return total > LISTED
    ? html`<p class="muted">and ${total - LISTED} more ${state}: ${command} lists them</p>`
    : html``;
};

/** Tasks in review or done: the issue, the task, its pull request, and when it last changed. */
const submitted = (ctx: PageContext, caption: string, tasks: SubmittedTask[], empty: string): Html =>
  table(
    caption,
    ["Issue", "Task", "Pull request", "Attempt", "Updated"],
    tasks.map((t) => {
      const task = html`<td>${issueLink(ctx, t.repo, t.issue)}</td><td>${taskLink(t)}</td>`;
      const pr = html`<td>${pullLink(ctx, t.repo, t.prNumber)}</td><td class="num">${t.attempt}</td>`;
      return html`<tr>${task}${pr}<td>${time(t.updatedAt, ctx.now)}</td></tr>`;
    }),
    empty,
  );

const lastError = (errors: Array<{ message: string }>): string => errors.at(-1)?.message ?? "";

export function overviewPage(ctx: PageContext, d: OverviewData): Html {
  const f = d.fleet;
  const queued = f.queue.reduce((n, r) => n + r.tasks.length + r.more, 0);
  const runs = stackedBars("Runs by class", d.runs, "runs");
  const calls = stackedBars("GitHub calls per hour", d.calls, "calls");
  return layout(
    ctx,
    "Fleet",
    html`
<section aria-labelledby="counts-h">
  <h2 id="counts-h">Tasks</h2>
  <ul class="tiles">${TASK_STATES.map((s) => html`<li>${stateBadge(s)}<b>${f.counts[s] ?? 0}</b></li>`)}
    <li>parked<b>${f.parked.deliveries.length + f.parked.effects.length}</b></li></ul>
</section>

${healthSection(ctx, d.health)}

<section aria-labelledby="charts-h">
  <h2 id="charts-h">Activity</h2>
  <div class="charts">${runs}${calls}</div>
</section>

<section aria-labelledby="queue-h">
  <h2 id="queue-h">Queue <span class="muted">(${queued}, in claim order)</span></h2>
  ${
    f.queue.length === 0
      ? html`<p class="empty">Nothing is queued.</p>`
      : f.queue.map(
          (r) => html`<h3>${r.repo}</h3>
  ${table(
    `Queue of ${r.repo}`,
    ["#", "Issue", "Task", "Attempt", "Queued", "Waiting for"],
    r.tasks.map((t, i) => {
      const task = html`<td>${issueLink(ctx, t.repo, t.issue)}</td><td>${taskLink(t)}</td>`;
      const attempt = html`<td class="num">${t.attempt}</td><td>${time(t.queuedAt, ctx.now)}</td>`;
      const waiting = t.waitingFor
        ? html`<b>${t.waitingFor.gate}</b>: ${t.waitingFor.detail}${
            t.waitingFor.until ? html` (until ${time(t.waitingFor.until, ctx.now)})` : html``
          }`
        : html`<span class="muted">next to be claimed</span>`;
      return html`<tr><td class="num">${i + 1}</td>${task}${attempt}
      <td>${waiting}</td></tr>`;
    }),
    "",
  )}
  ${
    r.more
      ? html`<p class="muted">${
          r.tasks.length
            ? `and ${r.more} more`
            : `${r.more} queued, all later in claim order than the first ${QUEUE_READ} of the fleet`
        }: <code>orchestra tasks --repo ${r.repo} --state queued</code> lists them</p>`
      : html``
  }`,
        )
  }
</section>

<section aria-labelledby="leases-h">
  <h2 id="leases-h">Live leases <span class="muted">(${Math.max(f.counts["claimed"] ?? 0, f.leases.length)})</span></h2>
  ${table(
    "Live leases",
    ["Issue", "Task", "Worker", "Run", "Step", "Time left"],
    f.leases.map((l) => {
      const worker = l.workerId
        ? html`${l.workerName ?? "(removed)"} <span class="muted">${l.workerId.slice(0, 8)}</span>`
        : "dispatched";
      const step = l.step ?? html`<span class="muted">—</span>`;
      const run = html`<td><code>${l.runId ?? ""}</code></td><td>${step}</td>`;
      const left = l.secondsLeft > 0 ? duration(l.secondsLeft) : html`<b>expired</b> ${duration(-l.secondsLeft)} ago`;
      return html`<tr><td>${issueLink(ctx, l.repo, l.issue)}</td><td>${taskLink(l)}</td><td>${worker}</td>${run}
      <td>${left}</td></tr>`;
    }),
    "No run holds a lease.",
  )}
  ${more(f.counts["claimed"] ?? 0, "claimed")}
</section>

<section aria-labelledby="review-h">
  <h2 id="review-h">In review <span class="muted">(${Math.max(f.counts["review"] ?? 0, f.review.length)})</span></h2>
  ${submitted(ctx, "Tasks in review", f.review, "No pull request is in review.")}
  ${more(f.counts["review"] ?? 0, "review")}
</section>

<section aria-labelledby="done-h">
  <h2 id="done-h">Done lately <span class="muted">(${f.counts["done"] ?? 0} done)</span></h2>
  ${submitted(ctx, "Tasks done lately", f.done, "Nothing is done yet.")}
  ${
    (f.counts["done"] ?? 0) > f.done.length
      ? html`<p class="muted">the last ${DONE_LISTED}: <code>orchestra tasks --state done</code> lists them all</p>`
      : html``
  }
</section>

<section aria-labelledby="blocked-h">
  <h2 id="blocked-h">Blocked <span class="muted">(${Math.max(f.counts["blocked"] ?? 0, f.blocked.length)})</span></h2>
  ${table(
    "Blocked tasks",
    ["Issue", "Task", "Waiting on a human for"],
    f.blocked.map(
      (b) =>
        html`<tr><td>${issueLink(ctx, b.repo, b.issue)}</td><td>${taskLink(b)}</td><td>${
          b.question
            ? html`<b>question</b> from ${
                b.question.author.startsWith("run:") ? "the agent" : b.question.author
              } ${time(b.question.askedAt, ctx.now)}: ${b.question.body}`
            : plain(b.why)
        }</td></tr>`,
    ),
    "Nothing is blocked.",
  )}
  ${more(f.counts["blocked"] ?? 0, "blocked")}
</section>

<section aria-labelledby="failed-h">
  <h2 id="failed-h">Failed <span class="muted">(${Math.max(f.counts["failed"] ?? 0, f.failed.length)})</span></h2>
  ${table(
    "Failed tasks",
    ["Issue", "Task", "Last class", "Recovery", "Evidence", "Ended"],
    f.failed.map((t) => {
      const task = html`<td>${issueLink(ctx, t.repo, t.issue)}</td><td>${taskLink(t)}</td>`;
      const outcome = html`<td><b>${t.class ?? "—"}</b></td><td>${t.recovery ?? "—"}</td><td>${t.why ?? ""}</td>`;
      return html`<tr>${task}${outcome}<td>${time(t.endedAt, ctx.now)}</td></tr>`;
    }),
    "Nothing failed.",
  )}
  ${more(f.counts["failed"] ?? 0, "failed")}
</section>

<section aria-labelledby="parked">
  <h2 id="parked">Parked</h2>
  <h3>Deliveries</h3>
  ${table(
    "Parked deliveries",
    ["Delivery", "Event", "Attempts", "Received", "Last error", ""],
    f.parked.deliveries.map((p) => {
      const event = html`<td>${p.event}${p.action ? `.${p.action}` : ""}</td><td class="num">${p.attempts}</td>`;
      const received = html`<td>${time(p.receivedAt, ctx.now)}</td><td>${lastError(p.errors)}</td>`;
      const replay = postButton(ctx, `/dashboard/deliveries/${encodeURIComponent(p.deliveryId)}/replay`, "Replay", {
        name: `Replay delivery ${p.deliveryId}`,
      });
      return html`<tr><td><code>${p.deliveryId}</code></td>${event}${received}
      <td>${replay}</td></tr>`;
    }),
    "No delivery is parked.",
  )}
  <h3>Effects</h3>
  ${table(
    "Parked effects",
    ["Effect", "Kind", "Repository", "Task", "Attempts", "Why", ""],
    f.parked.effects.map((e) => {
      const task = e.task
        ? html`<a href="/dashboard/tasks/${encodeURIComponent(e.task)}">${e.task}</a>`
        : html`<span class="muted">—</span>`;
      const why = html`<td class="num">${e.attempts}</td><td>${e.note ?? lastError(e.errors)}</td>`;
      const replay = postButton(ctx, `/dashboard/effects/${encodeURIComponent(e.id)}/replay`, "Replay", {
        name: `Replay effect ${e.id}`,
      });
      return html`<tr><td><code>${e.id}</code></td><td>${e.kind}</td><td>${e.repo}</td><td>${task}</td>${why}
      <td>${replay}</td></tr>`;
    }),
    "No effect is parked.",
  )}
</section>`,
  );
}
