/**
 * `orchestra worker` when a run does not end by itself: the progress
 * watchdog, the wall-clock cap, a 409 on a heartbeat, a question, a preflight
 * that fails (a release, never an attempt), a worker killed mid-run and
 * started again, and the service failing for a moment.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { claimOnce, eventually, gitIn, once, refOf, rig, startWorker, type Rig } from "./scripted.js";

let r: Rig;
afterEach(async () => r?.cleanup());

const BRANCH = "agent/12-fix-the-parser";
const calls = (what: RegExp) => r.api.calls("POST", what);
const trailer = (ref: string) => /Orchestra-Handoff: (\S+)/.exec(gitIn(r.bare, "log", "-1", "--format=%B", ref))?.[1];

test.each([
  [
    "the idle watchdog (no output, no worktree change)",
    ["--idle-minutes", "0.02"],
    "echo started\necho wip > wip.txt\nexec sleep 600",
    "idle",
  ],
  [
    "the wall-clock cap",
    ["--max-run-minutes", "0.03"],
    "echo wip > wip.txt\nwhile true; do echo busy; sleep 0.1; done",
    "wall-clock-cap",
  ],
])(
  "%s stops the agent's group, commits its work as handoff and pushes it; the exit says handoff",
  async (_what, args, script, reason) => {
    r = await rig();
    claimOnce(r, r.claimAnswer());
    const res = await once(r, ["--agent", r.agent("stuck", script), ...args]);
    expect(res).toMatchObject({ code: 0 });
    expect(res.stderr).toContain(`stopped by the worker: ${reason}`);
    const head = refOf(r.bare, `refs/heads/${BRANCH}`)!;
    expect(trailer(head)).toBe(reason);
    expect(gitIn(r.bare, "show", `${head}:wip.txt`)).toBe("wip");
    const [exit] = calls(/\/exit$/);
    expect(exit!.body).toMatchObject({ exitCode: 143, dirty: true, handoff: true, headSha: head });
  },
);

test("a 409 stalled on a heartbeat: the agent is stopped, its work pushed as handoff, the exit sent", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  r.api.on("POST", /\/heartbeat$/, () => ({ status: 409, body: { error: "lease no longer held", reason: "stalled" } }));
  const res = await once(r, ["--agent", r.agent("slow", "echo wip > wip.txt\nexec sleep 600")]);
  expect(res).toMatchObject({ code: 0 });
  expect(res.stderr).toContain("lease lost  stalled");
  expect(trailer(refOf(r.bare, `refs/heads/${BRANCH}`)!)).toBe("lease-stalled");
  expect(calls(/\/exit$/)[0]!.body).toMatchObject({ exitCode: 143, handoff: true, dirty: true });
});

test("a 409 superseded: the agent is stopped, nothing is pushed, no exit; the work stays committed locally; exit 5", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  r.api.on("POST", /\/heartbeat$/, () => ({
    status: 409,
    body: { error: "the task has moved on", reason: "superseded" },
  }));
  const res = await once(r, ["--agent", r.agent("slow", "echo wip > wip.txt\nexec sleep 600")]);
  expect(res).toMatchObject({ code: 5 });
  expect(refOf(r.bare, `refs/heads/${BRANCH}`)).toBeNull();
  expect(calls(/\/exit$/)).toHaveLength(0);
  expect(res.stderr).toMatch(/superseded {2}another run holds the task now: nothing pushed/);
  const wt = join(r.workdir, "runs", "run-1");
  expect(gitIn(wt, "show", "HEAD:wip.txt")).toBe("wip");
});

test("a question: the work is pushed first, then the question relayed once; no exit", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  let pushedWhenAsked: string | null = null;
  r.api.on("POST", /\/decision-requests$/, () => {
    pushedWhenAsked = refOf(r.bare, `refs/heads/${BRANCH}`);
    return undefined;
  });
  const agent = r.agent(
    "ask",
    'echo draft > draft.txt\nprintf "Which parser version?\\n" > "$ORCHESTRA_QUESTION_FILE"\nexec sleep 600',
  );
  const res = await once(r, ["--agent", agent]);
  expect({ code: res.code, stderr: res.stderr }).toMatchObject({ code: 0 });
  const requests = calls(/\/decision-requests$/);
  expect(requests.map((q) => q.body)).toEqual([{ leaseEpoch: "epoch-1", question: "Which parser version?" }]);
  const head = refOf(r.bare, `refs/heads/${BRANCH}`)!;
  expect(trailer(head)).toBe("question");
  // Pushed before the question ended the lease (and with it the brokered token).
  expect(pushedWhenAsked).toBe(head);
  expect(calls(/\/exit$/)).toHaveLength(0);
  expect(res.stdout).toContain("question  relayed");
});

test.each([
  ["the agent's program is not on PATH", (x: Rig) => [x.claimAnswer(), "no-such-agent-cli --go"], /not found on PATH/],
  [
    "the clone fails",
    (x: Rig) => [x.claimAnswer({ task: { cloneUrl: `file://${x.root}/missing.git` } }), "sh -c true"],
    /cannot fetch acme\/app/,
  ],
])("preflight: %s → a release with the reason, never an attempt; exit 4", async (_what, setup, reason) => {
  r = await rig();
  const [answer, agent] = setup(r) as [unknown, string];
  claimOnce(r, answer);
  const res = await once(r, ["--agent", agent]);
  expect(res).toMatchObject({ code: 4 });
  const [release] = calls(/\/runs\/run-1\/release$/);
  expect(release!.body.leaseEpoch).toBe("epoch-1");
  expect(release!.body.reason).toMatch(reason);
  expect(release!.headers["idempotency-key"]).toBeTruthy();
  expect(calls(/\/exit$/)).toHaveLength(0);
  expect(res.stderr).toMatch(reason);
});

test("a server without release (404): the preflight failure is reported as an exit with code 127", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  r.api.on("POST", /\/release$/, () => ({ status: 404, body: { error: "not found" } }));
  const res = await once(r, ["--agent", "no-such-agent-cli"]);
  expect(res).toMatchObject({ code: 4 });
  expect(calls(/\/exit$/).map((c) => c.body)).toEqual([{ leaseEpoch: "epoch-1", exitCode: 127 }]);
});

test("killed with SIGKILL mid-run and started again: it re-attaches, stops the orphaned agent, hands the work off", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  const agent = r.agent("long", 'echo $$ > "$HOME/agent.pid"\necho wip > wip.txt\nexec sleep 600');
  const first = startWorker(r, ["--agent", agent]);
  await eventually(() =>
    first.stdout().includes("agent started") && existsSync(join(r.root, "agent.pid")) ? true : undefined,
  );
  first.proc.kill("SIGKILL");
  await first.done;
  const pid = Number(readFileSync(join(r.root, "agent.pid"), "utf8"));
  expect(() => process.kill(pid, 0)).not.toThrow(); // the agent outlived its worker

  r.api.on("GET", /^\/api\/v1\/workers\/me\/runs$/, () => ({
    status: 200,
    body: {
      runs: [
        {
          id: "run-1",
          task: { id: "t1", repo: "acme/app", issue: 12, title: "Fix the parser" },
          leaseEpoch: "epoch-1",
          leaseExpiresAt: new Date(Date.now() + 3000).toISOString(),
          branch: BRANCH,
          continuation: null,
        },
        {
          id: "run-9",
          task: { id: "t9", repo: "acme/app", issue: 9, title: "Elsewhere" },
          leaseEpoch: "epoch-9",
          leaseExpiresAt: new Date(Date.now() + 3000).toISOString(),
          branch: "agent/9",
          continuation: null,
        },
      ],
    },
  }));
  const res = await once(r, ["--agent", agent]);
  expect(res).toMatchObject({ code: 3 }); // re-attached, then nothing more to claim
  await eventually(
    () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    },
    5000,
    "the orphaned agent to be stopped",
  );
  const head = refOf(r.bare, `refs/heads/${BRANCH}`)!;
  expect(trailer(head)).toBe("worker-restarted");
  expect(calls(/\/runs\/run-1\/exit$/)[0]!.body).toMatchObject({
    handoff: true,
    infra: "runner-lost",
    dirty: true,
    headSha: head,
  });
  // The run it has no worktree for is released.
  expect(calls(/\/runs\/run-9\/release$/)[0]!.body).toMatchObject({ leaseEpoch: "epoch-9" });
});

test("a 503 on the exit is retried with the same Idempotency-Key", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  r.api.on("POST", /\/exit$/, (_req, n) => (n === 0 ? { status: 503, body: { error: "restarting" } } : undefined));
  const res = await once(r, ["--agent", r.agent("nothing", "true")]);
  expect(res).toMatchObject({ code: 0 });
  const keys = calls(/\/exit$/).map((c) => c.headers["idempotency-key"]);
  expect(keys).toHaveLength(2);
  expect(keys[0]).toBe(keys[1]);
});

test("--once with nothing to claim exits 3; a refused token exits 1 and says what to check; a bad option exits 2", async () => {
  r = await rig();
  expect((await once(r, ["--agent", "true"])).code).toBe(3);
  r.api.on("POST", /\/claims$/, () => ({ status: 401, body: { error: "unknown worker token" } }));
  const refused = await once(r, ["--agent", "true"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/the service refused the worker token .*check ORCHESTRA_WORKER_TOKEN/);
  const bad = await once(r, ["--agent", "true", "--concurrency", "0"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--concurrency must be a whole number/);
});

test("SIGINT: the worker claims nothing more, stops the agent, pushes its work as handoff, exits 130", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  const w = startWorker(r, ["--agent", r.agent("long", "echo wip > wip.txt\nexec sleep 600")]);
  await eventually(() => (w.stdout().includes("agent started") ? true : undefined));
  w.proc.kill("SIGINT");
  expect(await w.done).toBe(130);
  expect(trailer(refOf(r.bare, `refs/heads/${BRANCH}`)!)).toBe("worker-stopped");
  expect(calls(/\/exit$/)[0]!.body).toMatchObject({ handoff: true, dirty: true });
  expect(calls(/\/claims$/)).toHaveLength(1);
});
