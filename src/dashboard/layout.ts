/** The frame every dashboard page shares, and the small pieces the pages are built from. */
import { html, type Html } from "./html.js";

export interface PageContext {
  now: Date;
  /** The CSRF token of the signed-in session (null on the sign-in page). */
  csrf: string | null;
  /** GitHub's web address (https://github.com, or the GHE host). */
  web: string;
  notice?: string | null;
  error?: string | null;
}

export function layout(ctx: PageContext, title: string, body: Html): Html {
  const asOf = ctx.now.toISOString().slice(0, 19).replace("T", " ");
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Orchestra</title>
<link rel="stylesheet" href="/dashboard/assets/style.css">
</head>
<body>
<header class="top">
  <h1>Orchestra</h1>
  ${
    ctx.csrf
      ? html`<nav aria-label="Dashboard"><a href="/dashboard">Fleet</a><a href="/dashboard#parked">Parked</a></nav>
  <span class="muted">as of <time datetime="${ctx.now.toISOString()}">${asOf} UTC</time></span>
  ${postButton(ctx, "/dashboard/sign-out", "Sign out")}`
      : html``
  }
</header>
<main>
${ctx.notice ? html`<p class="notice" role="status">${ctx.notice}</p>` : html``}
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : html``}
${body}
</main>
</body>
</html>`;
}

/** A button that posts to `action` with the session's CSRF token; `label` is also its accessible name. */
export function postButton(
  ctx: PageContext,
  action: string,
  label: string,
  opts: { name?: string; danger?: boolean } = {},
): Html {
  const csrf = html`<input type="hidden" name="csrf" value="${ctx.csrf ?? ""}">`;
  const danger = opts.danger ? html` class="danger"` : html``;
  const name = opts.name ? html` aria-label="${opts.name}"` : html``;
  const button = html`<button type="submit"${danger}${name}>${label}</button>`;
  return html`<form class="inline" method="post" action="${action}">${csrf}${button}</form>`;
}

export const stateBadge = (state: string): Html => html`<span class="state state-${state}">${state}</span>`;

export function issueLink(ctx: PageContext, repo: string, issue: number): Html {
  return html`<a href="${ctx.web}/${repo}/issues/${issue}">${repo}#${issue}</a>`;
}

export function pullLink(ctx: PageContext, repo: string, pr: number | null): Html {
  if (pr === null) return html`<span class="muted">—</span>`;
  return html`<a href="${ctx.web}/${repo}/pull/${pr}">PR #${pr}</a>`;
}

export function taskLink(t: { id: string; title: string }): Html {
  return html`<a href="/dashboard/tasks/${encodeURIComponent(t.id)}">${t.title || t.id}</a>`;
}

/** A section's table, or one line saying there is nothing to show. */
export function table(caption: string, head: string[], rows: Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  const heads = head.map((h) => html`<th scope="col">${h}</th>`);
  return html`<table aria-label="${caption}"><thead><tr>${heads}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** JSON for people, folded: a summary line that opens to the whole document. */
export function folded(summary: string, value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  return html`<details><summary>${summary}</summary><pre>${JSON.stringify(value, null, 2)}</pre></details>`;
}

/** Seconds as "4 min 10 s", "2 h 5 min". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
