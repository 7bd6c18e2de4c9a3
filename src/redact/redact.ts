/**
 * What may be shown of a setting. A URL is shown with its password masked
 * (`postgresql://user:***@host/db`); tokens, the webhook secret and the
 * private key are never shown at all. Error text from a driver or a library
 * is scrubbed the same way before it reaches stderr or a log, because a
 * malformed DATABASE_URL was once echoed there with its password.
 */

/** A scheme, also malformed ones (`postgresql:/`, `postgresql:`), so a mistyped URL is masked as well as a good one. */
const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:(?:\/\/?)?/;

/** The URL cut around its user information (everything up to the last `@`), or null when it has none. */
function split(url: string): { scheme: string; userinfo: string; rest: string } | null {
  const scheme = SCHEME.exec(url)?.[0] ?? "";
  const tail = url.slice(scheme.length);
  const at = tail.lastIndexOf("@");
  if (at === -1) return null;
  return { scheme, userinfo: tail.slice(0, at), rest: tail.slice(at + 1) };
}

/** Settings whose values are secrets: never echoed, not even in part (PRIVATE_KEY_PATH is a path, not a key). */
export const SECRET_SETTING = /(SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?)$|^PRIVATE_KEY$/i;

/**
 * The URL with its user information masked. Everything up to the last `@`
 * counts as user information, so a password that itself holds `@`, `/` or
 * spaces is masked whole; the user name is kept when a password follows it
 * (`user:***@`), and a lone user part is masked too (`***@`), because tools
 * put tokens there (`https://<token>@host`).
 */
export function maskUrl(url: string): string {
  const parts = split(url);
  if (!parts) return maskKeywords(url);
  const colon = parts.userinfo.indexOf(":");
  return `${parts.scheme}${colon === -1 ? "***" : `${parts.userinfo.slice(0, colon)}:***`}@${maskKeywords(parts.rest)}`;
}

/** `password=…` in a keyword connection string or a query (`?password=…&sslpassword=…`). */
function maskKeywords(text: string): string {
  return text.replace(/\b((?:ssl)?pass(?:word|wd)?|pwd)=[^\s&;]*/gi, "$1=***");
}

/** The user information of the examples in Orchestra's own hints, which stays readable. */
const PLACEHOLDER = "user:password";

/**
 * Free text (an error message, a log line) with every URL's user information
 * masked and every known secret value replaced by `***`. Secrets shorter
 * than 4 characters are left alone: replacing them would mangle ordinary
 * words and they could not be hidden anyway.
 */
export function scrub(text: string, secrets: Iterable<string | undefined> = []): string {
  let out = text;
  for (const s of [...secrets]
    .filter((s): s is string => typeof s === "string" && s.length >= 4)
    .sort((a, b) => b.length - a.length)) {
    out = out.split(s).join("***");
  }
  out = out.replace(/[a-zA-Z][a-zA-Z0-9+.-]*:\/\/\S*@\S*/g, (u) => (u.includes(`://${PLACEHOLDER}@`) ? u : maskUrl(u)));
  return maskKeywords(out);
}

/**
 * The secret parts of a database URL as they may appear in an error: the
 * password raw and percent-decoded, so that scrubbing catches a driver that
 * echoes either form.
 */
export function urlSecrets(url: string | undefined): string[] {
  const parts = url ? split(url) : null;
  if (!parts) return [];
  const colon = parts.userinfo.indexOf(":");
  const password = colon === -1 ? parts.userinfo : parts.userinfo.slice(colon + 1);
  let decoded = password;
  try {
    decoded = decodeURIComponent(password);
  } catch {
    // A malformed escape: the raw form is all a driver could echo.
  }
  return [...new Set([password, decoded])];
}

/** The secret values of an environment: every setting named like a secret, and the database passwords. */
export function secretsOf(env: NodeJS.ProcessEnv): string[] {
  return [
    ...Object.entries(env)
      .filter(([name, v]) => SECRET_SETTING.test(name) && typeof v === "string")
      .map(([, v]) => v!),
    ...urlSecrets(env["DATABASE_URL"]),
    ...urlSecrets(env["TEST_DATABASE_URL"]),
    ...urlSecrets(env["ORCHESTRA_URL"]),
  ];
}
