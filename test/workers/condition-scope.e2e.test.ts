/**
 * A worker's token scoped to some repositories tells it nothing about the
 * others: a question waiting on `pr-merged:` in a repository outside the
 * scope is refused (403, naming the repositories the token covers), so the
 * App's wider access never answers it.
 */
import { REPO, INSTALLATION, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";

const SECRET = "acme/secret";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  test("a scoped worker's pr-merged condition on a repository outside its scope is refused; in scope it is asked", async () => {
    rig = await startRig({ provider });
    // A private repository of the same installation, with a merged pull request.
    rig.fake.state.addRepo(SECRET, { installationId: INSTALLATION, private: true });
    rig.fake.state.addBranch(SECRET, "feature", { aheadBy: 1 });
    const secretPr = rig.fake.state.addPull(SECRET, { head: "feature" });
    rig.fake.state.mergePull(SECRET, secretPr.number);
    rig.fake.state.addBranch(REPO, "feature", { aheadBy: 1 });
    const ownPr = rig.fake.state.addPull(REPO, { head: "feature" });

    const w = await rig.worker("scoped", [REPO]);
    await rig.queue(4);
    const run = (await w.claim()).body.run;
    const ask = (condition: string) =>
      w.call("POST", `/api/v1/runs/${run.id}/decision-requests`, {
        leaseEpoch: run.leaseEpoch,
        question: "Wait for the other change?",
        condition,
      });

    for (const condition of [
      `pr-merged:${SECRET}#${secretPr.number}`,
      `pr-merged:https://github.com/${SECRET}/pull/${secretPr.number}`,
    ]) {
      const refused = await ask(condition);
      expect(refused).toEqual({
        status: 403,
        body: {
          error:
            `condition ${condition} names ${SECRET}, which this worker's token does not cover (it covers ${REPO}): ` +
            `ask about a pull request in one of those, or have the operator register a worker whose repos include ` +
            SECRET,
          reason: "repository-out-of-scope",
          repos: [REPO],
        },
      });
    }
    // Nothing was recorded, posted or asked of GitHub: the run goes on, and a sweep answers nothing.
    rig.clock.advance(120_000);
    await rig.sweep();
    let t = await rig.task(4);
    expect(t.task.state).toBe("claimed");
    expect(t.runs).toEqual([expect.objectContaining({ id: run.id, state: "live" })]);
    expect(t.decisions.filter((d: { kind: string }) => d.kind === "question" || d.kind === "answer")).toEqual([]);
    expect(rig.fake.state.commentsOn(REPO, 4).filter((c) => c.body.includes("Wait for the other change?"))).toEqual([]);
    expect(rig.fake.requests.filter((r) => r.path.startsWith(`/repos/${SECRET}`))).toEqual([]);

    // Its own repository (named in any case) is asked about as before.
    const asked = await ask(`pr-merged:ACME/App#${ownPr.number}`);
    expect(asked.status).toBe(201);
    t = await rig.task(4);
    expect(t.task.state).toBe("blocked");
  });

  test("a worker without a scope may still wait on a pull request in any repository", async () => {
    rig = await startRig({ provider });
    rig.fake.state.addRepo(SECRET, { installationId: INSTALLATION, private: true });
    rig.fake.state.addBranch(SECRET, "feature", { aheadBy: 1 });
    const pr = rig.fake.state.addPull(SECRET, { head: "feature" });
    rig.fake.state.mergePull(SECRET, pr.number);
    const w = await rig.worker("everywhere");
    await rig.queue(5);
    const run = (await w.claim()).body.run;
    const asked = await w.call("POST", `/api/v1/runs/${run.id}/decision-requests`, {
      leaseEpoch: run.leaseEpoch,
      question: "Wait for the other change?",
      condition: `pr-merged:${SECRET}#${pr.number}`,
    });
    expect(asked.status).toBe(201);
    rig.clock.advance(120_000);
    await rig.sweep();
    expect((await rig.task(5)).task).toMatchObject({ state: "queued", continuation: { kind: "resume" } });
    expect((await w.claim()).body.decisions).toEqual([
      expect.objectContaining({ kind: "answer", body: `condition met: pr-merged:${SECRET}#${pr.number}` }),
    ]);
  });
});
