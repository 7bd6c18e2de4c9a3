/**
 * A label write starts from what GitHub last said of the issue's labels. A removal goes out without reading them
 * first: GitHub's answer to it is the labels after, the evidence for any other removal. When GitHub says a label
 * the last delivery showed is not there, that delivery was out of date, and the labels are read before anything
 * else comes off.
 */
import { REPO } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { startLoop, type LoopRig } from "../support/worker-rig.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: LoopRig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  /**
   * A task taken to review by the real worker, its writes settled; the label calls on the issue from then on, as
   * `METHOD status`.
   */
  async function reviewed(): Promise<{ pr: number; labelCalls: () => string[] }> {
    rig = await startLoop({ provider });
    await rig.queue(1);
    const agent = rig.agent("fix", "echo fix > src/app.txt\ngit add src/app.txt\ngit commit -qm Fix");
    expect(await rig.once(["--agent", agent])).toMatchObject({ code: 0, stderr: "" });
    const pr = (await rig.task(1)).task.prNumber as number;
    await rig.settle();
    expect(rig.labels(1)).toEqual(["agent:review"]);
    const from = rig.fake.requests.length;
    const labelCalls = () =>
      rig.fake.requests
        .slice(from)
        .filter((r) => /\/issues\/1\/labels/.test(r.path))
        .map((r) => `${r.method} ${r.status}`);
    return { pr, labelCalls };
  }

  async function merge(pr: number): Promise<void> {
    rig.fake.state.mergePull(REPO, pr, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: pr, sender: "alice" });
    await rig.settle();
    expect((await rig.task(1)).task.state).toBe("done");
  }

  test("a merged task's label comes off in one call, without a read", async () => {
    const { pr, labelCalls } = await reviewed();
    await merge(pr);
    expect(rig.labels(1)).toEqual([]);
    expect(labelCalls()).toEqual(["DELETE 200"]);
  });

  test("labels changed on GitHub before their delivery came: the removal that finds its label gone reads them", async () => {
    const { pr, labelCalls } = await reviewed();
    // Changed by hand on GitHub; its delivery has not come yet.
    const issue = rig.fake.state.issue(REPO, 1);
    issue.labels = issue.labels.filter((l) => l !== "agent:review");
    for (const label of ["bug", "agent:blocked"]) rig.fake.state.labelIssue(REPO, 1, label, "alice");
    await merge(pr);
    expect(rig.fake.state.labelsOf(REPO, 1)).toEqual(["bug"]);
    expect(labelCalls()).toEqual(["DELETE 404", "GET 200", "DELETE 200"]);
  });

  test("a label made again on GitHub (a new node id): the swap is refused, the labels read and set by name", async () => {
    await reviewed();
    // Deleted and made again by someone on GitHub: the id Orchestra was given for it names nothing now.
    const labels = rig.fake.state.repo(REPO).labels;
    labels.delete("agent:in-progress");
    rig.fake.state.addLabel(REPO, "agent:in-progress");
    const from = rig.fake.requests.length;
    await rig.queue(10);
    const agent = rig.agent("fix-2", "echo two > src/app.txt\ngit add src/app.txt\ngit commit -qm Two");
    expect(await rig.once(["--agent", agent])).toMatchObject({ code: 0, stderr: "" });
    await rig.settle();
    expect(rig.labels(10)).toEqual(["agent:review"]);
    const writes = rig.fake.requests
      .slice(from)
      .filter((r) => r.graphql?.operationName === "SwapLabels" || /\/issues\/10\/labels/.test(r.path))
      .map((r) => {
        const errors = (r.response as { errors?: Array<{ type?: string }> } | undefined)?.errors;
        return r.graphql ? `swap${errors ? ` ${errors.map((e) => e.type).join(",")}` : ""}` : `${r.method} ${r.status}`;
      });
    // The claim's swap: refused; the labels read and the interlock added by name (its answer gives the new id);
    // the review's swap names it by that id.
    expect(writes).toEqual(["swap NOT_FOUND", "GET 200", "POST 200", "swap"]);
  });
});
