/**
 * Questions close when their task leaves blocked, by whatever path, so the
 * expiry sweep never meets them again: a flood of tasks that asked and moved
 * on (retried, cancelled, closed, re-queued by label) does not delay the one
 * question that is really waiting — signed webhooks and the worker API into
 * the real App, the fake GitHub behind it, time from the rig's clock.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { providers } from "../support/databases.js";

const PATHS = ["retry", "cancel", "closed", "label"] as const;
const ZOMBIES = 24; // more than the sweep takes in one pass (20)

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("a flood of questions whose tasks left blocked does not delay a real expiry", async () => {
    rig = await startRig({ provider });
    rig.config("limits:\n  maxConcurrentPerRepo: 50\n  maxConcurrentPerOrg: 50\n");
    const w = await rig.worker();
    const comment = async (issue: number, body: string) => {
      const c = rig.fake.state.addComment(REPO, issue, { body, user: "alice" });
      await rig.deliverPayload(
        "issue_comment",
        fakeWebhookPayload(rig.fake, "issue_comment", "created", {
          repo: REPO,
          issue,
          comment: c.id,
          sender: "alice",
        }),
      );
    };
    const issues = [...Array.from({ length: ZOMBIES }, (_, i) => i + 1), 99];
    for (const n of issues) await rig.queue(n);
    const runs = new Map<number, { id: string; leaseEpoch: string }>();
    for (let i = 0; i < issues.length; i++) {
      const claim = (await w.claim()).body;
      runs.set(claim.task.issue as number, claim.run);
    }
    // Each asks and stops, a second apart; the real question is asked last, so it expires last.
    for (const n of issues) {
      const run = runs.get(n)!;
      const asked = await w.call("POST", `/api/v1/runs/${run.id}/decision-requests`, {
        leaseEpoch: run.leaseEpoch,
        question: `Question of #${n}?`,
      });
      expect(asked.status).toBe(201);
      rig.clock.advance(1000);
    }
    // The zombies' tasks leave blocked, four ways.
    for (const n of issues.slice(0, ZOMBIES)) {
      const path = PATHS[n % PATHS.length]!;
      if (path === "retry") await comment(n, "orchestra retry");
      if (path === "cancel") await comment(n, "orchestra cancel");
      if (path === "closed") {
        rig.fake.state.closeIssue(REPO, n, "not_planned");
        await rig.deliver("issues", "closed", { issue: n, sender: "alice" });
      }
      if (path === "label") {
        rig.fake.state.labelIssue(REPO, n, "agent:queued", "alice");
        await rig.deliver("issues", "labeled", { issue: n, label: "agent:queued", sender: "alice" });
      }
      const t = await rig.task(n);
      expect({ n, state: t.task.state }).toEqual({
        n,
        state: path === "retry" || path === "label" ? "queued" : "cancelled",
      });
      expect(t.decisions.find((d: { kind: string }) => d.kind === "question").answeredAt).not.toBeNull();
    }
    expect((await rig.task(99)).task.state).toBe("blocked");

    rig.clock.advance(7 * 24 * 3600_000);
    const report = await rig.sweep();
    expect(report.questions).toBe(1);
    const expired = issues.filter((n) =>
      rig.fake.state.commentsOn(REPO, n).some((c) => c.body.includes("so it expired")),
    );
    expect(expired).toEqual([99]);
    // Nothing is left for the next sweep to look at.
    expect((await rig.sweep()).questions).toBe(0);
  }, 120_000);
});
