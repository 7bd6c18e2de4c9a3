/**
 * GitHub's REST description (from @octokit/openapi) reduced to what request
 * validation needs: path templates, parameters and JSON request-body schemas.
 * api.github.com's by default; the other hosts' (GitHub Enterprise Cloud, each
 * GitHub Enterprise Server release) on request.
 *
 * The full description is 13 MB. Parsing it costs ~150 ms and converting its
 * schemas more, and every Jest test file gets a fresh module registry, so an
 * in-memory memo alone would pay that once per test file. The reduced index
 * is therefore also written to `node_modules/.cache/` (keyed by the source
 * file's size and mtime) and later processes read that small file instead.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

/** Bump when the shape of the cached index changes. */
const INDEX_FORMAT = 3;

export interface ParamSpec {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: JsonSchema;
}

export interface OperationSpec {
  method: string; // lower case, as in the description
  path: string; // template, e.g. /repos/{owner}/{repo}/issues/{issue_number}
  operationId: string;
  docs: string | null;
  params: ParamSpec[];
  body: { required: boolean; schema: JsonSchema | null; contentTypes: string[] } | null;
}

export type JsonSchema = Record<string, any>;

interface IndexFile {
  format: number;
  source: string;
  operations: OperationSpec[];
  schemas: Record<string, JsonSchema>;
}

export interface OperationMatch {
  op: OperationSpec;
  /** decoded path parameter values */
  params: Record<string, string>;
}

/**
 * Path templates as a trie. A position can hold several parameter segments
 * (`commits/{commit_sha}/…` and `commits/{ref}/…`, or `{basehead}` and the
 * mixed `{base}...{head}`), each its own child, tried in order.
 */
interface TrieNode {
  literal: Map<string, TrieNode>;
  params: ParamChild[];
  ops: Map<string, OperationSpec>; // by upper-case method
}

interface ParamChild {
  template: string;
  names: string[];
  /** null for a whole-segment parameter */
  pattern: RegExp | null;
  node: TrieNode;
}

/**
 * Parameters that GitHub accepts with unescaped slashes when they are the last
 * segment (`git/ref/heads/main`, `contents/.github/orchestra.yml`,
 * `compare/main...feature/x`). Octokit escapes them, other clients may not.
 */
const GREEDY_PARAMS = new Set(["ref", "path", "basehead", "branch", "commit_sha"]);

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

function newNode(): TrieNode {
  return { literal: new Map(), params: [], ops: new Map() };
}

function paramChild(template: string): ParamChild {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  if (/^\{[^}]+\}$/.test(template)) return { template, names, pattern: null, node: newNode() };
  const source = template
    .split(/\{[^}]+\}/)
    .map((lit) => lit.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("(.+?)");
  return { template, names, pattern: new RegExp(`^${source}$`.replace(/\(\.\+\?\)\$$/, "(.+)$")), node: newNode() };
}

type Found = [TrieNode, [ParamChild, string][]];

/** Literal segments first, then parameters; `method` null finds any operation. */
function walk(
  node: TrieNode,
  segs: string[],
  i: number,
  acc: [ParamChild, string][],
  method: string | null,
): Found | null {
  const accepts = (n: TrieNode): boolean => (method ? n.ops.has(method) : n.ops.size > 0);
  if (i === segs.length) return accepts(node) ? [node, acc] : null;
  const seg = segs[i]!;
  const lit = node.literal.get(seg);
  if (lit) {
    const r = walk(lit, segs, i + 1, acc, method);
    if (r) return r;
  }
  if (seg === "") return null;
  for (const child of node.params) {
    if (child.pattern && !child.pattern.test(safeDecode(seg))) continue;
    const r = walk(child.node, segs, i + 1, [...acc, [child, seg]], method);
    if (r) return r;
  }
  // a trailing greedy parameter swallows the rest of the path
  for (const child of node.params) {
    if (!child.pattern && GREEDY_PARAMS.has(child.names[0]!) && accepts(child.node) && i + 1 < segs.length) {
      return [child.node, [...acc, [child, segs.slice(i).join("/")]]];
    }
  }
  return null;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// ---------------------------------------------------------------------------
// Loading, with a per-realm memo and an on-disk cache shared by processes.

/**
 * The descriptions @octokit/openapi ships, by host: `api.github.com`, `ghec`
 * (GitHub Enterprise Cloud) and `ghes-<major>.<minor>` (GitHub Enterprise
 * Server releases).
 */
export type Description = "api.github.com" | "ghec" | `ghes-${number}.${number}`;

const memo = new Map<Description, OpenApiIndex>();

/** The descriptions of GitHub Enterprise Server releases @octokit/openapi ships, oldest first. */
export function shippedGhesReleases(): string[] {
  const dir = path.dirname(resolveSpecPath("api.github.com"));
  const versions = fs
    .readdirSync(dir)
    .map((f) => /^ghes-(\d+\.\d+)\.json$/.exec(f)?.[1])
    .filter((v): v is string => v !== undefined);
  const key = (v: string) => v.split(".").map(Number) as [number, number];
  return versions.sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1]);
}

export function loadOpenApi(description: Description = "api.github.com"): OpenApiIndex {
  const known = memo.get(description);
  if (known) return known;
  const specPath = resolveSpecPath(description);
  const stat = fs.statSync(specPath);
  const source = `${description}:${stat.size}:${Math.trunc(stat.mtimeMs)}:${INDEX_FORMAT}`;
  const cachePath = path.join(
    cacheDir(specPath),
    `openapi-index-${createHash("sha1").update(source).digest("hex").slice(0, 12)}.json`,
  );
  let file: IndexFile | null = null;
  try {
    const cached = JSON.parse(fs.readFileSync(cachePath, "utf8")) as IndexFile;
    if (cached.format === INDEX_FORMAT && cached.source === source) file = cached;
  } catch {
    // absent or unreadable: rebuild below
  }
  if (!file) {
    file = buildIndex(JSON.parse(fs.readFileSync(specPath, "utf8")), source);
    try {
      fs.mkdirSync(path.dirname(cachePath), { recursive: true });
      // parallel Jest workers may race: write aside, then rename atomically
      const tmp = `${cachePath}.${process.pid}.${Date.now()}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(file));
      fs.renameSync(tmp, cachePath);
    } catch {
      // a read-only checkout still works, only slower
    }
  }
  const index = new OpenApiIndex(file);
  memo.set(description, index);
  return index;
}

function resolveSpecPath(description: Description): string {
  const require = createRequire(import.meta.url);
  return require.resolve(`@octokit/openapi/generated/${description}.json`);
}

function cacheDir(specPath: string): string {
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = specPath.lastIndexOf(marker);
  const root = at >= 0 ? specPath.slice(0, at + marker.length) : path.join(process.cwd(), "node_modules/");
  return path.join(root, ".cache", "fake-github");
}

type Spec = any;

function buildIndex(spec: Spec, source: string): IndexFile {
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
