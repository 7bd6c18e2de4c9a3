/**
 * Path templates as a trie, and matching a raw path against it: literal
 * segments before parameters, several parameter shapes at one position, and
 * the trailing parameters GitHub accepts with unescaped slashes.
 */
import type { OperationSpec } from "./types.js";

/**
 * Path templates as a trie. A position can hold several parameter segments
 * (`commits/{commit_sha}/…` and `commits/{ref}/…`, or `{basehead}` and the
 * mixed `{base}...{head}`), each its own child, tried in order.
 */
export interface TrieNode {
  literal: Map<string, TrieNode>;
  params: ParamChild[];
  ops: Map<string, OperationSpec>; // by upper-case method
}

export interface ParamChild {
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

export function newNode(): TrieNode {
  return { literal: new Map(), params: [], ops: new Map() };
}

export function paramChild(template: string): ParamChild {
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
export function walk(
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

export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
