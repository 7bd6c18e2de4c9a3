/**
 * A label swap (one label on, the others off) is one GraphQL mutation when GitHub has named the issue and the
 * labels by their node ids; by name over REST when it has not, when GitHub answers that a node is not there, and
 * when an id turns out to name another label. Each case ends with the issue carrying the labels the task shows.
 */
import { PERFORMERS, type PerformContext } from "../../src/effects/perform.js";
import type { OutboxEffect } from "../../src/effects/outbox.js";
import type { SeenQueries } from "../../src/effects/queries.js";
import { Seen } from "../../src/effects/seen.js";
import { GitHubError } from "../../src/github/port.js";
import { laneOf } from "../../src/machine/effects.js";
import { memoryGitHub, type MemoryGitHub } from "../support/memory-github.js";

const REPO = "o/r";
const AT = new Date("2026-01-01T00:00:00Z");

/** The seen store over maps: the same contract as effects/queries/seen.ts. */
function memorySeen(): SeenQueries {
  const issues = new Map<string, { labels: string; nodeId: string | null }>();
  const labels = new Map<string, string>();
  const key = (repo: string, n: number | string) => `${repo}#${n}`;
  return {
    labelsOf: async (repo, issue) => issues.get(key(repo, issue))?.labels ?? null,
    setLabels: async (repo, issue, json, _at, nodeId) => {
      const was = issues.get(key(repo, issue));
      issues.set(key(repo, issue), { labels: json, nodeId: nodeId ?? was?.nodeId ?? null });
    },
    forgetLabels: async (repo, issue) => void issues.delete(key(repo, issue)),
    issueNodeOf: async (repo, issue) => issues.get(key(repo, issue))?.nodeId ?? null,
    labelNodesOf: async (repo, names) =>
      names.flatMap((name) => {
        const nodeId = labels.get(key(repo, name));
        return nodeId ? [{ name, nodeId }] : [];
      }),
    setLabelNodes: async (repo, ls) => ls.forEach((l) => labels.set(key(repo, l.name), l.nodeId)),
    forgetLabelNodes: async (repo, names) => names.forEach((n) => labels.delete(key(repo, n))),
    checkRunOf: async () => undefined,
    setCheckRun: async () => undefined,
  };
}

const effect: OutboxEffect = {
  seq: 1,
  id: "eff-1",
  key: "key-1",
  kind: "label",
  spec: {} as OutboxEffect["spec"],
  taskId: "task-1",
  runId: null,
  installationId: 1,
  repo: REPO,
  attempts: 1,
  maybeSent: false,
  dryRun: false,
  createdAt: AT,
  errors: [],
  coalesceKey: null,
  lane: laneOf("label"),
};

/** The issue as a delivery shows it: its node id and its labels with theirs, as the memory port names them. */
async function delivered(gh: MemoryGitHub, seen: Seen): Promise<void> {
  const labels = (await gh.issueLabels({ owner: "o", repo: "r" }, 7))!;
  await seen.observe({
    repository: { full_name: REPO },
    issue: { number: 7, node_id: `I_${REPO}#7`, labels: labels.map((l) => ({ name: l.name, node_id: l.nodeId })) },
  });
  gh.calls.length = 0;
}

type Arrange = (gh: MemoryGitHub, seen: Seen, queries: SeenQueries) => Promise<void>;

/** The case, its arrangement, the port calls it costs, and the labels it says it removed. */
const cases: Array<[string, Arrange, string[], string[]]> = [
  [
    "every id known (the interlock's from an earlier answer): one mutation",
    async (_gh, _seen, q) =>
      q.setLabelNodes(REPO, [{ name: "agent:in-progress", nodeId: `LA_${REPO}/agent:in-progress` }], AT),
    ["swapLabels"],
    ["agent:queued"],
  ],
  [
    "the interlock's id never given: read once for the repository, then one mutation",
    async () => {},
    ["findLabels", "swapLabels"],
    ["agent:queued"],
  ],
  [
    "GitHub answers that a node is not there (a label deleted and made again): the labels read, then by name",
    async (_gh, _seen, q) => q.setLabelNodes(REPO, [{ name: "agent:in-progress", nodeId: "LA_deleted" }], AT),
    // GitHub ran the removal beside the refused addition: the read finds the queued label already off.
    ["swapLabels", "issueLabels", "addLabels"],
    [],
  ],
  [
    "an id that names another label (renamed since): that label comes off again, the interlock goes on by name",
    async (_gh, _seen, q) => q.setLabelNodes(REPO, [{ name: "agent:in-progress", nodeId: `LA_${REPO}/triage` }], AT),
    ["swapLabels", "removeLabel", "addLabels"],
    ["agent:queued"],
  ],
  [
    "a host that refuses the mutation itself: by name, nothing parked",
    async (gh, _seen, q) => {
      await q.setLabelNodes(REPO, [{ name: "agent:in-progress", nodeId: `LA_${REPO}/agent:in-progress` }], AT);
      const refusal = "Field 'addLabelsToLabelable' doesn't exist on type 'Mutation'";
      gh.failNext(
        "swapLabels",
        new GitHubError("swap labels", undefined, `GitHub rejected the GraphQL query: ${refusal}`, false, {
          graphqlErrors: [refusal],
        }),
      );
    },
    ["swapLabels", "addLabels", "removeLabel"],
    ["agent:queued"],
  ],
];

describe("a claim's label swap", () => {
  test.each(cases)("%s", async (_name, arrange, calls, removed) => {
    const gh = memoryGitHub({
      repos: {
        [REPO]: {
          issues: [
            { number: 7, title: "the task", labels: ["bug", "agent:queued"] },
            // The repository has the interlock label already (another task carries it).
            { number: 8, title: "another", labels: ["triage", "agent:in-progress"] },
          ],
        },
      },
    });
    const queries = memorySeen();
    const seen = new Seen(queries, { now: () => AT });
    await delivered(gh, seen);
    await arrange(gh, seen, queries);

    const ctx: PerformContext = { effect, task: null, run: null, github: gh, seen };
    const out = await PERFORMERS.label.perform(ctx, {
      issue: 7,
      label: "agent:in-progress",
      others: ["agent:queued", "agent:review"],
    });

    expect(gh.calls.map((c) => c.method)).toEqual(calls);
    expect(out).toEqual({ status: "done", result: { added: "agent:in-progress", removed } });
    const now = (await gh.issueLabels({ owner: "o", repo: "r" }, 7))!.map((l) => l.name);
    expect(now).toEqual(["bug", "agent:in-progress"]);
    // What was said last is what GitHub carries, and the interlock's id is its own again for the next swap.
    expect(await seen.labels(REPO, 7)).toEqual(now);
    const ids = await seen.nodeIds(REPO, 7, ["agent:in-progress", "agent:queued"]);
    expect(ids.labels.get("agent:in-progress")).toBe(`LA_${REPO}/agent:in-progress`);
  });

  test("a label the repository does not have yet: added by name (GitHub makes it), the queued one removed by name", async () => {
    const gh = memoryGitHub({
      repos: { [REPO]: { issues: [{ number: 7, title: "the task", labels: ["agent:queued"] }] } },
    });
    const seen = new Seen(memorySeen(), { now: () => AT });
    await delivered(gh, seen);
    const ctx: PerformContext = { effect, task: null, run: null, github: gh, seen };
    await PERFORMERS.label.perform(ctx, { issue: 7, label: "agent:in-progress", others: ["agent:queued"] });
    expect(gh.calls.map((c) => c.method)).toEqual(["findLabels", "addLabels", "removeLabel"]);
    expect((await gh.issueLabels({ owner: "o", repo: "r" }, 7))!.map((l) => l.name)).toEqual(["agent:in-progress"]);
    // The add's answer named the new label's id: the next swap needs no read.
    const ids = await seen.nodeIds(REPO, 7, ["agent:in-progress"]);
    expect(ids.labels.get("agent:in-progress")).toBe(`LA_${REPO}/agent:in-progress`);
  });

  test("the interlock already on, the queued label still there: one removal by name, no mutation", async () => {
    const gh = memoryGitHub({
      repos: { [REPO]: { issues: [{ number: 7, title: "the task", labels: ["agent:queued", "agent:in-progress"] }] } },
    });
    const seen = new Seen(memorySeen(), { now: () => AT });
    await delivered(gh, seen);
    const ctx: PerformContext = { effect, task: null, run: null, github: gh, seen };
    await PERFORMERS.label.perform(ctx, { issue: 7, label: "agent:in-progress", others: ["agent:queued"] });
    expect(gh.calls.map((c) => c.method)).toEqual(["removeLabel"]);
  });
});

describe("what a delivery names by node id", () => {
  test.each<[string, Record<string, unknown>, string | null, Record<string, string>]>([
    [
      "an issue and its labels",
      { issue: { number: 7, node_id: "I_7", labels: [{ name: "Agent:Queued", node_id: "LA_q" }] } },
      "I_7",
      { "agent:queued": "LA_q" },
    ],
    [
      "the label an unlabeled names, no longer on the issue",
      { issue: { number: 7, node_id: "I_7", labels: [] }, label: { name: "agent:review", node_id: "LA_r" } },
      "I_7",
      { "agent:review": "LA_r" },
    ],
    ["labels without ids (an older payload)", { issue: { number: 7, labels: [{ name: "bug" }] } }, null, {}],
  ])("%s", async (_name, payload, issueId, labelIds) => {
    const seen = new Seen(memorySeen(), { now: () => AT });
    await seen.observe({ repository: { full_name: REPO }, ...payload });
    const ids = await seen.nodeIds(REPO, 7, ["agent:queued", "agent:review", "bug"]);
    expect({ issue: ids.issue, labels: Object.fromEntries(ids.labels) }).toEqual({ issue: issueId, labels: labelIds });
  });
});
