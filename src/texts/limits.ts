/**
 * GitHub's size limits on the text Orchestra writes. A comment body over
 * 65,536 characters is refused with a 422, and refused again on every retry,
 * so an over-long escalation would never be posted at all: text is cut to fit
 * instead, with a note saying that it was cut and where the full text is.
 */

/** Issue and pull request comments: "body is too long (maximum is 65536 characters)". */
export const GITHUB_COMMENT_LIMIT = 65_536;
/** A check run's `output.summary` (and `output.text`). */
export const GITHUB_CHECK_SUMMARY_LIMIT = 65_535;

const FENCE = /^\s*(```|~~~)/;

/**
 * `text` cut to at most `limit` characters (UTF-16 code units, which is never
 * fewer than GitHub's count) with a closing note naming `fullTextAt`. The cut
 * never splits a surrogate pair, and a code block or `<details>` left open by
 * the cut is closed, so the note renders as text rather than inside them.
 * Text within the limit is returned unchanged.
 */
export function fitted(text: string, limit: number, fullTextAt: string): string {
  if (text.length <= limit) return text;
  const note =
    `\n\n---\n**Truncated:** this text was ${text.length.toLocaleString("en-US")} characters, ` +
    `over GitHub's limit of ${limit.toLocaleString("en-US")}; the full text is ${fullTextAt}.`;
  // Room for the note and for closing whatever the cut leaves open (at most a fence and a few </details>).
  let room = limit - note.length;
  for (;;) {
    let cut = Math.max(0, room);
    const code = text.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    const kept = text.slice(0, cut);
    const closing = closers(kept);
    if (kept.length + closing.length + note.length <= limit || cut === 0)
      return (kept + closing + note).slice(0, limit);
    room -= closing.length;
  }
}

/** What closes the code fence and the `<details>` blocks `kept` leaves open. */
function closers(kept: string): string {
  let fence: string | null = null;
  let details = 0;
  for (const line of kept.split("\n")) {
    const f = FENCE.exec(line);
    if (f) {
      if (fence === null) fence = f[1]!;
      else if (f[1] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    details += (line.match(/<details\b/gi) ?? []).length - (line.match(/<\/details>/gi) ?? []).length;
  }
  return `${fence !== null ? `\n${fence}` : ""}${"\n</details>".repeat(Math.max(0, details))}`;
}
