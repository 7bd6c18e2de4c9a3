/**
 * Runs a parsed operation against a plain object graph. Handlers return a
 * superset of the data (or functions of the field's arguments); the result
 * holds exactly the selected fields under their aliases, like a real server.
 */
import type { Document, Operation, Selection, Value } from "./parse.js";

/** A resolver failure that GitHub reports per field (`type: NOT_FOUND` etc.). */
export class GraphQLFieldError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export interface GraphQLError {
  message: string;
  type?: string;
  path?: (string | number)[];
  locations?: { line: number; column: number }[];
  extensions?: Record<string, unknown>;
}

export interface ExecutionResult {
  data: Record<string, unknown> | null;
  errors: GraphQLError[];
  /** fields the query selected that the handler's data does not have */
  missingFields: string[];
}

export function resolveValue(v: Value, vars: Record<string, unknown>): unknown {
  switch (v.kind) {
    case "var":
      return vars[v.name];
    case "lit":
      return v.value;
    case "list":
      return v.items.map((i) => resolveValue(i, vars));
    case "obj":
      return Object.fromEntries(Object.entries(v.fields).map(([k, x]) => [k, resolveValue(x, vars)]));
  }
}

export function execute(
  doc: Document,
  op: Operation,
  root: unknown,
  variables: Record<string, unknown>,
): ExecutionResult {
  const errors: GraphQLError[] = [];
  const missing = new Set<string>();

  const included = (s: Selection): boolean => {
    for (const d of s.directives) {
      const cond = d.args.if ? Boolean(resolveValue(d.args.if, variables)) : true;
      if (d.name === "include" && !cond) return false;
      if (d.name === "skip" && cond) return false;
    }
    return true;
  };

  const typeMatches = (value: Record<string, unknown>, cond: string | null): boolean =>
    cond === null || value.__typename === undefined || value.__typename === cond;

  const select = (value: unknown, selections: Selection[], path: (string | number)[], typePath: string): unknown => {
    if (value === null || value === undefined) return null;
    if (Array.isArray(value)) return value.map((v, i) => select(v, selections, [...path, i], typePath));
    if (typeof value !== "object") return value;
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    const visit = (sels: Selection[]): void => {
      for (const s of sels) {
        if (!included(s)) continue;
        if (s.kind === "inline") {
          if (typeMatches(obj, s.typeCondition)) visit(s.selections);
          continue;
        }
        if (s.kind === "spread") {
          const f = doc.fragments.get(s.name);
          if (!f) {
            errors.push({ message: `Fragment ${s.name} was used, but not defined` });
            continue;
          }
          if (typeMatches(obj, f.typeCondition)) visit(f.selections);
          continue;
        }
        const key = s.alias ?? s.name;
        const fieldPath = [...path, key];
        if (s.name === "__typename") {
          out[key] = obj.__typename ?? null;
          continue;
        }
        const typeName = typeof obj.__typename === "string" ? obj.__typename : typePath;
        if (!(s.name in obj)) {
          missing.add(`${typeName}.${s.name}`);
          out[key] = null;
          continue;
        }
        let raw = obj[s.name];
        if (typeof raw === "function") {
          const args = Object.fromEntries(Object.entries(s.args).map(([k, v]) => [k, resolveValue(v, variables)]));
          try {
            raw = (raw as (a: Record<string, unknown>) => unknown).call(obj, args);
          } catch (e) {
            if (!(e instanceof GraphQLFieldError)) throw e;
            errors.push({
              type: e.type,
              path: fieldPath,
              locations: [{ line: s.line, column: s.column }],
              message: e.message,
            });
            out[key] = null;
            continue;
          }
        }
        out[key] = s.selections ? select(raw, s.selections, fieldPath, `${typeName}.${s.name}`) : raw ?? null;
      }
    };
    visit(selections);
    return out;
  };

  const data = select(root, op.selections, [], op.type === "mutation" ? "Mutation" : "Query") as Record<
    string,
    unknown
  > | null;
  return { data, errors, missingFields: [...missing] };
}
