/**
 * A repository's infraPatterns through the App: a pattern RE2 cannot run is
 * refused where every configuration problem is reported (the comment on the
 * issue, the task's waitingFor), and a pattern that backtracks exponentially
 * in JavaScript's engine classifies a long failing check — and the App goes on
 * answering — because repository patterns run in RE2. Signed webhooks into the
 * real App, the fake GitHub behind it.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { providers } from "../support/databases.js";

const REFUSED =
  "`(?<!test )timeout` is refused: it uses a lookaround ((?=, (?!, (?<= or (?<!), which the linear-time matcher " +
  "(RE2) does not support. infraPatterns use RE2 syntax (JavaScript's, without back-references or lookarounds): " +
  "rewrite or remove it";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /** An Actions run on `sha` with one failed job whose check output is `summary`; delivers its check_run.completed. */
  async function failedJob(sha: string, summary: string): Promise<void> {
    const repo = rig.fake.state.repo(REPO);
    const wf =
      [...repo.workflows.values()].find((x) => x.path.endsWith("ci.yml")) ??
      rig.fake.state.addWorkflow(REPO, { path: "ci.yml" });
    // A pull_request run is on the PR's head branch, which is how GitHub matches its checks to the PR.
    const headBranch = [...repo.pulls.values()].find((p) => p.headSha === sha && !p.headRepo)?.headRef ?? null;
    const run = rig.fake.state.addWorkflowRun(REPO, {
      workflowId: wf.id,
      headBranch,
      headSha: sha,
      event: "pull_request",
      status: "completed",
      conclusion: "failure",
      jobs: [{ name: "e2e", conclusion: "failure", output: { title: "e2e / chrome", summary } }],
    });
    const [job] = rig.fake.state.jobsOf(repo, run);
    await rig.deliverPayload(
      "check_run",
      fakeWebhookPayload(
        rig.fake,
        "check_run",
        "completed",
        { repo: REPO, sender: "alice" },
        { check_run: rig.fake.json.checkRun(repo, repo.checkRuns.get(job!.id)!) },
      ),
    );
  }

  const reruns = () => rig.fake.state.reruns.filter((r) => r.kind === "failed-jobs");

  test("a lookaround in infraPatterns makes the configuration invalid, naming the pattern and why", async () => {
    rig = await startRig({ provider });
    rig.config('infraPatterns:\n  - "selenium grid"\n  - "(?<!test )timeout"\n');
    const w = await rig.worker();
    await rig.queue(1);
    const bodies = rig.fake.state
      .commentsOn(REPO, 1)
      .map((c) => c.body.replace(/\n\n<!-- orchestra:effect .* -->$/, ""));
    expect(bodies).toEqual([
      "Orchestra is paused for this repository: `.github/orchestra.yml` is invalid.\n\n" +
        `- infraPatterns.1: ${REFUSED}\n\n` +
        "Fix the file on the default branch; the next label change is handled with the corrected configuration.",
    ]);
    expect((await w.claim()).status).toBe(204);
    // Read again after a push to it (the sweep), the problem is stated on the repository's tasks too.
    rig.config("");
    await rig.pushConfig();
    await rig.queue(2);
    expect((await rig.task(2)).task.waitingFor).toBeUndefined();
    rig.config('infraPatterns:\n  - "(?<!test )timeout"\n');
    await rig.pushConfig();
    await rig.sweep();
    expect((await rig.task(2)).task.waitingFor).toEqual({
      gate: "config-invalid",
      detail: `.github/orchestra.yml is invalid: infraPatterns.0: ${REFUSED}`,
    });
    expect((await w.claim()).status).toBe(204);
  });

  test("a catastrophic pattern classifies a 50,000-character check output, and the App goes on", async () => {
    rig = await startRig({ provider });
    rig.config('infraPatterns:\n  - "(a+)+$"\n');
    const w = await rig.worker();
    const { head } = await rig.inReview(w, 1);
    await failedJob(head, "a".repeat(50_000));
    expect(reruns()).toHaveLength(1);
    expect((await rig.task(1)).task.state).toBe("review");
    // JavaScript's engine would try about 2^50000 ways to match this before saying no.
    await failedJob(head, `${"a".repeat(50_000)}!`);
    expect(reruns()).toHaveLength(1);
    expect((await rig.task(1)).task.state).toBe("queued"); // fix-checks: a genuine failure
  });
});
