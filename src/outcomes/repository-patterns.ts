/**
 * A repository's own `infraPatterns` (`.github/orchestra.yml`), compiled by
 * RE2 (the re2-wasm package: Google's RE2 built to WebAssembly, loaded once,
 * synchronously, when the first repository pattern is compiled: a service
 * whose repositories name none never compiles its WebAssembly nor reserves
 * its memory). RE2 matches in time
 * linear in the input whatever the pattern, so a pattern like `(a+)+$` run
 * against a long log line cannot hold the event loop, which every installation
 * shares. What RE2 cannot do in linear time it refuses to compile:
 * back-references (`\1`, `\k<name>`) and lookarounds (`(?=`, `(?!`, `(?<=`,
 * `(?<!`); a configuration naming such a pattern is invalid, with a line that
 * says which pattern and why (repositoryPatternProblem).
 *
 * The built-in catalogue (infra-catalogue/) is ours and stays native RegExp.
 */
import { createRequire } from "node:module";
import type re2 from "re2-wasm";
import { z } from "zod";

type Re2Class = typeof re2.RE2;
type Re2 = InstanceType<Re2Class>;

let engine: Re2Class | undefined;
/** The RE2 class, loaded at the first compile (re2-wasm is CommonJS: required synchronously, as zod checks are). */
function RE2(): Re2Class {
  engine ??= (createRequire(import.meta.url)("re2-wasm") as typeof re2).RE2;
  return engine;
}

/** What the classifier needs of a pattern: the line test, and its source for the evidence. */
export interface LinePattern {
  readonly source: string;
  test(line: string): boolean;
}

/**
 * Compiled patterns by source. RE2's compiled programs live in WebAssembly
 * memory that JavaScript's collector does not free, so each source is compiled
 * once and the least recently used are released past CACHE_LIMIT.
 */
const CACHE_LIMIT = 1000;
const cache = new Map<string, Re2>();

/** RE2's wrapped program (re2-wasm keeps it private and never frees it itself). */
function release(r: Re2): void {
  (r as unknown as { wrapper?: { delete?: () => void } }).wrapper?.delete?.();
}

function compiled(source: string): Re2 | { error: string } {
  const hit = cache.get(source);
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  let r: Re2;
  try {
    r = new (RE2())(source, "iu");
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  cache.set(source, r);
  if (cache.size > CACHE_LIMIT) {
    const [oldest, old] = cache.entries().next().value as [string, Re2];
    cache.delete(oldest);
    release(old);
  }
  return r;
}

/** Why RE2 refused `source`, in the words of the README's configuration section. */
function why(source: string, error: string): string {
  if (/invalid perl operator: \(\?<?[=!]?/.test(error) && /\(\?<?[=!]/.test(source))
    return "it uses a lookaround ((?=, (?!, (?<= or (?<!), which the linear-time matcher (RE2) does not support";
  if (/invalid escape sequence: \\([1-9]|k)/.test(error))
    return "it uses a back-reference (\\1 or \\k<name>), which the linear-time matcher (RE2) does not support";
  if (/invalid repetition size/.test(error))
    return "a counted repetition ({n} or {n,m}) is above 1000, or nested ones multiply past it";
  if (/pattern too large/.test(error)) return "it compiles to a program too large for the matcher (RE2)";
  try {
    new RegExp(source, "i");
  } catch {
    return "it is not a valid regular expression";
  }
  const detail = error.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, "");
  return `the linear-time matcher (RE2) cannot compile it (${detail})`;
}

/** Backticks around `s` that survive backticks inside it (a Markdown code span). */
function code(s: string): string {
  const longest = Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return longest > 0 ? `${fence} ${s} ${fence}` : `${fence}${s}${fence}`;
}

/**
 * Null when `source` compiles as a repository pattern; else the line the
 * configuration diagnostic shows (after the `infraPatterns.N: ` prefix).
 */
export function repositoryPatternProblem(source: string): string | null {
  const r = compiled(source);
  if (!("error" in r)) return null;
  return (
    `${code(source)} is refused: ${why(source, r.error)}. ` +
    `infraPatterns use RE2 syntax (JavaScript's, without back-references or lookarounds): rewrite or remove it`
  );
}

/** A repository's pattern as zod checks it: RE2 compiles it, or the issue is repositoryPatternProblem's line. */
export const repositoryPattern = z.string().superRefine((s, ctx) => {
  const problem = repositoryPatternProblem(s);
  if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
});

/**
 * The repository's patterns, compiled case-insensitively for infraMatch.
 * Patterns that do not compile are left out: configuration validation and the
 * facts schema have refused them already, with repositoryPatternProblem.
 */
export function repositoryPatterns(sources: readonly string[]): LinePattern[] {
  const out: LinePattern[] = [];
  for (const source of sources) {
    if ("error" in compiled(source)) continue;
    // Looked up at each test: a pattern evicted from the cache since is compiled again, never used freed.
    const test = (line: string): boolean => {
      const r = compiled(source);
      return !("error" in r) && r.test(line);
    };
    out.push({ source, test });
  }
  return out;
}
