/**
 * A small GraphQL document parser: operations, variables, fields with aliases
 * and arguments, fragments and @include/@skip. Enough to answer a query with
 * exactly the fields it selected, which is what GitHub does and what client
 * code relies on.
 */

export type Value =
  | { kind: "var"; name: string }
  | { kind: "lit"; value: unknown }
  | { kind: "list"; items: Value[] }
  | { kind: "obj"; fields: Record<string, Value> };

export interface Directive {
  name: string;
  args: Record<string, Value>;
}

export interface Field {
  kind: "field";
  alias: string | null;
  name: string;
  args: Record<string, Value>;
  directives: Directive[];
  selections: Selection[] | null;
  line: number;
  column: number;
}

export interface InlineFragment {
  kind: "inline";
  typeCondition: string | null;
  directives: Directive[];
  selections: Selection[];
}

export interface FragmentSpread {
  kind: "spread";
  name: string;
  directives: Directive[];
}

export type Selection = Field | InlineFragment | FragmentSpread;

export interface VariableDef {
  name: string;
  type: string;
  defaultValue: Value | null;
  line: number;
  column: number;
}

export interface Operation {
  type: "query" | "mutation" | "subscription";
  name: string | null;
  variables: VariableDef[];
  selections: Selection[];
}

export interface Document {
  operations: Operation[];
  fragments: Map<string, { typeCondition: string; selections: Selection[] }>;
}

interface Token {
  kind: "punct" | "name" | "number" | "string" | "eof";
  value: string;
  line: number;
  column: number;
}

export class GraphQLSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const push = (kind: Token["kind"], value: string, start: number): void => {
    tokens.push({ kind, value, line, column: start - lineStart + 1 });
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === "\n") {
      line++;
      lineStart = ++i;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r" || c === "," || c === "\ufeff") {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    if (src.startsWith("...", i)) {
      push("punct", "...", i);
      i += 3;
      continue;
    }
    if ("!$()::=@[]{}|&".includes(c)) {
      push("punct", c, i);
      i++;
      continue;
    }
    if (/[_A-Za-z]/.test(c)) {
      const m = /^[_A-Za-z][_0-9A-Za-z]*/.exec(src.slice(i))!;
      push("name", m[0], i);
      i += m[0].length;
      continue;
    }
    if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(src.slice(i));
      if (!m) throw new GraphQLSyntaxError(`Unexpected character "${c}"`, line, i - lineStart + 1);
      push("number", m[0], i);
      i += m[0].length;
      continue;
    }
    if (src.startsWith('"""', i)) {
      const end = src.indexOf('"""', i + 3);
      if (end < 0) throw new GraphQLSyntaxError("Unterminated block string", line, i - lineStart + 1);
      push("string", src.slice(i + 3, end), i);
      for (const ch of src.slice(i, end + 3)) if (ch === "\n") line++;
      i = end + 3;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let out = "";
      while (j < src.length && src[j] !== '"') {
        if (src[j] === "\\") {
          const n = src[j + 1];
          if (n === "u") {
            out += String.fromCharCode(parseInt(src.slice(j + 2, j + 6), 16));
            j += 6;
            continue;
          }
          out += ({ n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" } as Record<string, string>)[n ?? ""] ?? n ?? "";
          j += 2;
          continue;
        }
        out += src[j];
        j++;
      }
      if (src[j] !== '"') throw new GraphQLSyntaxError("Unterminated string", line, i - lineStart + 1);
      push("string", out, i);
      i = j + 1;
      continue;
    }
    throw new GraphQLSyntaxError(`Unexpected character "${c}"`, line, i - lineStart + 1);
  }
  tokens.push({ kind: "eof", value: "", line, column: i - lineStart + 1 });
  return tokens;
}

export function parseDocument(src: string): Document {
  const t = tokenize(src);
  let pos = 0;
  const peek = (): Token => t[pos]!;
  const next = (): Token => t[pos++]!;
  const is = (v: string): boolean => peek().kind !== "string" && peek().value === v;
  const expect = (v: string): Token => {
    const tok = next();
    if (tok.value !== v || tok.kind === "string") {
      throw new GraphQLSyntaxError(`Expected "${v}", found "${tok.value || "<EOF>"}"`, tok.line, tok.column);
    }
    return tok;
  };
  const name = (): string => {
    const tok = next();
    if (tok.kind !== "name") throw new GraphQLSyntaxError(`Expected a name, found "${tok.value}"`, tok.line, tok.column);
    return tok.value;
  };

  const value = (): Value => {
    const tok = peek();
    if (is("$")) {
      next();
      return { kind: "var", name: name() };
    }
    if (is("[")) {
      next();
      const items: Value[] = [];
      while (!is("]")) items.push(value());
      next();
      return { kind: "list", items };
    }
    if (is("{")) {
      next();
      const fields: Record<string, Value> = {};
      while (!is("}")) {
        const k = name();
        expect(":");
        fields[k] = value();
      }
      next();
      return { kind: "obj", fields };
    }
    next();
    if (tok.kind === "string") return { kind: "lit", value: tok.value };
    if (tok.kind === "number") return { kind: "lit", value: Number(tok.value) };
    if (tok.kind === "name") {
      if (tok.value === "true") return { kind: "lit", value: true };
      if (tok.value === "false") return { kind: "lit", value: false };
      if (tok.value === "null") return { kind: "lit", value: null };
      return { kind: "lit", value: tok.value }; // enum value
    }
    throw new GraphQLSyntaxError(`Unexpected "${tok.value}"`, tok.line, tok.column);
  };

  const args = (): Record<string, Value> => {
    const out: Record<string, Value> = {};
    if (!is("(")) return out;
    next();
    while (!is(")")) {
      const k = name();
      expect(":");
      out[k] = value();
    }
    next();
    return out;
  };

  const directives = (): Directive[] => {
    const out: Directive[] = [];
    while (is("@")) {
      next();
      out.push({ name: name(), args: args() });
    }
    return out;
  };

  const selectionSet = (): Selection[] => {
    expect("{");
    const out: Selection[] = [];
    while (!is("}")) {
      if (peek().kind === "eof") throw new GraphQLSyntaxError("Unexpected <EOF>", peek().line, peek().column);
      if (is("...")) {
        next();
        if (is("on")) {
          next();
          const typeCondition = name();
          const dirs = directives();
          out.push({ kind: "inline", typeCondition, directives: dirs, selections: selectionSet() });
        } else if (is("{") || is("@")) {
          const dirs = directives();
          out.push({ kind: "inline", typeCondition: null, directives: dirs, selections: selectionSet() });
        } else {
          out.push({ kind: "spread", name: name(), directives: directives() });
        }
        continue;
      }
      const start = peek();
      let alias: string | null = null;
      let fieldName = name();
      if (is(":")) {
        next();
        alias = fieldName;
        fieldName = name();
      }
      const a = args();
      const dirs = directives();
      const sel = is("{") ? selectionSet() : null;
      out.push({
        kind: "field",
        alias,
        name: fieldName,
        args: a,
        directives: dirs,
        selections: sel,
        line: start.line,
        column: start.column,
      });
    }
    next();
    return out;
  };

  const typeRef = (): string => {
    let s: string;
    if (is("[")) {
      next();
      s = `[${typeRef()}]`;
      expect("]");
    } else s = name();
    if (is("!")) {
      next();
      s += "!";
    }
    return s;
  };

  const doc: Document = { operations: [], fragments: new Map() };
  while (peek().kind !== "eof") {
    if (is("{")) {
      doc.operations.push({ type: "query", name: null, variables: [], selections: selectionSet() });
      continue;
    }
    const kw = name();
    if (kw === "fragment") {
      const fname = name();
      expect("on");
      const typeCondition = name();
      directives();
      doc.fragments.set(fname, { typeCondition, selections: selectionSet() });
      continue;
    }
    if (kw !== "query" && kw !== "mutation" && kw !== "subscription") {
      const tok = t[pos - 1]!;
      throw new GraphQLSyntaxError(`Unexpected "${kw}"`, tok.line, tok.column);
    }
    const opName = peek().kind === "name" ? name() : null;
    const variables: VariableDef[] = [];
    if (is("(")) {
      next();
      while (!is(")")) {
        const start = expect("$");
        const vname = name();
        expect(":");
        const type = typeRef();
        let defaultValue: Value | null = null;
        if (is("=")) {
          next();
          defaultValue = value();
        }
        directives();
        variables.push({ name: vname, type, defaultValue, line: start.line, column: start.column });
      }
      next();
    }
    directives();
    doc.operations.push({ type: kw, name: opName, variables, selections: selectionSet() });
  }
  return doc;
}

/** Variables referenced anywhere under these selections (to catch undeclared ones). */
export function usedVariables(doc: Document, selections: Selection[], out = new Set<string>(), seen = new Set<string>()): Set<string> {
  const visitValue = (v: Value): void => {
    if (v.kind === "var") out.add(v.name);
    else if (v.kind === "list") v.items.forEach(visitValue);
    else if (v.kind === "obj") Object.values(v.fields).forEach(visitValue);
  };
  for (const s of selections) {
    for (const d of s.directives) Object.values(d.args).forEach(visitValue);
    if (s.kind === "field") {
      Object.values(s.args).forEach(visitValue);
      if (s.selections) usedVariables(doc, s.selections, out, seen);
    } else if (s.kind === "inline") {
      usedVariables(doc, s.selections, out, seen);
    } else if (!seen.has(s.name)) {
      seen.add(s.name);
      const f = doc.fragments.get(s.name);
      if (f) usedVariables(doc, f.selections, out, seen);
    }
  }
  return out;
}
