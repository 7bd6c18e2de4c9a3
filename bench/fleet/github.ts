// The fleet's GitHub: the project's stateful fake with one installation and one repository served over real
// git, N issues a maintainer queues at once, GitHub's own webhooks for what is pushed and opened through it,
// and CI that passes on every pull request once Orchestra has it in review; the maintainer then merges it
// (GitHub delivers pull_request.closed and issues.closed). Every request anyone makes is recorded with its
// time and route: that is what the report counts.
import { startFakeGitHub, type FakeGitHub } from "../../test/fake-github/index.js";
import type { RecordedRequest } from "../../test/fake-github/http.js";
import { autoWebhooks } from "../../test/support/github-events.js";
import { checkRunCompleted } from "../../test/support/ci-runs.js";
import { fakeWebhookPayload } from "../../test/support/webhooks.js";

export const INSTALLATION = 7;
export const REPO = "acme/fleet";
export const MAINTAINER = "mona";
const PULL_OPENED = /^\/repos\/[^/]+\/[^/]+\/pulls$/;
const POLL_MS = 50;

export interface FleetGitHub {
  fake: FakeGitHub;
  /** When each pull request was merged (ms), by issue. */
  merges: Map<number, number>;
  /** Points GitHub's webhooks at `url` (the replicas' front). */
  connect(url: string, secret: string): void;
  /** The maintainer labels `count` issues `agent:queued`, one delivery each, as fast as GitHub sends them. */
  queue(count: number): Promise<number>;
  /** Resolves once every issue is closed and CI has nothing left to do. */
  allMerged(count: number): Promise<void>;
  /** Requests made to GitHub by the service or the workers (not the bench's own reads of the fake's state). */
  requests(): RecordedRequest[];
  close(): Promise<void>;
}

export async function startFleetGitHub(onError: (err: unknown) => void): Promise<FleetGitHub> {
  const fake = await startFakeGitHub({ appSlug: "orchestra-fleet" });
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, {
    installationId: INSTALLATION,
    git: { files: { "README.md": "# fleet\n", "orchestra.txt": "fleet\n" } },
  });
  fake.state.setPermission(REPO, MAINTAINER, "write");
  // A repository that has run tasks before has Orchestra's labels: its first claims ever add each by name once.
  for (const name of ["agent:queued", "agent:in-progress", "agent:review"]) fake.state.addLabel(REPO, name);
  const workflow = fake.state.addWorkflow(REPO, { path: "ci.yml", name: "ci" });
  const merges = new Map<number, number>();
  let stopped = false;
  const work = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    const t = p.catch(onError).finally(() => work.delete(t));
    work.add(t);
  };
  const until = async (cond: () => boolean): Promise<boolean> => {
    while (!stopped) {
      if (cond()) return true;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return false;
  };

  // CI on a pull request: in progress until Orchestra has it in review, then a success; then the merge.
  const ci = async (pr: number): Promise<void> => {
    const { state } = fake;
    const pull = state.pull(REPO, pr);
    const run = state.addWorkflowRun(REPO, {
      workflowId: workflow.id,
      headBranch: pull.headRef,
      headSha: pull.headSha,
      event: "pull_request",
      status: "in_progress",
      jobs: [{ name: "test", status: "in_progress" }],
    });
    const [issue] = state.closingIssues(state.repo(REPO), pull);
    if (issue === undefined) throw new Error(`PR #${pr} closes no issue`);
    if (!(await until(() => state.labelsOf(REPO, issue).includes("agent:review")))) return;
    const job = state.jobsOf(state.repo(REPO), run)[0]!;
    state.completeWorkflowRun(REPO, run.id, "success");
    const repo = state.repo(REPO);
    await state.hookDeliveries.send("check_run", checkRunCompleted(fake, REPO, job.id, "github-actions"));
    await state.hookDeliveries.send(
      "workflow_run",
      fakeWebhookPayload(
        fake,
        "workflow_run",
        "completed",
        { repo: REPO, sender: "github-actions" },
        { workflow_run: fake.json.workflowRun(repo, repo.workflowRuns.get(run.id)!) },
      ),
    );
    state.mergePull(REPO, pr, { by: MAINTAINER });
    merges.set(issue, Date.now());
    const closed = fakeWebhookPayload(fake, "pull_request", "closed", { repo: REPO, pull: pr, sender: MAINTAINER });
    await state.hookDeliveries.send("pull_request", closed);
    const issueClosed = fakeWebhookPayload(
      fake,
      "issues",
      undefined,
      { repo: REPO, issue, sender: MAINTAINER },
      { action: "closed" },
    );
    await state.hookDeliveries.send("issues", issueClosed);
  };

  return {
    fake,
    merges,
    connect(url, secret) {
      fake.setWebhookTarget(url, secret);
      autoWebhooks(fake, (rec, reply) => {
        if (rec.method === "POST" && PULL_OPENED.test(rec.path) && reply.status === 201)
          track(ci((reply.body as { number: number }).number));
      });
    },
    async queue(count) {
      const at = Date.now();
      for (let n = 1; n <= count; n++) {
        fake.state.addIssue(REPO, {
          number: n,
          title: `Task ${n}`,
          body: `Write task-${n}.txt.`,
          labels: ["agent:queued"],
          user: MAINTAINER,
        });
        const payload = fakeWebhookPayload(fake, "issues", "labeled", {
          repo: REPO,
          issue: n,
          label: "agent:queued",
          sender: MAINTAINER,
        });
        await fake.state.hookDeliveries.send("issues", payload);
      }
      return at;
    },
    async allMerged(count) {
      await until(() => merges.size >= count && work.size === 0);
    },
    requests: () => fake.requests.filter((r) => r.operationId !== undefined),
    async close() {
      stopped = true;
      await Promise.allSettled([...work]);
      await fake.close();
    },
  };
}
