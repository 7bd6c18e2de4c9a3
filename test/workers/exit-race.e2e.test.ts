/**
 * An exit that agrees with what already happened: the worker pushed, opened
 * its PR and exits, while the `pull_request.opened` webhook moves the task to
 * review. Whichever comes first, and however the two interleave, the exit is
 * answered 200 review and its report is recorded on the run; only a run
 * superseded by another run gets 409. The interleavings are placed exactly
 * with the App's hooks, never by waiting.
 */
import { REPO, startRig, type Rig, type WorkerClient } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import type { TaskEvent } from "../../src/machine/events.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  /** What the test does at each hook, once; null: nothing. */
  let beforeTransition: (() => Promise<void>) | null = null;
  let afterTaskRead: ((e: TaskEvent) => Promise<boolean>) | null = null;
  afterEach(async () => {
    beforeTransition = null;
    afterTaskRead = null;
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  async function start(): Promise<WorkerClient> {
    rig = await startRig({
      provider,
      hooks: {
        beforeTransition: async () => {
          const f = beforeTransition;
          beforeTransition = null;
          await f?.();
        },
        afterTaskRead: async (e) => {
          // The hook stays until it has acted (it acts on the exit's own read only).
          if (afterTaskRead && (await afterTaskRead(e))) afterTaskRead = null;
        },
      },
    });
    return rig.worker();
  }

  /** A claimed run whose agent pushed and opened its PR (no webhook delivered yet). */
  async function pushedAndOpened(w: WorkerClient, issue: number) {
    const { run, head, pr } = await rig.openPull(w, issue);
    return { run, head, pr, opened: async () => void (await rig.deliver("pull_request", "opened", { pull: pr })) };
  }

  const report = (run: { leaseEpoch: string }, head: string) => ({
    leaseEpoch: run.leaseEpoch,
    exitCode: 0,
    headSha: head,
    testsPassed: true,
    usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.42 },
    sessionRef: "session-7",
  });

  async function expectRecorded(issue: number, pr: number) {
    const t = await rig.task(issue);
    expect(t.task.state).toBe("review");
    expect(t.runs).toHaveLength(1);
    expect(t.runs[0]).toMatchObject({
      state: "review",
      prNumber: pr,
      report: { exitCode: 0, testsPassed: true, sessionRef: "session-7" },
      usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.42 },
    });
    expect(t.runs[0].endReason).toBe(`pull request #${pr} opened; exited 0`);
    expect(t.cost).toMatchObject({ inputTokens: 1200, outputTokens: 300 });
    expect(rig.labels(issue)).toEqual(["agent:review"]);
  }

  test("the PR-opened webhook processed before the exit: the exit is 200 review and its report is recorded", async () => {
    const w = await start();
    const { run, head, pr, opened } = await pushedAndOpened(w, 1);
    await opened();
    expect((await rig.task(1)).task.state).toBe("review");
    const exit = await w.exit(run.id, report(run, head));
    expect(exit.status).toBe(200);
    expect(exit.body).toMatchObject({ outcome: "review", prNumber: pr, evidence: { pr } });
    await expectRecorded(1, pr);
    // Sent again (its answer lost): the same answer, recorded once.
    const again = await w.exit(run.id, report(run, head));
    expect(again).toMatchObject({ status: 200, body: { outcome: "review", prNumber: pr } });
    await expectRecorded(1, pr);
  });

  test("the webhook lands between the exit's read and its transition: 200 review, report recorded", async () => {
    const w = await start();
    const { run, head, pr, opened } = await pushedAndOpened(w, 2);
    beforeTransition = opened;
    const exit = await w.exit(run.id, report(run, head));
    expect(beforeTransition).toBeNull(); // the race did happen
    expect(exit.status).toBe(200);
    expect(exit.body).toMatchObject({ outcome: "review", prNumber: pr });
    await expectRecorded(2, pr);
  });

  test("the webhook commits between the exit's read of the task and its read of the run: 200 review, never 409 review", async () => {
    const w = await start();
    const { run, head, pr, opened } = await pushedAndOpened(w, 3);
    // The worker's heartbeat loop renews the lease while the exit is under way: the exit's first decision is
    // stale and it reads the task again; the PR's transition commits right after that read.
    beforeTransition = async () => {
      expect((await w.heartbeat(run.id, run.leaseEpoch)).status).toBe(200);
    };
    let raced = false;
    afterTaskRead = async (e) => {
      if (e.kind !== "run-exited") return false;
      await opened();
      raced = true;
      return true;
    };
    const exit = await w.exit(run.id, report(run, head));
    expect(raced).toBe(true);
    expect(exit.status).toBe(200);
    expect(exit.body).toMatchObject({ outcome: "review", prNumber: pr });
    await expectRecorded(3, pr);
  });

  test("an exit of a run whose task a successor has claimed since is 409 superseded", async () => {
    const w = await start();
    const { run, head, pr, opened } = await pushedAndOpened(w, 4);
    await opened();
    // A reviewer asks for changes: the task goes back to the queue and another run claims it.
    const review = rig.fake.state.addReview(REPO, pr, { user: "alice", state: "CHANGES_REQUESTED", body: "Rename it" });
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
    expect((await rig.task(4)).task.state).toBe("queued");
    const next = await w.claim();
    expect(next.body.run.id).not.toBe(run.id);
    const exit = await w.exit(run.id, report(run, head));
    expect(exit.status).toBe(409);
    expect(exit.body).toMatchObject({ reason: "superseded", retryable: false });
    const t = await rig.task(4);
    expect(t.runs.find((r: { id: string }) => r.id === run.id).report).toBeNull();
  });
});
