/**
 * Reading git's answers, and the agent's environment: pure functions the
 * worker's git and process code call, table-tested on their own. The facts an
 * exit reports come from git's output through here, never from the agent.
 */
import { createHash } from "node:crypto";

/** The worker's own directory inside every worktree: never committed, never counted as a change. */
export const ORCHESTRA_DIR = ".orchestra";

export interface StatusEntry {
  /** The two-letter porcelain status (`??` untracked, ` M` modified, `R ` renamed, …). */
  code: string;
  path: string;
}

const ours = (path: string) => path === ORCHESTRA_DIR || path.startsWith(`${ORCHESTRA_DIR}/`);

export interface Status {
  /** The head commit, or null in a repository without one. */
  head: string | null;
  entries: StatusEntry[];
}

/** Fields before the path in each kind of porcelain v2 entry: ordinary, renamed or copied, unmerged. */
const V2_FIELDS: Record<string, number> = { "1": 8, "2": 9, u: 10 };

/**
 * `git status --porcelain=v2 --branch -z` as the head and the entries in
 * porcelain v1's two-letter codes (`.` becomes a space, `?` `??`), without
 * the worker's own `.orchestra/` (a rename's source path follows it as an
 * extra NUL field). One command answers what `rev-parse HEAD` and a v1
 * status answered in two.
 */
export function parseStatus(z: string): Status {
  const fields = z.split("\0");
  let head: string | null = null;
  const entries: StatusEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.startsWith("# branch.oid ")) {
      const oid = field.slice("# branch.oid ".length);
      head = /^[0-9a-f]{40,64}$/.test(oid) ? oid : null;
      continue;
    }
    let code: string;
    let path: string;
    if (field.startsWith("? ")) {
      code = "??";
      path = field.slice(2);
    } else {
      const before = V2_FIELDS[field[0] ?? ""];
      if (before === undefined || field[1] !== " ") continue;
      const parts = field.split(" ");
      if (parts.length <= before) continue;
      code = parts[1]!.replace(/\./g, " ");
      path = parts.slice(before).join(" ");
      if (field[0] === "2") i++; // the source path
    }
    if (!ours(path)) entries.push({ code, path });
  }
  return { head, entries };
}

/**
 * The worktree's state in one short line for a heartbeat: how many paths
 * differ from HEAD and a digest of the status, the diff's stat and HEAD, so two
 * heartbeats tell whether anything moved without sending the diff itself.
 */
export function worktreeDigest(head: string, entries: StatusEntry[], diffStat: string): string {
  const hash = createHash("sha256")
    .update(head)
    .update("\0")
    .update(entries.map((e) => `${e.code} ${e.path}`).join("\n"))
    .update("\0")
    .update(diffStat)
    .digest("hex")
    .slice(0, 16);
  return `${entries.length} changed ${hash}`;
}

/** A count git printed (`rev-list --count`), or null when the output is not one. */
export function parseCount(text: string): number | null {
  const t = text.trim();
  return /^\d+$/.test(t) ? Number(t) : null;
}

/** Shell words that are not a program on PATH: the preflight cannot resolve what they run, so it does not try. */
const SHELL_WORDS = new Set(
  (
    "! { ( [ [[ . : source exec eval command builtin cd export set unset env true false test " +
    "if for while until case time nohup"
  )
    .split(" ")
    .filter(Boolean),
);

/**
 * The program an agent command starts: its first word after any `NAME=value`
 * assignments, unquoted; null when the command starts with shell syntax the
 * preflight cannot follow (a builtin, a subshell, a variable).
 */
export function commandProgram(command: string): string | null {
  const words = command.trim().match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  for (const raw of words) {
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(raw)) continue;
    const word = raw.replace(/^(["'])(.*)\1$/, "$2");
    if (SHELL_WORDS.has(word) || /[$`()|;&<>]/.test(word)) return null;
    return word;
  }
  return null;
}

/** Settings an agent never sees: tokens that could push, the worker's own, and git config smuggled through env. */
const WITHHELD =
  /^(GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN|GITHUB_PAT|GIT_ASKPASS|SSH_ASKPASS)$/;
const WITHHELD_PATTERN = /^(ORCHESTRA_|GIT_CONFIG_)|TOKEN$|^(GITHUB|GH)_.*(PAT|KEY|SECRET)$/;

/** The run's variables, as the agent reads them. */
export interface RunVariables {
  ORCHESTRA_TASK_FILE: string;
  ORCHESTRA_RUN_ID: string;
  ORCHESTRA_REPO: string;
  ORCHESTRA_ISSUE: string;
  ORCHESTRA_BRANCH: string;
  ORCHESTRA_CONTINUATION: string;
  ORCHESTRA_DECISIONS_DIR: string;
  ORCHESTRA_QUESTION_FILE: string;
  ORCHESTRA_USAGE_FILE: string;
}

/**
 * The agent's environment: the worker's, without any GitHub or Orchestra
 * token (the worker pushes, not the agent) and without git settings passed
 * through the environment, plus the run's ORCHESTRA_* variables.
 */
export function agentEnv(env: Record<string, string | undefined>, run: RunVariables): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || WITHHELD.test(k) || WITHHELD_PATTERN.test(k)) continue;
    kept[k] = v;
  }
  return { ...kept, GIT_TERMINAL_PROMPT: "0", ...run };
}

/** The header git sends to GitHub for a token: Basic auth as GitHub documents for installation tokens. */
export function authHeader(token: string): string {
  return `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
}

/**
 * The model usage an agent left in `.orchestra/usage.json`, or null when the
 * file is absent or says nothing usable (a wrong file is not a reason to lose
 * the run's report).
 */
export function parseUsage(text: string | null): { inputTokens: number; outputTokens: number; costUsd: number } | null {
  if (!text) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const int = (x: unknown) => (typeof x === "number" && Number.isInteger(x) && x >= 0 ? x : null);
  const inputTokens = int(v["inputTokens"]) ?? 0;
  const outputTokens = int(v["outputTokens"]) ?? 0;
  const cost = v["costUsd"];
  const costUsd = typeof cost === "number" && cost >= 0 && cost <= 1_000_000 ? cost : 0;
  if (int(v["inputTokens"]) === null && int(v["outputTokens"]) === null && costUsd === 0) return null;
  return { inputTokens, outputTokens, costUsd };
}

/** The agent's exit code as a shell reports it: its own, or 128 + the signal's number when a signal ended it. */
export function exitCodeOf(code: number | null, signal: string | null, signals: Record<string, number>): number {
  if (code !== null) return code;
  return 128 + (signal ? (signals[signal] ?? 0) : 0);
}
