/**
 * What one task costs GitHub: a task taken the whole happy path (queued,
 * claimed by the real `orchestra worker`, its PR opened, Orchestra's check run,
 * merged, done) on real git, with every request the fake GitHub answered
 * counted by route. The bound is the budget per task; the table shows where
 * the calls go when it is exceeded.
 */
import type { RecordedRequest } from "../fake-github/index.js";
import { oneProvider } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { REPO } from "../support/lifecycle-rig.js";
import { startLoop, type LoopRig } from "../support/worker-rig.js";

/**
 * GitHub API calls in all for one happy-path task: the App's (labels, check run, branch delete) and the worker's
 * (its brokered token, opening the PR) together. Each label swap (queued to in-progress at the claim, in-progress
 * to review at the PR) is one GraphQL mutation, the issue and labels named by the node ids webhooks and earlier
 * label writes gave.
 */
const BUDGET = 10;

/**
 * Of those, the calls that count against the installation's REST limit (5,000 an hour): minting the token is the
 * App's own call (its JWT, a limit of its own); the label swaps and the merged branch's guard are GraphQL
 * (GraphQL's separate budget of points).
 */
const INSTALLATION_REST_BUDGET = 6;

/**
 * Where the repository deletes merged branches itself (its "Automatically delete head branches" setting, which
 * GitHub's delivery of the merge shows), the branch is left to GitHub: no guard query, no delete.
 */
const AUTO_DELETE_BUDGET = 8;

/** Calls outside the installation's REST limit: the App's JWT routes, and GraphQL. */
const outsideRestLimit = (r: RecordedRequest) => r.path.startsWith("/app/") || r.graphql !== undefined;

/** git's smart HTTP (fetch and push): transfers, not API calls, and outside the API's rate limit. */
const GIT = /\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/** API requests counted by route (`METHOD /template`), most first, as a table for a failure message. */
function byRoute(requests: RecordedRequest[]): { total: number; table: string } {
  const counts = new Map<string, number>();
  for (const r of requests) {
    if (GIT.test(r.path)) continue;
    const route = r.graphql ? `POST /graphql ${r.graphql.operationName ?? ""}` : (r.route ?? `${r.method} ${r.path}`);
    counts.set(route, (counts.get(route) ?? 0) + 1);
  }
  const rows = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const table = rows.map(([route, n]) => `${String(n).padStart(3)}  ${route}`).join("\n");
  const total = rows.reduce((sum, [, n]) => sum + n, 0);
  return { total, table: `${table}\n${String(total).padStart(3)}  in all` };
}

// The calls a task costs on GitHub do not depend on the database under the service.
describe.each(oneProvider)("GitHub calls for one task on %s", (provider) => {
  let rig: LoopRig;
  afterEach(async () => {
    await rig?.stop();
  });

  const stateOf = async (issue: number) =>
    ((await rig.task(issue)) as { task: { state: string; prNumber: number | null } }).task;

  /** One task the whole happy path, on the issue given. */
  async function happyPath(issue: number) {
    await rig.queue(issue);
    const agent = rig.agent(
      `fix-${issue}`,
      `echo 'fix ${issue}' > src/app.txt\ngit add src/app.txt\ngit commit -qm 'Fix'`,
    );
    const { code, stderr } = await rig.once(["--agent", agent]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const task = await stateOf(issue);
    expect(task.state).toBe("review");
    await rig.settle();
    rig.fake.state.mergePull(REPO, task.prNumber!, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: task.prNumber!, sender: "alice" });
    await eventually(async () => ((await stateOf(issue)).state === "done" ? true : undefined), 10_000, "done");
    await rig.settle();
    expect(rig.labels(issue)).toEqual([]);
  }

  test(`queue → claim → PR → check run → merge → done costs at most ${BUDGET} calls, ${INSTALLATION_REST_BUDGET} on the REST limit`, async () => {
    rig = await startLoop({ provider });
    // The first task pays what the App reads once and keeps (the repository's config, its settings, a sender's
    // permission); the second is what each further task costs.
    await happyPath(1);
    const from = rig.fake.requests.length;
    await happyPath(10);

    const requests = rig.fake.requests.slice(from);
    const calls = byRoute(requests);
    if (calls.total > BUDGET) throw new Error(`${calls.total} GitHub calls, budget ${BUDGET}:\n${calls.table}`);
    const rest = byRoute(requests.filter((r) => !outsideRestLimit(r)));
    if (rest.total > INSTALLATION_REST_BUDGET)
      throw new Error(
        `${rest.total} calls on the installation's REST limit, budget ${INSTALLATION_REST_BUDGET}:\n${rest.table}`,
      );
    // Both swaps went out as one mutation each; no label was added or removed by name.
    expect(calls.table).toMatch(/2 {2}POST \/graphql SwapLabels/);
    expect(calls.table).not.toMatch(/POST \/repos\/\{owner\}\/\{repo\}\/issues\/\{issue_number\}\/labels/);
    rig.fake.assertNoViolations();
  });

  test(`in a repository that deletes merged branches itself, the whole task costs at most ${AUTO_DELETE_BUDGET} calls`, async () => {
    rig = await startLoop({ provider });
    rig.fake.state.repo(REPO).deleteBranchOnMerge = true;
    await happyPath(1);
    const from = rig.fake.requests.length;
    await happyPath(10);

    const calls = byRoute(rig.fake.requests.slice(from));
    if (calls.total > AUTO_DELETE_BUDGET)
      throw new Error(`${calls.total} GitHub calls, budget ${AUTO_DELETE_BUDGET}:\n${calls.table}`);
    // GitHub deleted the branch at the merge; Orchestra neither read nor deleted it.
    expect(calls.table).not.toMatch(/git\/refs|MergedBranch/);
    const { branch } = ((await rig.task(10)) as { task: { branch: string } }).task;
    expect(branch).toMatch(/issue-10$/);
    expect(rig.fake.state.repo(REPO).branches.has(branch)).toBe(false);
    rig.fake.assertNoViolations();
  });
});
