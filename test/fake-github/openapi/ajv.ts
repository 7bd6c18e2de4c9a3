/** Ajv as GitHub's description needs it, and its errors as one line of text. */
import { Ajv, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";

/**
 * Ajv set up for GitHub's description: OpenAPI keywords it does not know are
 * ignored (strict: false), and formats like "int64" or "repo.nwo" are
 * documentation rather than checks.
 */
export function createAjv(): Ajv {
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    logger: false,
    validateSchema: false,
    formats: { int32: true, int64: true, double: true, "repo.nwo": true, binary: true },
  });
  // a CommonJS default export: the plugin function itself, or under .default
  const plugin = addFormatsModule as unknown as ((a: Ajv) => Ajv) & { default?: (a: Ajv) => Ajv };
  (plugin.default ?? plugin)(ajv);
  return ajv;
}

export function formatAjvErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors?.length) return "";
  // anyOf failures repeat every branch's errors; the most specific ones first reads better
  const lines = errors
    .filter((e) => e.keyword !== "anyOf" || errors.length === 1)
    .map((e) => `${e.instancePath || "(root)"} ${e.message ?? e.keyword}${paramsHint(e)}`);
  return [...new Set(lines)].slice(0, 8).join("; ");
}

function paramsHint(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  if (e.keyword === "enum" && Array.isArray(p.allowedValues)) return ` (${p.allowedValues.join(", ")})`;
  if (e.keyword === "additionalProperties") return ` (${String(p.additionalProperty)})`;
  return "";
}
