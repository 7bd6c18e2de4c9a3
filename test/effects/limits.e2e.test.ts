/**
 * An escalation longer than GitHub allows, end to end: the worker's last tool
 * calls make the comment body far longer than 65,536 characters. The fake
 * GitHub refuses such a body as GitHub does (422), so before the cut the
 * comment was never posted; now it is posted once, under the limit, with a
 * note saying where the full text is — and the full text is there.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { COMMENT_LIMIT } from "../fake-github/limits.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("a huge escalation is posted once, under the limit, with a note naming the task in the operator API", async () => {
    rig = await startRig({ provider });
    await rig.queue(41);
    const w = await rig.worker();
    const claim = await w.claim();
    expect(claim.status).toBe(200);
    const run = claim.body.run as { id: string; leaseEpoch: string };
    // 40 calls of 1,500 characters: within the worker API's bounds, twice in the comment (the list and the evidence).
    const calls = Array.from({ length: 40 }, (_, i) => `tool-${String(i).padStart(2, "0")}:${"a".repeat(1490)}`);
    const exit = await w.exit(run.id, {
      leaseEpoch: run.leaseEpoch,
      exitCode: 1,
      turnCapHit: true,
      lastToolCalls: calls,
    });
    expect(exit.body).toMatchObject({ class: "turn-cap-spinning", recovery: "escalate" });
    for (let i = 0; i < 3; i++) await rig.sweep();

    const comments = rig.fake.state.commentsOn(REPO, 41);
    expect(comments).toHaveLength(1);
    const posted = comments[0]!.body;
    expect([...posted].length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(posted).toContain("Orchestra needs a human for this issue");
    expect(posted).toContain("turn-cap-spinning");
    const t = await rig.task(41);
    expect(posted).toMatch(
      new RegExp(
        `\\*\\*Truncated:\\*\\* this text was [0-9,]+ characters, over GitHub's limit of [0-9,]+; the full text is in effect \\S+ of task ${t.task.id} in Orchestra's operator API \\(GET /api/v1/tasks/${t.task.id}, or orchestra effects --task ${t.task.id} --json\\)\\.`,
      ),
    );
    // The hidden marker survives the cut, so a lost answer is still found instead of posted twice.
    expect(posted).toMatch(/<!-- orchestra:effect \S+ -->$/);

    // Where the note points: the whole body, with the last call the comment could not show.
    const effects = t.effects as Array<{ id: string; kind: string; state: string; payload: { body?: string } }>;
    const comment = effects.find((e) => e.kind === "comment")!;
    expect(comment.state).toBe("done");
    expect(posted).toContain(`in effect ${comment.id} of task`);
    expect(comment.payload.body!.length).toBeGreaterThan(COMMENT_LIMIT);
    expect(comment.payload.body).toContain(calls[39]);
    expect(t.task.state).toBe("blocked");
  });
});
