/**
 * After submission, end to end: checks failing on a task's PR head (reruns
 * for infrastructure, fix-checks for the rest), the base moving under open
 * task PRs, reviews, and the Orchestra check run — signed webhooks into the
 * real App, the fake GitHub behind it.
 */
import { randomUUID } from "node:crypto";
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload, sendWebhook } from "../support/webhooks.js";
import { deliverCiRun, deliverWorkflowRun, type CiJob } from "../support/ci-runs.js";
import { onceForAll, providers } from "../support/databases.js";
import { LOG_TAIL_MAX_BYTES } from "../../src/github/mappers.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  const anyDb = onceForAll(provider);
  let rig: Rig;
  let w: WorkerClient;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const ciRun = (sha: string, jobs: CiJob[]) => deliverCiRun(rig, sha, jobs);

  const reruns = () => rig.fake.state.reruns.filter((r) => r.kind === "failed-jobs");

  test("a cancelled job and a runner-lost failure each rerun the failed jobs once; a third infrastructure failure on the same sha escalates once", async () => {
    rig = await startRig({ provider });
    w = await rig.worker();
    const { pr, head } = await rig.inReview(w, 1);
    const first = await ciRun(head, [{ name: "build", conclusion: "cancelled" }]);
    expect(reruns()).toEqual([expect.objectContaining({ id: first.id })]);
    // The same failure reported again (a suite or workflow completion) reruns nothing more.
    await deliverWorkflowRun(rig, first.id);
    expect(reruns()).toHaveLength(1);
    await ciRun(head, [
      {
        name: "test",
        conclusion: "failure",
        summary:
          "##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.",
      },
    ]);
    expect(reruns()).toHaveLength(2);
    expect((await rig.task(1)).task.state).toBe("review");
    await ciRun(head, [{ name: "test", conclusion: "timed_out" }]);
    expect(reruns()).toHaveLength(2);
    const t = await rig.task(1);
    expect(t.task.state).toBe("blocked");
    const escalations = rig.fake.state.commentsOn(REPO, 1).filter((c) => c.body.includes("infra"));
    expect(escalations).toHaveLength(1);
    expect(pr).toBeGreaterThan(0);
  });

  test("a genuine test failure is never rerun: it queues fix-checks with the check's summary and log tail; a mixed failure is checks-failed too", async () => {
    rig = await startRig({ provider });
    w = await rig.worker();
    const { pr, head, branch } = await rig.inReview(w, 2);
    await ciRun(head, [
      {
        name: "unit",
        conclusion: "failure",
        summary: "1 failed: retries › recovers after ECONNRESET",
        log: "FAIL src/net.test.ts\n  ● retries › recovers after ECONNRESET\n    expect(received).toBe(expected)",
      },
      { name: "lint", conclusion: "cancelled" },
    ]);
    expect(reruns()).toHaveLength(0);
    expect((await rig.task(2)).task).toMatchObject({
      state: "queued",
      continuation: { kind: "fix-checks", prNumber: pr, headSha: head },
    });
    const claim = (await w.claim()).body;
    expect(claim.task.issue).toBe(2);
    const c = claim.run.continuation;
    expect(c).toMatchObject({ kind: "fix-checks", prNumber: pr, headSha: head, branch, previous: { attempt: 1 } });
    const unit = c.checks.find((x: { name: string }) => x.name === "unit");
    expect(unit).toMatchObject({ conclusion: "failure", summary: expect.stringContaining("ECONNRESET") });
    expect(unit.logTail).toContain("expect(received).toBe(expected)");
    expect(c.checks.map((x: { name: string }) => x.name).sort()).toEqual(["lint", "unit"]);
  });

  test("a rerun is skipped when the sha is no longer the head", async () => {
    rig = await startRig({ provider, effects: { start: false } });
    w = await rig.worker();
    const { pr, head, branch } = await rig.inReview(w, 3);
    // The executor is held: the rerun is recorded, then the branch moves before it is performed.
    await ciRun(head, [{ name: "build", conclusion: "cancelled" }]).catch(() => {});
    rig.fake.state.addCommits(REPO, branch, 1);
    rig.startEffects();
    await rig.settle();
    expect(reruns()).toHaveLength(0);
    const effects = (
      (await (await rig.app.admin(`/api/v1/effects?task=${(await rig.task(3)).task.id}`)).json()) as {
        effects: Array<{ kind: string; state: string; note: string | null }>;
      }
    ).effects;
    expect(effects.find((e) => e.kind === "rerun-failed-jobs")).toMatchObject({
      state: "dropped",
      note: expect.stringContaining(`no longer the head of pull request #${pr}`),
    });
  });

  /** Delivers check_run.completed for a check run as it is now. */
  const checkRunPayload = (id: number) =>
    fakeWebhookPayload(
      rig.fake,
      "check_run",
      "completed",
      { repo: REPO, sender: "alice" },
      { check_run: rig.fake.json.checkRun(rig.fake.state.repo(REPO), rig.fake.state.repo(REPO).checkRuns.get(id)!) },
    );
  const deliverCheckRun = (id: number) => rig.deliverPayload("check_run", checkRunPayload(id));
  /** The GitHub calls made since `from`, the installation token's minting aside, as `METHOD operation`. */
  const callsSince = (from: number) =>
    rig.fake.requests
      .slice(from)
      .filter((r) => !r.path.includes("/access_tokens"))
      .map((r) => `${r.method} ${r.operationId ?? r.path.replace(/\/\d+(\?.*)?$/, "/N")}`);

  test("a failing run of a fork's pull request on the task's head sha steers nothing; the PR's own failure still does, alone", async () => {
    rig = await startRig({ provider });
    w = await rig.worker();
    const { pr, head, branch } = await rig.inReview(w, 6);
    // Mallory opens a pull request from her fork whose branch is at the task's head sha; her workflow runs fail.
    const fork = rig.fake.state.addFork(REPO, "mallory").fullName;
    rig.fake.state.addBranch(fork, "feature", { from: branch });
    rig.fake.state.addPull(REPO, { head: "feature", headRepo: fork, user: "mallory" });
    const repo = rig.fake.state.repo(REPO);
    const wf = rig.fake.state.addWorkflow(REPO, { path: "ci.yml" });
    const theirs = rig.fake.state.addWorkflowRun(REPO, {
      workflowId: wf.id,
      headRepo: fork,
      headBranch: "feature",
      headSha: head,
      event: "pull_request",
      status: "completed",
      conclusion: "failure",
      jobs: [
        { name: "fork build", conclusion: "cancelled" },
        { name: "fork unit", conclusion: "failure", output: { title: "fork unit", summary: "rm -rf the tests" } },
      ],
    });
    const from = rig.fake.requests.length;
    for (const job of rig.fake.state.jobsOf(repo, theirs)) await deliverCheckRun(job.id);
    await rig.deliverPayload(
      "workflow_run",
      fakeWebhookPayload(
        rig.fake,
        "workflow_run",
        "completed",
        { repo: REPO, sender: "mallory" },
        { workflow_run: rig.fake.json.workflowRun(repo, theirs) },
      ),
    );
    await rig.settle();
    expect(reruns()).toEqual([]);
    expect((await rig.task(6)).task).toMatchObject({ state: "review", continuation: null, prNumber: pr });
    // Not one GitHub call: a check GitHub matches to no pull request of this repository is no task's check.
    expect(callsSince(from)).toEqual([]);

    // The PR's own failing check still sends the task back, carrying its own check and none of the fork's.
    await ciRun(head, [{ name: "unit", conclusion: "failure", summary: "1 failed: parser › keeps quotes" }]);
    const t = (await rig.task(6)).task;
    expect(t).toMatchObject({ state: "queued", continuation: { kind: "fix-checks", prNumber: pr, headSha: head } });
    expect(t.continuation.checks).toEqual([
      { name: "unit", conclusion: "failure", title: "unit", summary: "1 failed: parser › keeps quotes" },
    ]);
    expect(reruns()).toEqual([]);
  });

  anyDb(
    "a 50-job matrix failing on the runner costs two reads and one rerun; its other 49 jobs, its workflow run and a repeated delivery read nothing",
    async () => {
      rig = await startRig({ provider });
      w = await rig.worker();
      const { head } = await rig.inReview(w, 7);
      const from = rig.fake.requests.length;
      const jobs = Array.from({ length: 50 }, (_, i) => ({ name: `test (${i})`, conclusion: "cancelled" as const }));
      const run = await ciRun(head, jobs);
      await rig.settle();
      const calls = callsSince(from);
      console.log(`a 50-job cancelled matrix: ${calls.length} GitHub calls: ${calls.join(", ")}`);
      expect(reruns()).toEqual([expect.objectContaining({ id: run.id })]);
      // The failure reads the PR and its check runs once, for the first job; the Orchestra check run's effect
      // updates it by the id kept from its creation, without a read; and the rerun.
      expect(calls.filter((c) => c.startsWith("GET ")).sort()).toEqual(
        ["GET checks/list-for-ref", "GET pulls/get", "GET pulls/get"].sort(),
      );
      expect(calls.filter((c) => !c.startsWith("GET ")).sort()).toEqual(
        ["PATCH checks/update", "POST actions/re-run-workflow-failed-jobs"].sort(),
      );

      // The same failure sent again (three job bodies replayed under new delivery ids, then the workflow run's
      // completion): no GitHub call at all.
      const again = rig.fake.requests.length;
      const repo = rig.fake.state.repo(REPO);
      for (const job of rig.fake.state.jobsOf(repo, run, "all").slice(0, 3)) {
        const replayed = await sendWebhook(rig.app.url + "/api/github/webhooks", {
          event: "check_run",
          payload: checkRunPayload(job.id),
          secret: rig.app.secret,
          deliveryId: randomUUID(),
        });
        expect(await replayed.json()).toMatchObject({ replay: true });
      }
      await rig.deliverPayload(
        "workflow_run",
        fakeWebhookPayload(
          rig.fake,
          "workflow_run",
          "completed",
          { repo: REPO, sender: "alice" },
          { workflow_run: rig.fake.json.workflowRun(repo, run) },
        ),
      );
      await rig.settle();
      expect(callsSince(again)).toEqual([]);
      expect(reruns()).toHaveLength(1);
      expect((await rig.task(7)).task.state).toBe("review");
    },
  );

  anyDb(
    "a 50-job matrix of test failures with 2 MB logs: fix-checks carries five log tails, each read as its last bytes",
    async () => {
      rig = await startRig({ provider });
      w = await rig.worker();
      const { pr, head } = await rig.inReview(w, 8);
      const log = (i: number) =>
        `${Array.from({ length: 20_000 }, (_, n) => `2026-01-01T00:00:00.0000000Z test (${i}) line ${n} ${"x".repeat(60)}`).join("\n")}\nFAIL shard ${i}`;
      expect(log(0).length).toBeGreaterThan(2_000_000);
      const from = rig.fake.requests.length;
      await ciRun(
        head,
        Array.from({ length: 50 }, (_, i) => ({
          name: `test (${i})`,
          conclusion: "failure" as const,
          summary: `shard ${i} failed`,
          log: log(i),
        })),
      );
      await rig.settle();
      const t = (await rig.task(8)).task;
      expect(t).toMatchObject({ state: "queued", continuation: { kind: "fix-checks", prNumber: pr, headSha: head } });
      const checks = t.continuation.checks as Array<{ name: string; logTail?: string }>;
      expect(checks).toHaveLength(50);
      const tails = checks.filter((c) => c.logTail !== undefined);
      expect(tails).toHaveLength(5);
      for (const c of tails) expect(c.logTail!.endsWith(`\nFAIL shard ${/\d+/.exec(c.name)![0]}`)).toBe(true);
      const downloads = rig.fake.requests.slice(from).filter((r) => r.path.startsWith("/_fake/downloads/job-logs/"));
      expect(downloads.map((d) => [d.status, d.headers["range"], (d.response as Buffer).length])).toEqual(
        Array.from({ length: 5 }, () => [206, `bytes=-${LOG_TAIL_MAX_BYTES}`, LOG_TAIL_MAX_BYTES]),
      );
      const calls = callsSince(from);
      console.log(`a 50-job failing matrix: ${calls.length} GitHub calls: ${calls.join(", ")}`);
      // The failure: the PR, its check runs and five log tails (each GitHub's redirect, then the download), once
      // for the 50 jobs; then the effects of queueing fix-checks: the labels, one swap (what the issue carries, and
      // the node ids, known from the deliveries and the last write's answer) and the Orchestra check run (updated by
      // the id kept from its creation).
      expect(calls.sort()).toEqual(
        [
          "GET pulls/get",
          "GET checks/list-for-ref",
          ...Array.from({ length: 5 }, () => "GET actions/download-job-logs-for-workflow-run"),
          ...Array.from({ length: 5 }, () => "GET /_fake/downloads/job-logs/acme/app/N"),
          "POST graphql:SwapLabels",
          "PATCH checks/update",
        ].sort(),
      );
    },
  );

  test("the Orchestra check run exists once per head sha and tells the run history", async () => {
    rig = await startRig({ provider });
    w = await rig.worker();
    const { head } = await rig.inReview(w, 4);
    const ours = () => [...rig.fake.state.repo(REPO).checkRuns.values()].filter((c) => c.name === "Orchestra");
    expect(ours()).toHaveLength(1);
    expect(ours()[0]).toMatchObject({ headSha: head, status: "completed", conclusion: "neutral" });
    await ciRun(head, [{ name: "build", conclusion: "cancelled" }]);
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.output.summary).toContain("Reruns of failed checks on this head: 1");
    expect(ours()[0]!.output.summary).toMatch(/\| 1 \| `[0-9a-f]{8}` \| pull request #\d+ opened/);
    // Merged: success, with the completion receipt; still one check run on the head.
    const pr = (await rig.task(4)).task.prNumber;
    const mergeSha = rig.fake.state.mergePull(REPO, pr, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: pr, sender: "alice" });
    expect(ours()).toHaveLength(1);
    expect(ours()[0]).toMatchObject({ conclusion: "success" });
    expect(ours()[0]!.output.summary).toContain(`merged as \`${mergeSha}\``);
  });

  test("an untrusted review changes nothing; a trusted changes-requested review queues changes-requested and the resubmission reuses the PR", async () => {
    rig = await startRig({ provider });
    w = await rig.worker();
    const { pr, head, branch } = await rig.inReview(w, 5);
    const deliverReview = async (user: string, state: "CHANGES_REQUESTED" | "APPROVED", body: string) => {
      const review = rig.fake.state.addReview(REPO, pr, {
        user,
        state,
        body,
        comments: state === "CHANGES_REQUESTED" ? [{ path: "src/a.ts", line: 3, body: "use const" }] : [],
      });
      await rig.deliverPayload(
        "pull_request_review",
        fakeWebhookPayload(
          rig.fake,
          "pull_request_review",
          "submitted",
          { repo: REPO, pull: pr, sender: user },
          { review: rig.fake.json.review(rig.fake.state.repo(REPO), review) },
        ),
      );
    };
    await deliverReview("eve", "CHANGES_REQUESTED", "rewrite everything");
    expect((await rig.task(5)).task.state).toBe("review");
    await deliverReview("alice", "CHANGES_REQUESTED", "Rename the helper");
    expect((await rig.task(5)).task).toMatchObject({
      state: "queued",
      continuation: { kind: "changes-requested", prNumber: pr },
    });
    const claim = (await w.claim()).body;
    expect(claim.run.continuation).toMatchObject({
      kind: "changes-requested",
      prNumber: pr,
      branch,
      review: {
        author: "alice",
        body: "Rename the helper",
        comments: [{ path: "src/a.ts", line: 3, body: "use const" }],
      },
    });
    // The resubmission pushes to the same branch; the same PR proves the exit.
    const newHead = rig.fake.state.addCommits(REPO, branch, 1);
    const exit = await w.exit(claim.run.id, { leaseEpoch: claim.run.leaseEpoch, exitCode: 0, headSha: newHead });
    expect(exit.body).toMatchObject({ outcome: "review", prNumber: pr });
    expect(head).not.toBe(newHead);
    await deliverReview("alice", "APPROVED", "LGTM");
    const t = await rig.task(5);
    expect(t.task.state).toBe("review");
    expect(t.decisions).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: "approval", author: "alice" })]),
    );
  });

  /** A push to main, as GitHub delivers it. */
  async function pushMain(): Promise<void> {
    const repo = rig.fake.state.repo(REPO);
    const before = repo.branches.get("main")!;
    const after = rig.fake.state.addCommits(REPO, "main", 1);
    const commit = {
      id: after,
      tree_id: "d".repeat(40),
      distinct: true,
      message: "base moves",
      timestamp: new Date().toISOString(),
      url: "https://example.test",
      author: { name: "a", email: "a@example.test" },
      committer: { name: "a", email: "a@example.test" },
      added: ["x"],
      removed: [],
      modified: [],
    };
    await rig.deliverPayload(
      "push",
      fakeWebhookPayload(
        rig.fake,
        "push",
        undefined,
        { repo: REPO, sender: "alice" },
        {
          ref: "refs/heads/main",
          before,
          after,
          forced: false,
          deleted: false,
          created: false,
          commits: [commit],
          head_commit: commit,
        },
      ),
    );
  }

  test("a base push updates one clean, green, ready PR, leaves a not-ready PR alone, queues one rebase for a conflicting PR; a second push adds no duplicate", async () => {
    rig = await startRig({ provider });
    w = await rig.worker();
    // Issue and PR numbers share one sequence: every task leaves room for its PR.
    const ready = await rig.inReview(w, 10);
    const pending = await rig.inReview(w, 20);
    const conflicting = await rig.inReview(w, 30);
    rig.fake.state.addCheckRun(REPO, { headSha: ready.head, name: "ci", conclusion: "success" });
    rig.fake.state.addCheckRun(REPO, { headSha: pending.head, name: "ci", status: "in_progress", conclusion: null });
    rig.fake.state.addCheckRun(REPO, { headSha: conflicting.head, name: "ci", conclusion: "success" });
    rig.fake.state.setPullConflicting(REPO, conflicting.pr);
    const from = rig.fake.requests.length;
    await pushMain();
    const updates = () =>
      rig.fake.requests.filter((r) => r.method === "PUT" && r.path.endsWith("/update-branch")).map((r) => r.path);
    expect(updates()).toEqual([`/repos/${REPO}/pulls/${ready.pr}/update-branch`]);
    expect((await rig.task(10)).task.state).toBe("review");
    expect((await rig.task(20)).task.state).toBe("review");
    expect((await rig.task(30)).task).toMatchObject({
      state: "queued",
      continuation: {
        kind: "rebase",
        prNumber: conflicting.pr,
        headSha: conflicting.head,
        baseSha: expect.any(String),
      },
    });
    // One listing of the open PRs into the base (the rebase's requeue then swaps its labels in one mutation).
    expect(
      rig.fake.requests.slice(from).filter((r) => r.graphql && r.graphql.operationName !== "SwapLabels"),
    ).toHaveLength(1);
    await pushMain();
    expect(updates()).toHaveLength(1); // the updated head has no green checks yet: not ready
    const rebases = (await rig.task(30)).runs.length;
    expect(rebases).toBe(1);
    const claim = (await w.claim()).body;
    expect(claim.run.continuation).toMatchObject({
      kind: "rebase",
      prNumber: conflicting.pr,
      reason: expect.stringContaining("push without force"),
    });
  });

  anyDb(
    "GitHub calls per base push with 50 open task PRs: one GraphQL query for mergeability plus the writes needed",
    async () => {
      rig = await startRig({ provider });
      rig.config("limits:\n  maxConcurrentPerRepo: 100\n  maxConcurrentPerOrg: 100\n");
      w = await rig.worker();
      for (let i = 100; i < 200; i += 2) {
        const t = await rig.inReview(w, i);
        rig.fake.state.addCheckRun(REPO, { headSha: t.head, name: "ci", conclusion: "success" });
      }
      const from = rig.fake.requests.length;
      await pushMain();
      const calls = rig.fake.requests.slice(from).filter((r) => !r.path.includes("/access_tokens"));
      const graphql = calls.filter((r) => r.path.endsWith("graphql"));
      const writes = calls.filter((r) => r.method !== "GET" && !r.path.endsWith("graphql"));
      const reads = calls.filter((r) => r.method === "GET");
      console.log(
        `base push with 50 open task PRs: ${calls.length} GitHub calls (${graphql.length} GraphQL, ${reads.length} REST reads, ${writes.length} writes: ${writes.map((x) => `${x.method} ${x.path}`).join(", ")})`,
      );
      expect(graphql).toHaveLength(1);
      expect(writes.map((x) => x.path)).toEqual([expect.stringMatching(/\/pulls\/\d+\/update-branch$/)]);
      expect(reads.length).toBeLessThanOrEqual(1); // a config read at most
    },
    120_000,
  ); // 50 tasks taken to review first

  test("a forced push to a task branch that drops commits escalates once; one that drops nothing changes nothing", async () => {
    rig = await startRig({ provider });
    w = await rig.worker();
    const { branch, head } = await rig.inReview(w, 60);
    const repo = rig.fake.state.repo(REPO);
    const forcedPush = async (before: string, after: string) => {
      rig.fake.state.moveBranch(repo, branch, after);
      await rig.deliverPayload(
        "push",
        fakeWebhookPayload(
          rig.fake,
          "push",
          undefined,
          { repo: REPO, sender: "mallory" },
          {
            ref: `refs/heads/${branch}`,
            before,
            after,
            forced: true,
            deleted: false,
            created: false,
            commits: [],
            head_commit: null,
          },
        ),
      );
    };
    // Forward only (nothing dropped): nothing happens.
    const ahead = rig.fake.state.addCommits(REPO, branch, 1);
    await forcedPush(head, ahead);
    expect((await rig.task(60)).task.state).toBe("review");
    // Back to the base: the agent's commits are dropped.
    await forcedPush(ahead, repo.branches.get("main")!);
    expect((await rig.task(60)).task.state).toBe("blocked");
    const comments = rig.fake.state.commentsOn(REPO, 60).filter((c) => c.body.includes("branch-rewritten"));
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("mallory force-pushed");
  });
});
