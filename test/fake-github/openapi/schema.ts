/** Schemas of the description converted for ajv (OpenAPI 3.0 to JSON Schema). */
import type { JsonSchema, Spec } from "./types.js";

const DROP = new Set([
  "description",
  "example",
  "examples",
  "externalDocs",
  "title",
  "nullable",
  "discriminator",
  "xml",
  "deprecated",
  "readOnly",
  "writeOnly",
]);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "definitions"]);
const DATA_KEYS = new Set(["enum", "default", "const", "required"]);

/**
 * OpenAPI 3.0 schema → JSON Schema for ajv: `nullable` becomes a null type,
 * refs point into the shared "gh" schema, documentation keys are dropped.
 * `oneOf` becomes `anyOf`: the description has overlapping alternatives
 * (a string label matches two branches) that GitHub itself accepts.
 */
export function convertSchema(node: Spec, collect: (ref: string) => string): JsonSchema {
  if (Array.isArray(node)) return node.map((n) => convertSchema(n, collect));
  if (!node || typeof node !== "object") return node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries<Spec>(node)) {
    if (DROP.has(k) || k.startsWith("x-")) continue;
    if (k === "$ref" && typeof v === "string") out.$ref = collect(v);
    else if (SCHEMA_MAPS.has(k) && v && typeof v === "object") {
      out[k] = Object.fromEntries(Object.entries<Spec>(v).map(([n, s]) => [n, convertSchema(s, collect)]));
    } else if (DATA_KEYS.has(k)) out[k] = v;
    else if (k === "oneOf") out.anyOf = convertSchema(v, collect);
    else out[k] = convertSchema(v, collect);
  }
  if (node.nullable === true) {
    if (typeof out.type === "string") {
      out.type = [out.type, "null"];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else if (!Array.isArray(out.type)) {
      return { anyOf: [out, { type: "null" }] };
    }
  }
  return out;
}
