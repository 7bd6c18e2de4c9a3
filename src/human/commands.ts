/**
 * The commands a person can give Orchestra in an issue or PR comment, in one
 * table. The parser (`./parse.ts`) and the help reply are both built from it:
 * adding a row here is enough for a new command to parse and to be listed.
 */

/** Who may use a command. One audience today; the text for it lives in `WHO`. */
export type Audience = "trusted";

export interface CommandSpec {
  name: string;
  /** What to write, e.g. "orchestra verify <phase-id>". */
  usage: string;
  description: string;
  /**
   * "phase": exactly one phase id follows, nothing else.
   * "note": anything after the command word is kept as a free-form note.
   */
  takes: "phase" | "note";
  who: Audience;
}

export const COMMANDS = [
  {
    name: "verify",
    usage: "orchestra verify <phase-id>",
    description:
      "signs off a phase: records your verification of `<phase-id>` " +
      "as a decision (a later one for the same phase replaces it)",
    takes: "phase",
    who: "trusted",
  },
  {
    name: "retry",
    usage: "orchestra retry",
    description: "re-queues a failed or blocked task for a fresh attempt (attempts reset; history kept)",
    takes: "note",
    who: "trusted",
  },
  {
    name: "resume",
    usage: "orchestra resume",
    description: "re-queues a failed or blocked task to continue on its existing branch",
    takes: "note",
    who: "trusted",
  },
  {
    name: "hold",
    usage: "orchestra hold",
    description:
      "stops queued, running or in-review work and marks the task blocked; " +
      "`orchestra retry` or `orchestra resume` start it again",
    takes: "note",
    who: "trusted",
  },
  {
    name: "cancel",
    usage: "orchestra cancel",
    description: "cancels the task and stops any run working on it",
    takes: "note",
    who: "trusted",
  },
  {
    name: "status",
    usage: "orchestra status",
    description: "replies with where the task is and what it waits for",
    takes: "note",
    who: "trusted",
  },
  {
    name: "help",
    usage: "orchestra help",
    description: "replies with this list",
    takes: "note",
    who: "trusted",
  },
] as const satisfies readonly CommandSpec[];

export type CommandName = (typeof COMMANDS)[number]["name"];

/** Who may use commands, said once. `minPermission` is the repository's `trust.minPermission` (default `write`). */
export const WHO: Record<Audience, (minPermission: string) => string> = {
  trusted: (minPermission) =>
    `people with ${minPermission} permission or higher on this repository, ` +
    `or listed in \`trust.users\` in \`.github/orchestra.yml\``,
};

/** The accepted form of a phase id, for the parser and for the replies that explain it. */
export const PHASE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const PHASE_ID_RULE = "letters, digits, `.`, `_` or `-`, starting with a letter or digit, up to 64 characters";

/**
 * The help reply: every command from `COMMANDS`, grouped by who may use it,
 * and how a command is written.
 */
export function helpText(minPermission: string): string {
  const groups = new Map<Audience, CommandSpec[]>();
  for (const c of COMMANDS as readonly CommandSpec[]) groups.set(c.who, [...(groups.get(c.who) ?? []), c]);
  const sections = [...groups].map(
    ([who, cs]) =>
      `Commands for ${WHO[who](minPermission)}:\n\n${cs.map((c) => `- \`${c.usage}\`: ${c.description}`).join("\n")}`,
  );
  return [
    ...sections,
    [
      "Write the command on the first line of a comment; case does not matter and a leading `/` is fine.",
      "Text after a command on the same line is kept as a note (except " +
        "after `orchestra verify <phase-id>`, which takes the phase id alone).",
      `A phase id is ${PHASE_ID_RULE}.`,
      "Commands inside quotes (`>`), code blocks or HTML comments are ignored.",
    ].join(" "),
  ].join("\n\n");
}
