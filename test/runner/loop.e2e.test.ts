/**
 * The whole loop on real git: the App, the fake GitHub serving the repository
 * over smart HTTP and sending its own webhooks, and the real `orchestra
 * worker` running a scripted stand-in agent. Every fact Orchestra acts on here
 * came from the worker measuring git, and every PR from the worker opening it.
 */
import { providers } from "../support/databases.js";
import { eventually } from "../support/orchestra.js";
import { REPO } from "../support/lifecycle-rig.js";
import { startLoop, type LoopRig } from "../support/worker-rig.js";

describe.each(providers)("the worker's loop on %s", (provider) => {
  let rig: LoopRig;
  afterEach(async () => {
    await rig?.stop();
  });

  const taskOf = async (issue: number) =>
    (await rig.task(issue)) as { task: { state: string; prNumber: number | null } };

  test("a fresh task: the agent commits, the worker pushes and opens the PR, a merge makes it done", async () => {
    rig = await startLoop({ provider });
    await rig.queue(1);
    const agent = rig.agent(
      "fix",
      [
        'test "$ORCHESTRA_ISSUE" = 1',
        'grep -q "Do thing 1" "$ORCHESTRA_TASK_FILE"',
        'test -z "$GITHUB_TOKEN$GH_TOKEN$ORCHESTRA_WORKER_TOKEN"',
        "echo 'version 2' > src/app.txt",
        "git add src/app.txt",
        "git commit -qm 'Bump the version'",
      ].join("\n"),
    );
    const { code, stdout, stderr } = await rig.once(["--agent", agent]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/exit +→ review #\d+/);

    const { task } = await taskOf(1);
    expect(task.state).toBe("review");
    const pr = rig.fake.state.pull(REPO, task.prNumber!);
    const branch = pr.headRef;
    // What the PR shows is the agent's commit, pushed over real git.
    expect(rig.fileAt(branch, "src/app.txt")).toBe("version 2\n");
    expect(pr.headSha).toBe(rig.branchSha(branch));
    expect(rig.fake.state.issue(REPO, pr.number).body).toContain("Closes #1");
    // The task file and the rest of .orchestra/ were never committed.
    expect(rig.fileAt(branch, ".orchestra/task.md")).toBeNull();
    expect(rig.labels(1)).toEqual(["agent:review"]);

    rig.fake.state.mergePull(REPO, pr.number, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: pr.number, sender: "alice" });
    await eventually(async () => ((await taskOf(1)).task.state === "done" ? true : undefined), 10_000, "done");
    expect(rig.fileAt("main", "src/app.txt")).toBe("version 2\n");
    rig.fake.assertNoViolations();
  });

  test("an agent that exits 0 and changes nothing is a phantom: nothing pushed, no PR", async () => {
    rig = await startLoop({ provider });
    await rig.queue(2);
    const before = rig.fake.state.repo(REPO).branches.size;
    const { code, stdout } = await rig.once(["--agent", rig.agent("idle", "true")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/no change/);
    const detail = (await rig.task(2)) as { runs: Array<{ class: string | null }> };
    expect(detail.runs[0]!.class).toBe("phantom");
    expect(rig.fake.state.repo(REPO).branches.size).toBe(before);
    expect([...rig.fake.state.repo(REPO).pulls.values()]).toEqual([]);
  });

  test("an agent that leaves uncommitted work: it is committed as a handoff and pushed, and the next run continues it", async () => {
    rig = await startLoop({ provider });
    await rig.queue(3);
    const messy = rig.agent("messy", "echo 'half done' > notes.txt\nexit 1");
    const first = await rig.once(["--agent", messy]);
    expect(first.code).toBe(0);
    const { task } = await rig.task(3);
    const branch = (task as { branch: string }).branch;
    // Never deleted: on the run's branch, marked as handed off.
    expect(rig.fileAt(branch, "notes.txt")).toBe("half done\n");
    const repo = rig.fake.state.repo(REPO);
    const head = repo.git!.git(["log", "-1", "--format=%B", rig.branchSha(branch)!]);
    expect(head).toMatch(/Orchestra-Handoff: /);
    expect(((await rig.task(3)) as { task: { state: string } }).task.state).toBe("queued");

    // The next run is on the same branch with the work in it, and finishes it.
    const finish = rig.agent(
      "finish",
      [
        "test \"$(cat notes.txt)\" = 'half done'",
        "echo done >> notes.txt",
        "git add notes.txt",
        "git commit -qm Finish",
      ].join("\n"),
    );
    const second = await rig.once(["--agent", finish]);
    expect(second.stdout).toMatch(/exit +→ review #\d+/);
    expect(rig.fileAt(branch, "notes.txt")).toBe("half done\ndone\n");
  });
});
