/**
 * A stored or reported value as text: a string as it is, a number or boolean printed, anything else as JSON
 * (evidence and raw SQL cells are `unknown`; an object must not print as "[object Object]").
 */
export function textOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (v === undefined) return "undefined";
  return JSON.stringify(v);
}
