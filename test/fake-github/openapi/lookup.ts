/**
 * OpenApiIndex: a host's operations found by id, by route or by a raw path,
 * and their JSON bodies' validators.
 */
import type { Ajv, ValidateFunction } from "ajv";
import { createAjv } from "./ajv.js";
import { newNode, paramChild, safeDecode, walk, type TrieNode } from "./trie.js";
import type { IndexFile, JsonSchema, OperationMatch, OperationSpec } from "./types.js";

export class OpenApiIndex {
  readonly operations: OperationSpec[];
  private readonly trie: TrieNode = newNode();
  private readonly byId = new Map<string, OperationSpec>();
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction | null>();
  private readonly schemas: Record<string, JsonSchema>;

  constructor(file: IndexFile) {
    this.operations = file.operations;
    this.schemas = file.schemas;
    for (const op of file.operations) {
      this.byId.set(op.operationId, op);
      let node = this.trie;
      for (const seg of op.path.split("/").slice(1)) {
        if (seg.includes("{")) {
          let child = node.params.find((c) => c.template === seg);
          if (!child) {
            child = paramChild(seg);
            node.params.push(child);
            // whole-segment parameters first: `{basehead}` is the documented compare route
            node.params.sort((a, b) => Number(a.pattern !== null) - Number(b.pattern !== null));
          }
          node = child.node;
        } else {
          let next = node.literal.get(seg);
          if (!next) node.literal.set(seg, (next = newNode()));
          node = next;
        }
      }
      node.ops.set(op.method.toUpperCase(), op);
    }
    this.ajv = createAjv();
    this.ajv.addSchema({ $id: "gh", definitions: file.schemas });
  }

  operation(operationId: string): OperationSpec | undefined {
    return this.byId.get(operationId);
  }

  /** The operation for an exact `METHOD` + template pair, if the description has it. */
  byRoute(method: string, template: string): OperationSpec | undefined {
    return this.operations.find((o) => o.method === method.toLowerCase() && o.path === template);
  }

  /**
   * Match a raw (still percent-encoded) path. Literal segments win over
   * parameters, as GitHub's router does (`issues/comments` vs `issues/{n}`).
   * Returns `methods` when the path exists but not for this method.
   */
  match(method: string, rawPath: string): OperationMatch | { methods: string[] } | null {
    const segs = rawPath.split("/").slice(1);
    const m = method.toUpperCase();
    const found = walk(this.trie, segs, 0, [], m);
    if (!found) {
      const any = walk(this.trie, segs, 0, [], null);
      return any ? { methods: [...any[0].ops.keys()] } : null;
    }
    const [node, values] = found;
    const params: Record<string, string> = {};
    for (const [child, raw] of values) {
      if (!child.pattern) params[child.names[0]!] = safeDecode(raw);
      else {
        const mm = child.pattern.exec(safeDecode(raw));
        child.names.forEach((n, i) => (params[n] = mm?.[i + 1] ?? ""));
      }
    }
    return { op: node.ops.get(m)!, params };
  }

  /** Compiled (and cached) validator for an operation's JSON body. */
  bodyValidator(op: OperationSpec): ValidateFunction | null {
    if (this.validators.has(op.operationId)) return this.validators.get(op.operationId)!;
    const schema = op.body?.schema;
    const v = schema ? this.ajv.compile(schema) : null;
    this.validators.set(op.operationId, v);
    return v;
  }

  /** Top-level property names a body schema knows (union over anyOf/allOf). */
  knownBodyKeys(op: OperationSpec): Set<string> | null {
    const schema = op.body?.schema;
    if (!schema) return null;
    const keys = new Set<string>();
    let open = false;
    const visit = (s: JsonSchema | undefined): void => {
      if (!s || typeof s !== "object") return;
      if (s.$ref) {
        visit(this.resolveRef(s.$ref));
        return;
      }
      if (s.properties) for (const k of Object.keys(s.properties)) keys.add(k);
      else if (s.type === "object" || (Array.isArray(s.type) && s.type.includes("object"))) open = true;
      if (s.additionalProperties && s.additionalProperties !== false) open = true;
      for (const k of ["anyOf", "allOf", "oneOf"]) if (Array.isArray(s[k])) s[k].forEach(visit);
    };
    visit(schema);
    return open || keys.size === 0 ? null : keys;
  }

  private resolveRef(ref: string): JsonSchema | undefined {
    const m = /^gh#\/definitions\/(.+)$/.exec(ref);
    return m ? this.schemas[m[1]!] : undefined;
  }
}
