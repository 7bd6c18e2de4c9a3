/**
 * The whole loop on real git: the App, the fake GitHub serving the repository
 * over smart HTTP and sending its own webhooks, and the real `orchestra
 * worker` running a scripted stand-in agent. Every fact Orchestra acts on here
 * came from the worker measuring git, and every PR from the worker opening it.
 */
import { existsSync, writeFileSync } from "node:fs";
import { onceForAll, providers } from "../support/databases.js";
import { fakeWebhookPayload } from "../support/webhooks.js";
import { eventually } from "../support/orchestra.js";
import { REPO } from "../support/lifecycle-rig.js";
import { startLoop, type LoopRig } from "../support/worker-rig.js";

describe.each(providers)("the worker's loop on %s", (provider) => {
  // The whole loop and a re-attach run on both databases; the other paths differ only in what the worker does.
  const anyDb = onceForAll(provider);
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
    // The label follows through the outbox, after the worker's answer.
    await rig.settle();
    expect(rig.labels(1)).toEqual(["agent:review"]);

    rig.fake.state.mergePull(REPO, pr.number, { by: "alice" });
    await rig.deliver("pull_request", "closed", { pull: pr.number, sender: "alice" });
    await eventually(async () => ((await taskOf(1)).task.state === "done" ? true : undefined), 10_000, "done");
    expect(rig.fileAt("main", "src/app.txt")).toBe("version 2\n");
    rig.fake.assertNoViolations();
  });

  anyDb("an agent that exits 0 and changes nothing is a phantom: nothing pushed, no PR", async () => {
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

  anyDb(
    "an agent that leaves uncommitted work: it is committed as a handoff and pushed, and the next run continues it",
    async () => {
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
    },
  );

  anyDb("an agent program that is not there is a release: the task is queued again with no attempt used", async () => {
    rig = await startLoop({ provider });
    await rig.queue(4);
    const { code, stderr } = await rig.once(["--agent", "no-such-agent-program --go"]);
    expect(code).toBe(4);
    expect(stderr).toMatch(/released +preflight/);
    const detail = (await rig.task(4)) as {
      task: { state: string; attempt: number };
      runs: Array<{ class: string | null }>;
    };
    expect(detail.task.state).toBe("queued");
    expect(detail.runs.every((r) => r.class === null)).toBe(true);
    // The label follows through the outbox, after the release's answer.
    await rig.settle();
    expect(rig.labels(4)).toEqual(["agent:queued"]);
    // The next claim is attempt 1 again.
    const next = await rig.workerClient.claim();
    expect(next.body.run.attempt).toBe(1);
  });

  anyDb(
    "a trusted comment during the run reaches .orchestra/decisions/ once, with a receipt",
    async () => {
      rig = await startLoop({ provider, config: "limits:\n  leaseSeconds: 30\n" });
      await rig.queue(5);
      // The agent waits for a decision (a heartbeat brings it, every third of the 30 s lease) and commits what it read.
      const agent = rig.agent(
        "listen",
        [
          "i=0",
          'while [ -z "$(ls "$ORCHESTRA_DECISIONS_DIR" 2>/dev/null)" ]; do i=$((i+1)); [ $i -lt 400 ] || exit 3; sleep 0.1; done',
          'cat "$ORCHESTRA_DECISIONS_DIR"/*.md > heard.txt',
          "git add heard.txt",
          "git commit -qm 'What the reviewer said'",
        ].join("\n"),
      );
      const worker = rig.start(["--once", "--agent", agent]);
      await eventually(async () => ((await rig.task(5))?.task.state === "claimed" ? true : undefined), 20_000, "claim");
      const c = rig.fake.state.addComment(REPO, 5, { body: "Please keep the public API unchanged.", user: "alice" });
      await rig.deliverPayload(
        "issue_comment",
        fakeWebhookPayload(rig.fake, "issue_comment", "created", {
          repo: REPO,
          issue: 5,
          comment: c.id,
          sender: "alice",
        }),
      );
      expect(await worker.done).toBe(0);
      const { task } = (await rig.task(5)) as { task: { state: string; prNumber: number; branch: string } };
      expect(task.state).toBe("review");
      expect(rig.fileAt(task.branch, "heard.txt")).toContain("Please keep the public API unchanged.");
      const handed = await rig.app.database.db.decisionDelivery.findMany();
      expect(handed).toHaveLength(1);
      expect(handed[0]!.receiptAt).not.toBeNull();
    },
    90_000,
  );

  anyDb(
    "a trusted comment on the PR in review sends the task back: the next run reads it in .orchestra/task.md and pushes to the same PR",
    async () => {
      rig = await startLoop({ provider });
      await rig.queue(9);
      const first = rig.agent(
        "first",
        ["echo 'version 2' > src/app.txt", "git add src/app.txt", "git commit -qm 'Bump the version'"].join("\n"),
      );
      expect((await rig.once(["--agent", first])).stdout).toMatch(/exit +→ review #\d+/);
      const { task } = (await rig.task(9)) as { task: { prNumber: number; branch: string } };
      const pr = task.prNumber;

      const said = "Please note the change in CHANGELOG.md too.";
      const c = rig.fake.state.addComment(REPO, pr, { body: said, user: "alice" });
      await rig.deliverPayload(
        "issue_comment",
        fakeWebhookPayload(rig.fake, "issue_comment", "created", {
          repo: REPO,
          issue: pr,
          comment: c.id,
          sender: "alice",
        }),
      );
      expect(((await rig.task(9)) as { task: { state: string } }).task.state).toBe("queued");

      // The agent acts only on what its task file says: the continuation and the comment in it.
      const second = rig.agent(
        "second",
        [
          'test "$ORCHESTRA_CONTINUATION" = changes-requested',
          'grep -q "## Continuation: changes-requested" "$ORCHESTRA_TASK_FILE"',
          `grep -q "${said}" "$ORCHESTRA_TASK_FILE"`,
          'cat "$ORCHESTRA_DECISIONS_DIR"/*.md > heard.txt',
          'cp "$ORCHESTRA_TASK_FILE" task-seen.md',
          "echo '- version 2' > CHANGELOG.md",
          "git add CHANGELOG.md heard.txt task-seen.md",
          "git commit -qm 'Note the change'",
        ].join("\n"),
      );
      const run = await rig.once(["--agent", second]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      expect(run.stdout).toMatch(new RegExp(`exit +→ review #${pr}\\b`));
      const after = (await rig.task(9)) as { task: { state: string; prNumber: number; branch: string } };
      expect(after.task).toMatchObject({ state: "review", prNumber: pr, branch: task.branch });
      expect(rig.fileAt(task.branch, "CHANGELOG.md")).toBe("- version 2\n");
      expect(rig.fileAt(task.branch, "task-seen.md")).toContain(`### Comment by alice on the pull request\n\n${said}`);
      expect(rig.fileAt(task.branch, "heard.txt")).toContain(said);
      expect([...rig.fake.state.repo(REPO).pulls.values()]).toHaveLength(1);
      // Received, taken, and receipted by the run.
      await rig.settle();
      expect(
        rig.fake.state
          .reactionsOnComment(REPO, c.id)
          .map((r) => r.content)
          .sort(),
      ).toEqual(["+1", "eyes", "rocket"]);
    },
    90_000,
  );

  anyDb(
    "a superseded worker's push is refused by GitHub: its brokered token was revoked with its lease",
    async () => {
      rig = await startLoop({ provider, config: "limits:\n  leaseSeconds: 30\n" });
      await rig.queue(6);
      // The zombie's agent waits for a go-ahead file, so the test can take its lease away mid-run.
      const go = `${rig.root}/go`;
      const agent = rig.agent(
        "zombie",
        [
          `i=0; while [ ! -e ${go} ]; do i=$((i+1)); [ $i -lt 600 ] || exit 3; sleep 0.1; done`,
          "echo zombie > zombie.txt",
          "git add zombie.txt",
          "git commit -qm 'Late work'",
        ].join("\n"),
      );
      const zombie = rig.start(["--once", "--agent", agent]);
      await eventually(async () => ((await rig.task(6))?.task.state === "claimed" ? true : undefined), 20_000, "claim");
      const first = (await rig.task(6)) as { task: { branch: string }; runs: Array<{ id: string }> };
      // The lease runs out (the rig's clock), the sweep ends it and revokes the token; a successor claims the task.
      rig.clock.advance(31_000);
      await rig.sweep();
      // After the grace a late exit gets (limits.graceSeconds), the next sweep classifies the run and requeues it.
      rig.clock.advance(121_000);
      await rig.sweep();
      const successor = await rig.workerClient.claim();
      expect(successor.status).toBe(200);
      expect(successor.body.run.id).not.toBe(first.runs[0]!.id);
      writeFileSync(go, "");
      const code = await zombie.done;
      expect(code).not.toBe(0);
      // Nothing of the zombie's reached the branch the successor works on.
      expect(rig.fileAt(first.task.branch, "zombie.txt")).toBeNull();
      // Its token was revoked when its lease ended: a push with it, whoever makes it, is refused by GitHub.
      const revoked = [...rig.fake.state.tokens.values()].filter((t) => t.revokedAt);
      expect(revoked.length).toBeGreaterThanOrEqual(1);
      const clone = await rig.git.clone(REPO, successor.body.credentials.token as string);
      await rig.git.commitFile(clone, "zombie.txt", "zombie\n", "Late work");
      const refused = await rig.git.fails(clone, ["push", "origin", `HEAD:${first.task.branch}`], revoked[0]!.token);
      // git asks for other credentials when the server answers 401 to the ones it sent.
      expect(refused).toMatch(/could not read Username|Invalid username or token|Authentication failed/);
    },
    90_000,
  );

  test("a worker killed with SIGKILL mid-run and started again re-attaches: the work is handed off on its branch", async () => {
    rig = await startLoop({ provider });
    await rig.queue(7);
    const agent = rig.agent(
      "slow",
      ["echo 'part one' > part.txt", "git add part.txt", "git commit -qm 'Part one'", "sleep 600"].join("\n"),
    );
    const first = rig.start(["--agent", agent]);
    await eventually(() => (/agent started/.test(first.stdout()) ? true : undefined), 20_000, "the agent to start");
    await eventually(
      async () => {
        const detail = (await rig.task(7)) as { runs: Array<{ id: string }> };
        const id = detail.runs[0]?.id;
        return id && existsSync(`${rig.workdir}/runs/${id}/part.txt`) ? true : undefined;
      },
      20_000,
      "part one in the worktree",
    );
    first.proc.kill("SIGKILL");
    await first.done;
    const again = await rig.once(["--agent", rig.agent("never", "exit 9")]);
    expect({ code: again.code, out: again.stdout + again.stderr }).toEqual({
      code: 0,
      out: expect.stringMatching(/handoff|handed off/i),
    });
    const { task } = (await rig.task(7)) as { task: { state: string; branch: string } };
    expect(rig.fileAt(task.branch, "part.txt")).toBe("part one\n");
    expect(task.state).toBe("queued");
  }, 90_000);
});
