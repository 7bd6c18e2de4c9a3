// Builds the delivery pool both targets receive: real example payloads from
// @octokit/webhooks-examples, varied so that deliveries land on many different
// task keys, serialised and signed once, before any clock starts.
import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
// A small deterministic PRNG, so both targets (and reruns) get the same pool.
import { mulberry32 } from "../../test/support/random.js";

type Json = Record<string, unknown>;

export interface ExampleGroup {
  name: string;
  actions: string[];
  examples: Json[];
}

/** One signed body. Many deliveries may reuse one body under different ids. */
export interface SignedBody {
  event: string;
  action: string | null;
  body: Buffer;
  signature: string;
}

/** One delivery as sent: a pooled body plus its own X-GitHub-Delivery id. */
export interface Delivery {
  id: string;
  payload: SignedBody;
}

interface MixEntry {
  event: string;
  action: string | null;
  weight: number;
}

// Roughly what an Orchestra installation sees: label and comment traffic on
// issues, PRs being opened, and CI reporting back. Pushes are there because
// GitHub sends them to every App subscribed to them, useful or not.
export const MIX: readonly MixEntry[] = [
  { event: "issues", action: "labeled", weight: 25 },
  { event: "issue_comment", action: "created", weight: 25 },
  { event: "pull_request", action: "opened", weight: 10 },
  { event: "check_run", action: "completed", weight: 15 },
  { event: "workflow_run", action: "completed", weight: 15 },
  { event: "push", action: null, weight: 10 },
];

export function loadExamples(): ExampleGroup[] {
  const require = createRequire(import.meta.url);
  const file = require.resolve("@octokit/webhooks-examples/api.github.com/index.json");
  return JSON.parse(readFileSync(file, "utf8")) as ExampleGroup[];
}

export function hex(rand: () => number, length: number): string {
  let s = "";
  while (s.length < length)
    s += Math.floor(rand() * 0x100000000)
      .toString(16)
      .padStart(8, "0");
  return s.slice(0, length);
}

function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

/**
 * Rewrites the identifiers a task key is derived from. Only numbers, ids, shas
 * and branch names change; the shape stays exactly what GitHub sends.
 */
function vary(event: string, payload: Json, n: number, uniqueId: number, rand: () => number): void {
  // The examples carry no installation (a few carry someone else's); Orchestra
  // keys everything by installation, so every delivery names the same one.
  payload.installation = { id: 1, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" };
  const sha = hex(rand, 40);
  const setPrs = (prs: unknown): void => {
    if (!Array.isArray(prs)) return;
    for (const pr of prs) {
      const p = obj(pr);
      if (p) p.number = n;
    }
  };
  switch (event) {
    case "issues": {
      const issue = obj(payload.issue);
      if (issue) Object.assign(issue, { number: n, id: uniqueId });
      break;
    }
    case "issue_comment": {
      const issue = obj(payload.issue);
      if (issue) Object.assign(issue, { number: n, id: uniqueId });
      const comment = obj(payload.comment);
      if (comment) comment.id = uniqueId + 1;
      break;
    }
    case "pull_request": {
      payload.number = n;
      const pr = obj(payload.pull_request);
      if (pr) {
        Object.assign(pr, { number: n, id: uniqueId });
        const head = obj(pr.head);
        if (head) Object.assign(head, { sha, ref: `agent/${n}` });
      }
      break;
    }
    case "check_run": {
      const run = obj(payload.check_run);
      if (run) {
        Object.assign(run, { id: uniqueId, head_sha: sha });
        setPrs(run.pull_requests);
        const suite = obj(run.check_suite);
        if (suite) {
          Object.assign(suite, { head_sha: sha, head_branch: `agent/${n}` });
          setPrs(suite.pull_requests);
        }
      }
      break;
    }
    case "workflow_run": {
      const run = obj(payload.workflow_run);
      if (run) {
        Object.assign(run, { id: uniqueId, run_number: n, head_sha: sha, head_branch: `agent/${n}` });
        setPrs(run.pull_requests);
      }
      break;
    }
    case "push": {
      payload.ref = `refs/heads/agent/${n}`;
      payload.after = sha;
      const head = obj(payload.head_commit);
      if (head) head.id = sha;
      break;
    }
  }
}

export function sign(secret: string, body: Buffer): string {
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

export interface PoolOptions {
  secret: string;
  /** Distinct bodies to precompute; deliveries cycle through them. */
  distinct: number;
  /** Distinct issue/PR numbers, i.e. roughly the number of task keys. */
  keys: number;
  seed: number;
  /** Which round the pool is for: its ids differ from every other round's, so no body repeats across rounds. */
  round: number;
}

export interface Pool {
  bodies: SignedBody[];
  /** Share of the pool per event.action, for the report. */
  mix: Record<string, number>;
  meanBytes: number;
}

export function buildPool(options: PoolOptions): Pool {
  const rand = mulberry32(options.seed);
  const groups = loadExamples();
  const candidates = MIX.map((entry) => {
    const group = groups.find((g) => g.name === entry.event);
    const examples = (group?.examples ?? []).filter((e) => (entry.action === null ? true : e.action === entry.action));
    if (examples.length === 0) {
      throw new Error(`no example payload for ${entry.event}.${entry.action ?? "*"}`);
    }
    return { ...entry, examples };
  });
  const totalWeight = candidates.reduce((sum, c) => sum + c.weight, 0);
  const bodies: SignedBody[] = [];
  const mix: Record<string, number> = {};
  let bytes = 0;
  for (let i = 0; i < options.distinct; i++) {
    let pick = rand() * totalWeight;
    let chosen = candidates[candidates.length - 1]!;
    for (const c of candidates) {
      if ((pick -= c.weight) < 0) {
        chosen = c;
        break;
      }
    }
    const example = chosen.examples[Math.floor(rand() * chosen.examples.length)]!;
    const payload = structuredClone(example);
    const n = 1 + Math.floor(rand() * options.keys);
    // Ids unique to this body (a comment takes the next one too): no two bodies are alike.
    vary(chosen.event, payload, n, 1_000_000_000 + options.round * 40_000_000 + 2 * i, rand);
    const body = Buffer.from(JSON.stringify(payload));
    bytes += body.length;
    bodies.push({ event: chosen.event, action: chosen.action, body, signature: sign(options.secret, body) });
    const label = chosen.action ? `${chosen.event}.${chosen.action}` : chosen.event;
    mix[label] = (mix[label] ?? 0) + 1;
  }
  return { bodies, mix, meanBytes: Math.round(bytes / Math.max(1, bodies.length)) };
}

/**
 * Deliveries for one phase. `offset` walks the pool so consecutive phases do
 * not replay the same bodies in the same order; ids are fresh so nothing is
 * deduplicated away.
 */
export function deliveries(pool: Pool, count: number, offset: number): Delivery[] {
  const out: Delivery[] = new Array(count);
  for (let i = 0; i < count; i++) {
    out[i] = { id: randomUUID(), payload: pool.bodies[(offset + i) % pool.bodies.length]! };
  }
  return out;
}
