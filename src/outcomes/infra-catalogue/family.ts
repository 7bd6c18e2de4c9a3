/**
 * One family of the infrastructure catalogue, and what its data files share.
 *
 * Patterns are tested one line at a time, after normalizeLine (infra-patterns.ts)
 * has removed what the Actions runner adds in front of a line: a timestamp,
 * `##[error]`/`##[warning]`, the `Error: `/`Warning: ` of an annotation, and
 * indentation. Each pattern starts (`^`) with the prefix the tool writes itself
 * (`npm ERR!`, `fatal:`, `E: Failed to fetch`, `go:`…); the few that cannot
 * (Docker and the GitHub API are quoted inside varying wrappers) match the
 * service's whole message, never a single word such as "timeout", "reset" or
 * "ENOSPC".
 */
export interface InfraFamily {
  family: string;
  description: string;
  /**
   * `runner`: the Actions runner or the kernel reporting on the machine itself;
   * counts even next to a test runner's failure summary (see infraMatch).
   * `tool`: a tool's own report; counts only when the output shows no test failure.
   */
  scope: "runner" | "tool";
  patterns: RegExp[];
  /** Lines as the tool printed them, each with its source cited above it in the data file. */
  samples: string[];
  /**
   * Genuine failures that use the same words: a 404 or 403 from the same
   * registry, a retry the tool recovered from, a warning, a test named after
   * the error. None may be classified as infrastructure.
   */
  counterparts: string[];
}

/** curl's progress meter ends without a newline, so its error can follow the meter's last column. */
export const CURL = String.raw`(?:[\d\s.:kMG-]*\d[kMG]?)?curl:`;

/**
 * What syslog and dmesg put in front of a kernel line: `May 15 23:01:53 host kernel: `,
 * then `[ 7063.247407]` (seconds since boot) or `[Thu Dec  7 00:05:15 2017]` (dmesg -T).
 */
export const KERNEL = String.raw`(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: )?(?:\[[^\]]*\]\s*)?`;
