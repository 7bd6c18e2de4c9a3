/**
 * What every API verb of the CLI shares: the call to the service (with the
 * failure said once, in the operator's terms), and the two ways of printing
 * an answer: the API's JSON for scripts, an aligned table for people.
 *
 * Exit codes: 0 done, 1 the service or the database failed (what happened and
 * what to do on stderr), 2 the command line or a setting is wrong.
 */
import { maskUrl, scrub, secretsOf } from "../redact/redact.js";

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Every failure goes out through here: URLs' passwords masked, secret settings never echoed. */
export function die(code: number, message: string): never {
  process.stderr.write(`orchestra: ${scrub(message, secretsOf(process.env))}\n`);
  process.exit(code);
}

export const out = (text: string): void => {
  process.stdout.write(text);
};

/** The service's base URL: ORCHESTRA_URL, else localhost on $PORT (default 3000). */
export const baseUrl = (): string =>
  process.env["ORCHESTRA_URL"] ?? `http://localhost:${process.env["PORT"] ?? "3000"}`;

/** An admin API call; on an error answer it reports the failure and exits 1. */
export async function api(path: string, init: RequestInit = {}): Promise<unknown> {
  const base = baseUrl();
  const token = process.env["ORCHESTRA_ADMIN_TOKEN"];
  if (!token) die(EXIT.usage, "ORCHESTRA_ADMIN_TOKEN is not set; export the service's admin token first");
  let res: Response;
  try {
    res = await fetch(base + path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  } catch (err) {
    die(
      EXIT.failed,
      `cannot reach the service at ${maskUrl(base)} (${String((err as Error).cause ?? err)}); ` +
        `is it running? set ORCHESTRA_URL if it listens elsewhere`,
    );
  }
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const why = (body as { error?: string } | null)?.error ?? res.statusText;
    const hint =
      res.status === 401
        ? "; check ORCHESTRA_ADMIN_TOKEN against the service's"
        : res.status >= 500
          ? "; see the service's log, then try again"
          : "";
    die(EXIT.failed, `${init.method ?? "GET"} ${path} answered ${res.status}: ${why}${hint}`);
  }
  return body;
}

/** A JSON body for a POST. */
export const post = (value: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(value),
});

/** A query string from the values that are set. */
export function query(values: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) q.set(k, v);
  return q.size ? `?${q.toString()}` : "";
}

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** Times to the second: the milliseconds are noise on a terminal. */
export const when = (iso: string | null | undefined): string => (iso ? iso.replace(/\.\d{3}Z$/, "Z") : "-");

/** A fixed-width table, two spaces between columns, the last column unpadded. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return `${[header, ...rows].map(line).join("\n")}\n`;
}
