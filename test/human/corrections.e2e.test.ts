/**
 * PR comments as human corrections, end to end: GitHub's issue_comment
 * example payloads, signed, into the real App, the fake GitHub behind it. A
 * trusted comment on a task in review sends it back to its agent on the same
 * branch and PR, carrying the comment in the claim; one comment is one
 * continuation whatever is delivered again or edited; comments before the
 * next claim ride one continuation; untrusted ones do nothing and are
 * audited; a task nobody works on records it and the reply says what would
 * act on it.
 */
import { randomUUID } from "node:crypto";
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload, nthUpdate } from "../support/webhooks.js";
import { providers } from "../support/databases.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  let w: WorkerClient;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function start(config?: string): Promise<void> {
    rig = await startRig({ provider });
    if (config) rig.config(config);
    w = await rig.worker();
  }

  /** An issue_comment webhook for a comment on an issue or PR, built from the fake's state. */
  const deliver = (
    number: number,
    commentId: number,
    user: string,
    o: { deliveryId?: string; action?: string; overrides?: Record<string, unknown> } = {},
  ) =>
    rig.deliverPayload(
      "issue_comment",
      fakeWebhookPayload(
        rig.fake,
        "issue_comment",
        "created",
        { repo: REPO, issue: number, comment: commentId, sender: user },
        { action: o.action ?? "created", ...(o.overrides ?? {}) },
      ),
      o.deliveryId ?? randomUUID(),
    );
  async function comment(number: number, user: string, body: string, deliveryId?: string): Promise<number> {
    const c = rig.fake.state.addComment(REPO, number, { body, user });
    await deliver(number, c.id, user, deliveryId ? { deliveryId } : {});
    return c.id;
  }
  async function edit(number: number, commentId: number, by: string, body: string): Promise<void> {
    const stored = rig.fake.state.commentsOn(REPO, number).find((x) => x.id === commentId)!;
    const from = stored.body;
    stored.body = body;
    await deliver(number, commentId, by, { action: "edited", overrides: { changes: { body: { from } } } });
  }
  const reactions = (commentId: number) =>
    rig.fake.state
      .reactionsOnComment(REPO, commentId)
      .map((r) => r.content)
      .sort();
  const replies = (number: number) =>
    rig.fake.state.commentsOn(REPO, number).filter((c) => c.user === rig.fake.state.botLogin);
  const corrections = async (issue: number) =>
    ((await rig.task(issue)).decisions as Array<{ kind: string; body: string; supersededAt?: string }>).filter(
      (d) => d.kind === "correction",
    );

  test("in review, a trusted PR comment queues one changes-requested continuation on the same branch and PR, and the claim carries it; delivered again or edited, it sends nothing again", async () => {
    await start();
    const { pr, branch } = await rig.inReview(w, 1);
    const body = "Please rename the helper to parseConfig.";
    const c = await comment(pr, "alice", body, "comment-1");
    const queued = (await rig.task(1)).task;
    expect(queued).toMatchObject({
      state: "queued",
      prNumber: pr,
      branch,
      continuation: {
        kind: "changes-requested",
        prNumber: pr,
        comments: [{ id: c, author: "alice", body, on: "pull" }],
      },
    });
    expect(rig.labels(1)).toEqual(["agent:queued"]);
    expect(reactions(c)).toEqual(["eyes", "rocket"]);
    // The same delivery twice is one delivery.
    await deliver(pr, c, "alice", { deliveryId: "comment-1" });

    const claim = (await w.claim()).body;
    expect(claim.task.issue).toBe(1);
    expect(claim.run.branch).toBe(branch);
    expect(claim.run.continuation).toMatchObject({
      kind: "changes-requested",
      prNumber: pr,
      branch,
      comments: [{ id: c, author: "alice", body, on: "pull" }],
    });
    expect(claim.decisions).toEqual([expect.objectContaining({ kind: "correction", body, author: "alice" })]);
    expect(claim.run.continuation.comments[0].decisionId).toBe(claim.decisions[0].id);
    await w.call("POST", `/api/v1/runs/${claim.run.id}/decisions/${claim.decisions[0].id}/receipt`, {
      leaseEpoch: claim.run.leaseEpoch,
    });
    expect(reactions(c)).toEqual(["+1", "eyes", "rocket"]);

    // The resubmission pushes to the same branch; the same PR is in review again.
    const head = rig.fake.state.addCommits(REPO, branch, 1);
    const exit = await w.exit(claim.run.id, { leaseEpoch: claim.run.leaseEpoch, exitCode: 0, headSha: head });
    expect(exit.body).toMatchObject({ outcome: "review", prNumber: pr });

    // The comment sent again (a new delivery of the same comment), then edited: the task stays in review.
    await deliver(pr, c, "alice", { overrides: { issue: { updated_at: nthUpdate(1) } } });
    await edit(pr, c, "alice", "Please rename the helper to loadConfig.");
    const after = await rig.task(1);
    expect(after.task.state).toBe("review");
    expect(after.runs).toHaveLength(2);
    expect((await corrections(1)).map((d) => d.body)).toEqual([body]);
    expect(replies(pr)).toEqual([]);
    expect(await w.claim()).toMatchObject({ status: 204 });
  });

  test("two comments (PR and issue) and a review before the next claim ride one continuation; an edit before it replaces the text", async () => {
    await start();
    const { pr } = await rig.inReview(w, 2);
    const c1 = await comment(pr, "alice", "Keep the public API unchanged.");
    const c2 = await comment(2, "alice", "Also add a changelog entry.");
    expect((await rig.task(2)).task.state).toBe("queued");
    expect(reactions(c2)).toEqual(["eyes"]);
    // It joined: the reply says the next run gets it.
    expect(replies(2).map((r) => r.body)).toEqual([expect.stringContaining("the run that picks it up gets this")]);
    await edit(2, c2, "alice", "Also add a changelog entry under Unreleased.");
    const review = rig.fake.state.addReview(REPO, pr, {
      user: "alice",
      state: "CHANGES_REQUESTED",
      body: "See inline",
      comments: [{ path: "src/a.ts", line: 3, body: "use const" }],
    });
    await rig.deliverPayload(
      "pull_request_review",
      fakeWebhookPayload(
        rig.fake,
        "pull_request_review",
        "submitted",
        { repo: REPO, pull: pr, sender: "alice" },
        { review: rig.fake.json.review(rig.fake.state.repo(REPO), review) },
      ),
    );

    const claim = (await w.claim()).body;
    expect(claim.task.issue).toBe(2);
    expect(claim.run.continuation).toMatchObject({
      kind: "changes-requested",
      prNumber: pr,
      comments: [
        { id: c1, body: "Keep the public API unchanged.", on: "pull" },
        { id: c2, body: "Also add a changelog entry under Unreleased.", on: "issue" },
      ],
      review: { author: "alice", body: "See inline", comments: [{ path: "src/a.ts", line: 3, body: "use const" }] },
    });
    expect(claim.decisions.map((d: { body: string; history?: true }) => [d.body, !!d.history])).toEqual([
      ["Keep the public API unchanged.", false],
      ["Also add a changelog entry.", true],
      ["Also add a changelog entry under Unreleased.", false],
    ]);
    expect((await rig.task(2)).runs).toHaveLength(2);
  });

  test("untrusted comments and bots do nothing and are audited; Orchestra's own comments are not corrections; commands keep their meaning", async () => {
    await start();
    rig.fake.state.setPermission(REPO, "tom", "triage");
    const { pr } = await rig.inReview(w, 3);
    const eve = await comment(pr, "eve", "Rewrite it in Rust.");
    const tom = await comment(3, "tom", "Drop the tests.");
    const bot = await comment(pr, "renovate[bot]", "Update dependency left-pad to v2.");
    const own = rig.fake.state.addComment(REPO, pr, { body: "Orchestra's own note", user: rig.fake.state.botLogin });
    await deliver(pr, own.id, rig.fake.state.botLogin);
    expect((await rig.task(3)).task.state).toBe("review");
    for (const id of [eve, tom, bot, own.id]) expect(reactions(id)).toEqual([]);
    expect(await corrections(3)).toEqual([]);
    const audit = (await (await rig.app.admin(`/api/v1/audit?repo=${encodeURIComponent(REPO)}`)).json()) as {
      ignored: Array<{ actor: string; input: string; why: string }>;
    };
    expect(audit.ignored.map((i) => i.actor).sort()).toEqual(["eve", "renovate[bot]", "tom"]);
    expect(audit.ignored.find((i) => i.actor === "eve")!.input).toContain(`comment ${eve}: Rewrite it in Rust.`);
    // A command on the PR is a command, not a correction.
    const status = await comment(pr, "alice", "orchestra status");
    expect((await rig.task(3)).task.state).toBe("review");
    expect(reactions(status)).toEqual(["eyes", "rocket"]);
    expect(replies(3).some((r) => r.body.includes("state: review"))).toBe(true);
    expect(await w.claim()).toMatchObject({ status: 204 });
  });

  test("a queued task records a comment with a reply, and its next claim carries it", async () => {
    await start();
    await rig.queue(4);
    const c = await comment(4, "alice", "Target Node 22.");
    expect((await rig.task(4)).task).toMatchObject({ state: "queued", continuation: null });
    expect(reactions(c)).toEqual(["eyes"]);
    expect(replies(4).map((r) => r.body)).toEqual([expect.stringContaining("`agent:queued`")]);
    const claim = (await w.claim()).body;
    expect(claim.decisions.map((d: { body: string }) => d.body)).toEqual(["Target Node 22."]);
  });

  test("a failed task records a comment, the reply names orchestra retry, and the retry's run gets it", async () => {
    await start("limits:\n  maxAttempts: 1\n");
    await rig.queue(5);
    const run = (await w.claim()).body.run;
    await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 }); // a phantom; the one attempt is spent
    expect((await rig.task(5)).task.state).toBe("failed");
    const c = await comment(5, "alice", "The fixture lives in test/data, not tests/.");
    expect((await rig.task(5)).task.state).toBe("failed");
    expect(reactions(c)).toEqual(["eyes"]);
    expect(replies(5).filter((r) => r.body.includes("`orchestra retry` queues it again"))).toHaveLength(1);
    await comment(5, "alice", "orchestra retry");
    const claim = (await w.claim()).body;
    expect(claim.task.issue).toBe(5);
    expect(claim.decisions.map((d: { body: string }) => d.body)).toContain(
      "The fixture lives in test/data, not tests/.",
    );
  });

  test("a question closes when its task leaves blocked: a later comment in review is a correction, not its answer", async () => {
    await start();
    await rig.queue(6);
    const first = (await w.claim()).body.run;
    await w.call("POST", `/api/v1/runs/${first.id}/decision-requests`, {
      leaseEpoch: first.leaseEpoch,
      question: "Which database?",
    });
    expect((await rig.task(6)).task.state).toBe("blocked");
    await comment(6, "alice", "orchestra retry");
    const question = () => rig.task(6).then((t) => t.decisions.find((d: { kind: string }) => d.kind === "question"));
    expect((await question()).answeredAt).not.toBeNull();
    // The retry's run opens the PR; a comment in review sends it back with the comment.
    const second = (await w.claim()).body.run;
    const head = rig.fake.state.addBranch(REPO, second.branch, { aheadBy: 1 });
    const pr = rig.fake.state.addPull(REPO, { head: second.branch, body: "Closes #6", user: "agent-bot" }).number;
    await w.exit(second.id, { leaseEpoch: second.leaseEpoch, exitCode: 0, headSha: head });
    expect((await rig.task(6)).task.state).toBe("review");
    await comment(pr, "alice", "Use SQLite for now.");
    const t = await rig.task(6);
    expect(t.task).toMatchObject({
      state: "queued",
      continuation: { kind: "changes-requested", comments: [{ body: "Use SQLite for now." }] },
    });
    expect(t.decisions.filter((d: { kind: string }) => d.kind === "answer")).toEqual([]);
  });
});
