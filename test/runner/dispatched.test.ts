/**
 * The dispatched run's pure parts: the inputs read from the job's event, the
 * job's conclusion for each way a run ends, and the settings an Actions job
 * gives the worker.
 */
import { dispatchedExitCode, dispatchOf, DISPATCHED_EXIT, LocalService } from "../../src/runner/dispatched.js";
import { workerSettings, type WorkerFlags } from "../../src/runner/config.js";
import type { RunEnd } from "../../src/runner/finish.js";

const INPUTS = { task: "t1", run: "r1", attempt: "2", lease_epoch: "e1", branch: "agent/issue-12", continuation: "" };

describe("dispatchOf", () => {
  test.each<[string, unknown, unknown]>([
    ["a fresh run", { inputs: INPUTS }, { inputs: INPUTS, issue: 12 }],
    [
      "a continuation",
      { inputs: { ...INPUTS, continuation: '{"kind":"fix-checks","prNumber":7}' } },
      { issue: 12, inputs: { continuation: '{"kind":"fix-checks","prNumber":7}' } },
    ],
    [
      "no continuation input at all (an older dispatch)",
      { inputs: { ...INPUTS, continuation: undefined } },
      { issue: 12, inputs: { continuation: "" } },
    ],
    ["another branch prefix", { inputs: { ...INPUTS, branch: "bots/issue-3" } }, { issue: 3 }],
  ])("%s", (_what, event, expected) => {
    expect(dispatchOf(event)).toMatchObject(expected as object);
  });

  test.each<[string, unknown, RegExp]>([
    ["no event", null, /the event has no inputs: run this only in a job started by workflow_dispatch/],
    ["a push event", { ref: "refs/heads/main", commits: [] }, /the event has no inputs/],
    ["inputs missing", { inputs: { run: "r1", branch: "agent/issue-1" } }, /lacks the input\(s\) task, attempt/],
    ["a number where a string goes", { inputs: { ...INPUTS, attempt: 2 } }, /lacks the input\(s\) attempt/],
    ["attempt zero", { inputs: { ...INPUTS, attempt: "0" } }, /attempt is not a run's attempt: "0"/],
    ["not a task branch", { inputs: { ...INPUTS, branch: "main" } }, /branch "main" is not a task's branch/],
    ["a branch with a suffix", { inputs: { ...INPUTS, branch: "agent/issue-1x" } }, /not a task's branch/],
    ["continuation not JSON", { inputs: { ...INPUTS, continuation: "{" } }, /continuation is not a continuation/],
    ["continuation without kind", { inputs: { ...INPUTS, continuation: "{}" } }, /continuation is not/],
  ])("refused: %s", (_what, event, error) => {
    expect(dispatchOf(event)).toMatch(error);
  });
});

describe("dispatchedExitCode", () => {
  const exited = (body: Record<string, unknown>, pushed = true): RunEnd => ({
    kind: "exited",
    answer: { outcome: "dispatched" },
    body: { leaseEpoch: "e1", exitCode: 0, ...body },
    pushed,
  });
  test.each<[string, RunEnd, number]>([
    ["the agent finished and its work is pushed", exited({ headSha: "abc" }), DISPATCHED_EXIT.success],
    ["the agent changed nothing (Orchestra calls it a phantom)", exited({}), DISPATCHED_EXIT.success],
    ["the agent failed", exited({ exitCode: 2 }), DISPATCHED_EXIT.failure],
    ["stopped, its work handed off", exited({ handoff: true }), DISPATCHED_EXIT.failure],
    ["the tests failed", exited({ testsPassed: false }), DISPATCHED_EXIT.failure],
    ["the push failed", exited({}, false), DISPATCHED_EXIT.failure],
    ["released in preflight", { kind: "released", reason: "clone" }, DISPATCHED_EXIT.preflight],
    ["it asked a question", { kind: "lost", reason: "dispatched" }, DISPATCHED_EXIT.failure],
    ["the worker failed", { kind: "failed", error: "x" }, DISPATCHED_EXIT.failure],
  ])("%s → %d", (_what, end, code) => {
    expect(dispatchedExitCode(end)).toBe(code);
  });
});

test("the local service keeps the exit and refuses a question, saying where it went", async () => {
  const local = new LocalService(() => Date.parse("2026-01-01T00:00:00Z"));
  expect(await local.post("/api/v1/runs/r1/heartbeat", {})).toEqual({
    status: 200,
    body: { leaseExpiresAt: "2026-01-01T01:00:00.000Z", decisions: [] },
  });
  expect((await local.post("/api/v1/runs/r1/exit", { leaseEpoch: "e1", exitCode: 3 })).body).toEqual({
    outcome: "dispatched",
  });
  expect(local.exit).toEqual({ leaseEpoch: "e1", exitCode: 3 });
  const asked = await local.post("/api/v1/runs/r1/decision-requests", { question: "Which one?" });
  expect(asked.status).toBe(422);
  expect(local.question).toBe("Which one?");
});

describe("workerSettings --dispatched", () => {
  const job = {
    GITHUB_TOKEN: "ghs_job",
    GITHUB_SERVER_URL: "https://ghe.example.com",
    GITHUB_API_URL: "https://ghe.example.com/api/v3",
    RUNNER_TEMP: "/home/runner/work/_temp",
  };
  const parse = (flags: WorkerFlags, env: Record<string, string>) => workerSettings(flags, env, null, () => "");

  test("the job's token, host and scratch space; no worker token needed; one run", () => {
    const r = parse({ dispatched: true, agent: "a" }, job);
    expect(r.ok && r.settings).toMatchObject({
      dispatched: true,
      once: true,
      token: "",
      gitToken: "ghs_job",
      githubUrl: "https://ghe.example.com",
      githubApiUrl: "https://ghe.example.com/api/v3",
      workdir: "/home/runner/work/_temp/orchestra-work",
    });
  });

  test("a token of the operator's own wins over the job's", () => {
    const r = parse({ dispatched: true, agent: "a" }, { ...job, ORCHESTRA_GIT_TOKEN: "ghs_app" });
    expect(r.ok && r.settings.gitToken).toBe("ghs_app");
  });

  test("without --dispatched the runner's variables are not read", () => {
    const r = parse({ agent: "a" }, { ...job, ORCHESTRA_WORKER_TOKEN: "wt" });
    expect(r.ok && r.settings).toMatchObject({ gitToken: null, githubUrl: "https://github.com" });
  });

  test("refused without the job's token, saying how to give it", () => {
    const r = parse({ dispatched: true, agent: "a" }, { GITHUB_SERVER_URL: "https://github.com" });
    expect(!r.ok && r.error).toMatch(/--dispatched needs the job's token: .*GITHUB_TOKEN: \$\{\{ github.token \}\}/);
  });
});
