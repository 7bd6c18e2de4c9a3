/**
 * `orchestra classify`: what Orchestra would do with a run, asked offline.
 * Reads the facts document (DESIGN's JSON) and answers with the very
 * classifier the service records before it recovers, so an operator can
 * replay an incident, or try a "what if", without touching GitHub.
 *
 * Kept free of process I/O so tests can call it directly.
 */
import type { Readable } from "node:stream";
import { ZodArray, ZodNullable, ZodObject, ZodOptional, type z } from "zod";
import { classify } from "../outcomes/classify.js";
import { factsSchema, type Facts } from "../outcomes/facts.js";

export interface ClassifyFlags {
  batch?: boolean;
}

export interface CliAnswer {
  stdout: string;
  stderr: string;
  code: number;
}

function fail(lines: string[]): CliAnswer {
  return { stdout: "", stderr: lines.map((l) => `orchestra: ${l}\n`).join(""), code: 2 };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** `run.exitCode`, `checks[0].conclusion`: the spelling an operator would use to find the field. */
function fieldPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const p of path) out += typeof p === "number" ? `[${p}]` : `${out ? "." : ""}${String(p)}`;
  return out;
}

/** The schema of one field, to tell whether null would have been accepted there. */
function fieldSchema(path: readonly PropertyKey[]): z.ZodType | undefined {
  let at: unknown = factsSchema;
  for (const p of path) {
    while (at instanceof ZodNullable || at instanceof ZodOptional) at = at.unwrap();
    if (at instanceof ZodObject && typeof p === "string") at = (at.shape as Record<string, unknown>)[p];
    else if (at instanceof ZodArray && typeof p === "number") at = at.element;
    else return undefined;
  }
  return at as z.ZodType | undefined;
}

// zod's wording is written for developers ("Invalid input: ... received
// undefined"); operators need the field and what belongs there.
function problemLines(prefix: string, issues: z.ZodError["issues"]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys)
        lines.push(`${fieldPath(prefix, [...issue.path, key])}: not a field of the facts document`);
      continue;
    }
    const where = fieldPath(prefix, issue.path) || "(document)";
    let message = issue.message.replace(/^Invalid (input|option): /, "");
    const missing = /^expected (.+), received undefined$/.exec(message);
    // "pr: missing (expected object)" would send people hunting for a PR they do not have.
    if (missing)
      message = `missing (expected ${missing[1]}${fieldSchema(issue.path)?.safeParse(null).success ? " or null" : ""})`;
    lines.push(`${where}: ${message}`);
  }
  return lines;
}

const render = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * One document in, one `{class, recovery, evidence}` out; with `batch`, an
 * array in and an array out in the same order. Any bad input means exit 2
 * and nothing on stdout: a partial answer piped into another tool would be
 * mistaken for a whole one.
 */
export function classifyCommand(input: string, flags: ClassifyFlags = {}): CliAnswer {
  // Editors on some platforms save JSON with a byte-order mark; JSON.parse rejects it.
  const text = input.replace(/^\uFEFF/, "");
  if (text.trim() === "") {
    return fail([
      `classify: no input on stdin; ` +
        `it reads ${flags.batch ? "a JSON array of facts documents" : "one facts document (JSON)"}, ` +
        `e.g. orchestra classify${flags.batch ? " --batch" : ""} < facts.json`,
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return fail([`classify: stdin is not JSON (${String((err as Error).message).replace(/\s*\n\s*/g, " ")})`]);
  }

  if (flags.batch) {
    if (!Array.isArray(parsed)) {
      return fail([
        `classify --batch: expected a JSON array of facts documents, ` +
          `got ${describe(parsed)}; for one document drop --batch`,
      ]);
    }
    const docs: Facts[] = [];
    const problems: string[] = [];
    parsed.forEach((doc, i) => {
      const r = factsSchema.safeParse(doc);
      if (r.success) docs.push(r.data);
      else problems.push(...problemLines(`[${i}]`, r.error.issues));
    });
    if (problems.length) return fail(problems.map((p) => `facts: ${p}`));
    return { stdout: render(docs.map((d) => classify(d))), stderr: "", code: 0 };
  }

  if (Array.isArray(parsed)) {
    return fail([`classify: got a JSON array; one facts document is an object (use --batch for an array of them)`]);
  }
  const r = factsSchema.safeParse(parsed);
  if (!r.success) return fail(problemLines("", r.error.issues).map((p) => `facts: ${p}`));
  return { stdout: render(classify(r.data)), stderr: "", code: 0 };
}

/** All of a stream as text: stdin may be a pipe that arrives in chunks, or a file. */
export async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}
