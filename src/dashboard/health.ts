/**
 * The overview's health section: the inbox, the outbox, GitHub's rate limit,
 * the GitHub host and the fallbacks it needs, and reconcile scopes that fail.
 */
import { html, time, type Html } from "./html.js";
import { table, type PageContext } from "./layout.js";
import type { GitHubStanding } from "../metrics/standing.js";
import type { Streak } from "../reconcile/failing.js";
import type { HostReport } from "../github/features.js";

export interface Health {
  deliveries: Record<string, number>;
  effects: Record<string, number>;
  github: GitHubStanding;
  failing: Record<string, Streak>;
  host: HostReport;
}

const NOT_READ = "Not read yet: the host's release is read (GET /meta) with the first blockers of a task.";

const count = (counts: Record<string, number>, key: string) => counts[key] ?? 0;

export function healthSection(ctx: PageContext, h: Health): Html {
  const hour = h.github.callsPerHour.at(-1);
  const failing = Object.entries(h.failing);
  return html`<section aria-labelledby="health-h">
  <h2 id="health-h">Health</h2>
  <ul class="tiles">
    <li>deliveries pending<b>${count(h.deliveries, "pending")}</b></li>
    <li>deliveries retrying<b>${count(h.deliveries, "retrying")}</b></li>
    <li>deliveries parked<b>${count(h.deliveries, "parked")}</b></li>
    <li>effects pending<b>${count(h.effects, "pending") + count(h.effects, "running")}</b></li>
    <li>effects parked<b>${count(h.effects, "parked")}</b></li>
    <li>GitHub calls this hour<b>${hour ? hour.reads + hour.writes : 0}</b></li>
  </ul>
  <h3>GitHub rate limit</h3>
  ${table(
    "GitHub rate limit",
    ["Installation", "Left", "Resets", "Seen"],
    h.github.rateLimits.map((r) => {
      const left = html`<td class="num">${r.remaining}${r.limit === null ? "" : ` of ${r.limit}`}</td>`;
      const times = html`<td>${time(r.resetAt, ctx.now)}</td><td>${time(r.seenAt, ctx.now)}</td>`;
      return html`<tr><td>${r.installation}</td>${left}${times}</tr>`;
    }),
    "Not seen yet: no GitHub answer since this replica started.",
  )}
  <h3>GitHub host</h3>
  <p>${h.host.version ? h.host.host : NOT_READ}</p>
  ${table(
    "Features this GitHub host lacks",
    ["Feature", "Fallback", "Found", "Since"],
    h.host.gaps.map((g) => {
      const cells = html`<td>${g.fallback}</td><td>${g.evidence}</td><td>${time(g.since, ctx.now)}</td>`;
      return html`<tr><td>${g.title}</td>${cells}</tr>`;
    }),
    h.host.version ? "None: every feature Orchestra uses is there." : "None found so far.",
  )}
  <h3>Reconcile</h3>
  ${table(
    "Failing reconcile scopes",
    ["Scope", "Failing since", "Runs", "Escalated", "Error"],
    failing.map(([scope, f]) => {
      const escalated = f.escalatedAt ? time(f.escalatedAt, ctx.now) : "no";
      const cells = html`<td>${time(f.since, ctx.now)}</td><td class="num">${f.runs}</td><td>${escalated}</td>`;
      return html`<tr><td>${scope}</td>${cells}<td>${f.error}</td></tr>`;
    }),
    "Every repository and installation was read by the last reconcile.",
  )}
</section>`;
}
