/**
 * The shapes of start-up settings that take more than a line to check: a PEM
 * private key, and a whole number within bounds. Each failure message names
 * what a valid value looks like.
 */
import { createPrivateKey } from "node:crypto";
import { z } from "zod";

/** Probot accepts keys with escaped newlines (one-line env files); so do we. */
export function normalizeKey(key: string): string {
  return key.includes("\\n") ? key.replace(/\\n/g, "\n") : key;
}

function readable(key: string): boolean {
  try {
    createPrivateKey(key);
    return true;
  } catch {
    return false;
  }
}

export const pem = z
  .string()
  .transform(normalizeKey)
  .refine((k) => /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+-----END [A-Z ]*PRIVATE KEY-----/.test(k), {
    message:
      "must be a PEM private key (-----BEGIN RSA PRIVATE KEY----- ...), as downloaded from the App's settings page",
    abort: true,
  })
  // A key cut short or pasted wrong passed the shape above, started, and failed every call to GitHub.
  .refine(readable, {
    message: "holds a PEM block that is not a readable private key (cut short, or pasted wrong?); download a new one",
  });

const singular = (unit: string) => (unit.endsWith("ies") ? `${unit.slice(0, -3)}y` : unit.replace(/s$/, ""));

/** A whole number of `unit` between `min` and `max`, defaulting to `fallback`; `why` explains the minimum. */
export function whole(unit: string, min: number, max: number, fallback: number, why = "") {
  return z
    .string()
    .regex(/^[0-9]+$/, `must be a whole number of ${unit}, e.g. ${fallback}`)
    .transform(Number)
    .refine((n) => n >= min, `must be at least ${min} ${min === 1 ? singular(unit) : unit}${why}`)
    .refine((n) => n <= max, `must be at most ${max} ${unit}`)
    .default(fallback);
}
