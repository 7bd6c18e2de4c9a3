/**
 * What a person's comment on an issue or PR asks of Orchestra: a command, a
 * malformed or unknown command, or free text. Pure: no I/O, no trust; whoever
 * calls it judges the author.
 *
 * The rules, in the spirit of Prow's comment commands:
 *
 * - Only what a reader sees as the author's own words can be a command.
 *   Quoted lines (`>` after optional spaces, and the lines that Markdown
 *   folds into a quoted paragraph, i.e. the non-blank lines right after one),
 *   fenced code blocks (``` or ~~~, any info string; an unclosed fence runs to
 *   the end), indented code blocks (4+ columns of indent, only where Markdown
 *   starts one: at the start, after a blank line or after another block, not
 *   inside a paragraph) and HTML comments (`<!-- ... -->`, an unclosed one runs
 *   to the end) are removed first.
 * - The command is the first non-blank line left, trimmed:
 *   `[/]orchestra <command> [...]`, case-insensitive. A command on a later
 *   line is not a command.
 * - `verify` takes exactly one phase id and nothing else; the other commands
 *   keep any text after the command word as a free-form `note`
 *   (`orchestra retry the flaky test is fixed`). Trailing `.,!?:;` on the
 *   command word is ignored (`orchestra retry, please`).
 * - A line that names an unknown command is `unknown` when it is plainly an
 *   attempt at one: written with the leading `/`, or just `orchestra <word>`,
 *   or a word close to a command's name (`orchestra retyr`). Otherwise it is
 *   prose that happens to start with the word ("Orchestra broke the build
 *   again") and stays `text`, so a correction is not lost.
 *
 * Every step is a linear scan over lines; no regexp here can backtrack badly.
 */
import { COMMANDS, PHASE_ID, PHASE_ID_RULE, type CommandName, type CommandSpec } from "./commands.js";

export { COMMANDS, helpText, type CommandName } from "./commands.js";

export type Parsed =
  | { kind: "command"; command: CommandName; phase?: string; note?: string }
  | { kind: "malformed"; command: string; message: string }
  | { kind: "unknown"; word: string; message: string }
  | { kind: "text"; body: string; isEmpty: boolean };

const SPECS = new Map<string, CommandSpec>((COMMANDS as readonly CommandSpec[]).map((c) => [c.name, c]));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `[/]orchestra` then whitespace or the end of the line; the rest is `(.*)`. */
const PREFIX = /^(\/?)orchestra(?:\s+(.*))?$/i;
/** A known command word, alternatives from `COMMANDS`, optionally followed by punctuation. */
const KNOWN = new RegExp(
  `^(${(COMMANDS as readonly CommandSpec[]).map((c) => escape(c.name)).join("|")})[.,!?:;]*$`,
  "i",
);

const FENCE_OPEN = /^(`{3,}|~{3,})(.*)$/;
const BLANK = /^[ \t]*$/;

/** The indent of a line in columns (tabs to the next multiple of 4), and where its text starts. */
function indentOf(line: string): { cols: number; at: number } {
  let cols = 0;
  let at = 0;
  for (; at < line.length; at++) {
    const ch = line.charCodeAt(at);
    if (ch === 32) cols++;
    else if (ch === 9) cols += 4 - (cols % 4);
    else break;
  }
  return { cols, at };
}

/**
 * A fence opener (up to 3 columns of indent): its character and length; a backtick fence's info string has no backtick.
 */
function fenceOpen(line: string): { char: string; len: number } | null {
  const { cols, at } = indentOf(line);
  if (cols > 3) return null;
  const m = FENCE_OPEN.exec(line.slice(at));
  if (!m) return null;
  const run = m[1]!;
  if (run[0] === "`" && m[2]!.includes("`")) return null;
  return { char: run[0]!, len: run.length };
}

function fenceCloses(line: string, fence: { char: string; len: number }): boolean {
  const { cols, at } = indentOf(line);
  if (cols > 3) return false;
  let i = at;
  while (i < line.length && line[i] === fence.char) i++;
  return i - at >= fence.len && BLANK.test(line.slice(i));
}

/**
 * The lines a reader sees as the author's own words, with quotes, code and
 * HTML comments removed (removed lines are dropped; blank lines kept).
 * Stops once `limit` non-blank lines are found.
 */
function visibleLines(body: string, limit: number): string[] {
  const lines = body.split(/\r\n|\r|\n/);
  const out: string[] = [];
  let found = 0;
  let fence: { char: string; len: number } | null = null;
  let inComment = false;
  /** The previous line was paragraph text, which an indented line continues rather than starting code. */
  let paragraph = false;
  /** The previous line was a quoted paragraph, which a non-blank line continues (Markdown's lazy continuation). */
  let quoted = false;

  const keep = (text: string) => {
    out.push(text);
    if (!BLANK.test(text)) found++;
  };

  for (let i = 0; i < lines.length && found < limit; i++) {
    const line = lines[i]!;
    let rest: string;

    if (inComment) {
      const end = line.indexOf("-->");
      if (end < 0) continue;
      inComment = false;
      rest = line.slice(end + 3);
    } else if (fence) {
      if (fenceCloses(line, fence)) fence = null;
      paragraph = false;
      continue;
    } else if (BLANK.test(line)) {
      paragraph = false;
      quoted = false;
      keep("");
      continue;
    } else {
      const open = fenceOpen(line);
      if (open) {
        fence = open;
        paragraph = false;
        quoted = false;
        continue;
      }
      const { cols, at } = indentOf(line);
      if (line[at] === ">") {
        const inner = line.slice(at + 1);
        quoted = !BLANK.test(inner) && fenceOpen(inner.replace(/^ /, "")) === null;
        paragraph = false;
        continue;
      }
      if (quoted) continue;
      if (cols >= 4 && !paragraph) continue;
      rest = line;
    }

    // Remove HTML comments from what is left of the line; an unclosed one hides the rest.
    let text = "";
    for (let pos = 0; ;) {
      const start = rest.indexOf("<!--", pos);
      if (start < 0) {
        text += rest.slice(pos);
        break;
      }
      text += rest.slice(pos, start);
      const end = rest.indexOf("-->", start + 4);
      if (end < 0) {
        inComment = true;
        break;
      }
      pos = end + 3;
    }
    paragraph = !BLANK.test(text);
    keep(text);
  }
  return out;
}

/** The comment with quotes, code blocks and HTML comments removed: what the parser reads. */
export function visibleText(body: string): string {
  return visibleLines(body, Infinity).join("\n").trim();
}

const LIST = (COMMANDS as readonly CommandSpec[]).map((c) => `\`${c.usage}\``).join(", ");

function verifyForm(): string {
  return `Write \`orchestra verify <phase-id>\`, e.g. \`orchestra verify phase-2\`; a phase id is ${PHASE_ID_RULE}.`;
}

/** Edit distance, for "did you mean"; only called on short words. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

function closest(word: string): CommandSpec | null {
  if (word.length < 3 || word.length > 12) return null;
  let best: CommandSpec | null = null;
  let bestD = 3;
  for (const c of COMMANDS as readonly CommandSpec[]) {
    const d = distance(word, c.name);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

function unknown(word: string, near: CommandSpec | null): Parsed {
  const what = word ? `\`orchestra ${word}\` is not a command` : "`orchestra` needs a command";
  const mean = near ? ` Did you mean \`${near.usage}\`?` : "";
  return { kind: "unknown", word, message: `${what}.${mean} The commands are ${LIST}; see \`orchestra help\`.` };
}

/** Read a comment body: a command, a malformed or unknown one, or free text. */
export function parseComment(body: string): Parsed {
  const visible = visibleLines(body, 2).filter((l) => !BLANK.test(l));
  const text = (): Parsed => ({ kind: "text", body: body.trim(), isEmpty: visible.length === 0 });
  const first = visible[0]?.trim();
  if (first === undefined) return text();

  const m = PREFIX.exec(first);
  if (!m) return text();
  const slash = m[1] === "/";
  const after = m[2] ?? "";
  const space = after.search(/\s/);
  const token = space < 0 ? after : after.slice(0, space);
  const rest = space < 0 ? "" : after.slice(space + 1).trim();

  if (!token) return slash || visible.length === 1 ? unknown("", null) : text();

  const known = KNOWN.exec(token);
  if (!known) {
    const word = token.replace(/[.,!?:;]+$/, "");
    const near = closest(word.toLowerCase());
    return slash || !rest || near ? unknown(word, near) : text();
  }

  const spec = SPECS.get(known[1]!.toLowerCase())!;
  const command = spec.name as CommandName;
  if (spec.takes === "phase") {
    if (!rest)
      return { kind: "malformed", command, message: `\`orchestra ${command}\` needs a phase id. ${verifyForm()}` };
    if (/\s/.test(rest))
      return {
        kind: "malformed",
        command,
        message: `\`orchestra ${command}\` takes one phase id and nothing else. ${verifyForm()}`,
      };
    if (!PHASE_ID.test(rest)) {
      const shown = rest.length > 80 ? `${rest.slice(0, 80)}…` : rest;
      return {
        kind: "malformed",
        command,
        message: `\`${shown.replace(/`/g, "'")}\` is not a phase id. ${verifyForm()}`,
      };
    }
    return { kind: "command", command, phase: rest };
  }
  return rest ? { kind: "command", command, note: rest } : { kind: "command", command };
}
