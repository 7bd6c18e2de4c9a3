/**
 * Server-side HTML: a tagged template that escapes every interpolated value
 * unless it is already HTML (another template's result), so no page can
 * carry text from GitHub or a worker as markup.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return "";
  if (Array.isArray(v)) return v.map(render).join("");
  if (v instanceof Html) return v.text;
  return escape(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Markup that is known to be safe (built here, never from input). */
export const raw = (text: string): Html => new Html(text);

/** "in 4 min", "3 h ago": a time relative to now, for people. */
export function relative(at: Date | string | null | undefined, now: Date): string {
  if (!at) return "—";
  const ms = new Date(at).getTime() - now.getTime();
  const abs = Math.abs(ms);
  const text =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 172_800_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** An ISO time in a <time> element, shown relative to now. */
export function time(at: Date | string | null | undefined, now: Date): Html {
  if (!at) return html`<span class="muted">—</span>`;
  const iso = new Date(at).toISOString();
  return html`<time datetime="${iso}" title="${iso}">${relative(at, now)}</time>`;
}

/** GitHub's web address from the API address the App uses (GHE_HOST's, or github.com's). */
export function webOf(apiBaseUrl: string | undefined): string {
  return apiBaseUrl ? apiBaseUrl.replace(/\/api\/v3\/?$/, "") : "https://github.com";
}
