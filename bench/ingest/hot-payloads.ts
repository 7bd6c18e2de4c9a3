// Deliveries that all land on one task key, built from GitHub's example
// payloads (@octokit/webhooks-examples), as a hot issue or PR sends them:
// - "issue": `issue_comment.created` on one issue, a bot or a long thread;
// - "checks": a CI matrix on one PR's head sha, every check run first
//   `created` (queued), then `completed` in no particular order, a few failing.
// Every body is distinct (its comment or check-run id), because a body seen
// before under another delivery id is a replay that Orchestra acknowledges
// without storing it; the bench would then measure that, not the hot key.
import { randomUUID } from "node:crypto";
import { mulberry32 } from "../../test/support/random.js";
import { hex, loadExamples, sign, type Delivery } from "./payloads.js";

export type HotShape = "issue" | "checks";
export const HOT_SHAPES: readonly HotShape[] = ["issue", "checks"];

type Json = Record<string, unknown>;

export interface HotOptions {
  secret: string;
  seed: number;
  /** The issue or PR number every delivery is about. */
  number: number;
  /** Check runs per CI matrix ("checks"): each is one `created` and one `completed`. */
  matrix: number;
}

export interface HotSource {
  shape: HotShape;
  /** The task key Orchestra files every delivery under. */
  taskKey: string;
  /** What the deliveries are, for the report. */
  describe: string;
  /** The next `count` deliveries, serialised and signed; successive calls continue the sequence. */
  next(count: number): Delivery[];
}

const obj = (value: unknown): Json | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;

function examples(event: string, action: string, where: (e: Json) => boolean = () => true): Json[] {
  const group = loadExamples().find((g) => g.name === event);
  const found = (group?.examples ?? []).filter((e) => e.action === action && where(e));
  if (found.length === 0) throw new Error(`no example payload for ${event}.${action}`);
  return found;
}

const INSTALLATION = { id: 1, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" };

function signed(secret: string, event: string, action: string, payload: Json): Delivery {
  const body = Buffer.from(JSON.stringify(payload));
  return { id: randomUUID(), payload: { event, action, body, signature: sign(secret, body) } };
}

export function hotSource(shape: HotShape, o: HotOptions): HotSource {
  return shape === "issue" ? issueSource(o) : checksSource(o);
}

function issueSource(o: HotOptions): HotSource {
  const created = examples("issue_comment", "created");
  // One repository and one issue for all: the examples name a few different ones.
  const repository = structuredClone(created[0]!.repository);
  const fullName = String(obj(repository)?.full_name);
  const issue = { ...structuredClone(obj(created[0]!.issue)!), number: o.number, id: 910_000_000 + o.number };
  let n = 0;
  return {
    shape: "issue",
    taskKey: `1/${fullName}#${o.number}`,
    describe: `issue_comment.created on ${fullName}#${o.number}`,
    next(count) {
      const out: Delivery[] = [];
      for (let i = 0; i < count; i++, n++) {
        const payload = structuredClone(created[n % created.length]!);
        Object.assign(payload, { installation: INSTALLATION, repository, issue });
        const comment = obj(payload.comment);
        if (comment) comment.id = 920_000_000 + n;
        out.push(signed(o.secret, "issue_comment", "created", payload));
      }
      return out;
    },
  };
}

function checksSource(o: HotOptions): HotSource {
  const rand = mulberry32(o.seed);
  const withPr = (e: Json): boolean => Array.isArray(obj(e.check_run)?.pull_requests);
  const queued = examples("check_run", "created", withPr);
  const passed = examples("check_run", "completed", (e) => withPr(e) && obj(e.check_run)?.conclusion === "success");
  const failed = examples("check_run", "completed", (e) => withPr(e) && obj(e.check_run)?.conclusion === "failure");
  const repository = structuredClone(queued[0]!.repository);
  const fullName = String(obj(repository)?.full_name);
  const sha = hex(rand, 40);
  const branch = `agent/${o.number}`;
  const suiteId = 930_000_000 + o.number;

  const checkRun = (example: Json, k: number): Json => {
    const payload = structuredClone(example);
    Object.assign(payload, { installation: INSTALLATION, repository });
    const run = obj(payload.check_run)!;
    const shard = (k % o.matrix) + 1;
    Object.assign(run, { id: 940_000_000 + k, head_sha: sha, name: `test (shard ${shard}/${o.matrix})` });
    const prs = (run.pull_requests as unknown[]).map((pr) => {
      const p = structuredClone(obj(pr)!);
      p.number = o.number;
      const head = obj(p.head);
      if (head) Object.assign(head, { sha, ref: branch });
      return p;
    });
    run.pull_requests = prs;
    const suite = obj(run.check_suite);
    if (suite) Object.assign(suite, { id: suiteId, head_sha: sha, head_branch: branch, pull_requests: prs });
    return payload;
  };

  // The sequence, one matrix at a time: all created, then all completed in a shuffled order.
  const plan: { k: number; done: boolean }[] = [];
  let matrices = 0;
  const refill = (): void => {
    const base = matrices++ * o.matrix;
    const runs = Array.from({ length: o.matrix }, (_, i) => base + i);
    for (const k of runs) plan.push({ k, done: false });
    for (let i = runs.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [runs[i], runs[j]] = [runs[j]!, runs[i]!];
    }
    for (const k of runs) plan.push({ k, done: true });
  };
  return {
    shape: "checks",
    taskKey: `1/${fullName}#${o.number}`,
    describe:
      `check_run.created/completed on ${fullName}#${o.number} at ${sha.slice(0, 7)}, ` +
      `matrices of ${o.matrix} check runs, 1 in 20 failing`,
    next(count) {
      const out: Delivery[] = [];
      for (let i = 0; i < count; i++) {
        if (plan.length === 0) refill();
        const { k, done } = plan.shift()!;
        const example = !done ? queued[k % queued.length]! : k % 20 === 19 ? failed[0]! : passed[k % passed.length]!;
        out.push(signed(o.secret, "check_run", done ? "completed" : "created", checkRun(example, k)));
      }
      return out;
    },
  };
}
