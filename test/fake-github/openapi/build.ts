/**
 * Building the reduced index from a full description: every operation's
 * parameters and JSON request body, the component schemas they reach, and
 * where the description is corrected to GitHub's documented behaviour.
 */
import { convertSchema } from "./schema.js";
import {
  INDEX_FORMAT,
  type IndexFile,
  type JsonSchema,
  type OperationSpec,
  type ParamSpec,
  type Spec,
} from "./types.js";

export function buildIndex(spec: Spec, source: string): IndexFile {
  const operations: OperationSpec[] = [];
  const needed = new Set<string>();
  const collect = (ref: string): string => {
    const name = ref.replace(/^#\/components\/schemas\//, "");
    needed.add(name);
    return `gh#/definitions/${name}`;
  };
  const deref = (obj: Spec): Spec => {
    if (obj && typeof obj.$ref === "string") {
      const parts = obj.$ref.replace(/^#\//, "").split("/");
      let cur: Spec = spec;
      for (const p of parts) cur = cur?.[p];
      return cur;
    }
    return obj;
  };

  for (const [template, item] of Object.entries<Spec>(spec.paths)) {
    for (const [method, op] of Object.entries<Spec>(item)) {
      if (!op || typeof op !== "object" || !op.operationId) continue;
      const params: ParamSpec[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Spec) => {
        const r = deref(p);
        return { name: r.name, in: r.in, required: !!r.required, schema: convertSchema(r.schema ?? {}, collect) };
      });
      let body: OperationSpec["body"] = null;
      if (op.requestBody) {
        const rb = deref(op.requestBody);
        const content = rb.content ?? {};
        const json = content["application/json"];
        body = {
          required: !!rb.required,
          contentTypes: Object.keys(content),
          schema: json?.schema ? convertSchema(json.schema, collect) : null,
        };
      }
      operations.push({
        method,
        path: template,
        operationId: op.operationId,
        docs: op.externalDocs?.url ?? null,
        params,
        body,
      });
    }
  }

  // bring in every component schema reachable from the request side
  const schemas: Record<string, JsonSchema> = {};
  const queue = [...needed];
  while (queue.length) {
    const name = queue.pop()!;
    if (schemas[name]) continue;
    const before = new Set(needed);
    schemas[name] = convertSchema(spec.components.schemas[name] ?? {}, collect);
    for (const n of needed) if (!before.has(n)) queue.push(n);
  }
  applyKnownInaccuracies(operations);
  return { format: INDEX_FORMAT, source, operations, schemas };
}

/**
 * Where the description disagrees with GitHub's documented behaviour, follow
 * the behaviour so correct App code is not reported as a violation.
 */
function applyKnownInaccuracies(ops: OperationSpec[]): void {
  for (const op of ops) {
    // "You can pass an empty array to remove all labels", yet minItems: 1
    if (op.operationId === "issues/set-labels" || op.operationId === "issues/add-labels") {
      stripKeyword(op.body?.schema, "minItems");
    }
  }
}

function stripKeyword(schema: JsonSchema | null | undefined, keyword: string): void {
  if (!schema || typeof schema !== "object") return;
  delete schema[keyword];
  for (const v of Object.values(schema)) {
    if (Array.isArray(v)) v.forEach((x) => stripKeyword(x, keyword));
    else if (v && typeof v === "object") stripKeyword(v, keyword);
  }
}
