/**
 * The operator CLI's verbs against the real service: the built `orchestra`
 * bin as a child process, the lifecycle rig's App (signed webhooks, the fake
 * GitHub) behind it. Each verb in its human form and its --json form (the
 * API's answer), and the exit codes: 2 with the usage line for a bad command
 * line, 1 with what to do when the service fails or is not there.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { freePort } from "../support/orchestra.js";
import { oneProvider } from "../support/databases.js";
import { childEnv, cliAgainst, runCli as run } from "../support/cli.js";
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";

describe("usage and reachability (no service needed)", () => {
  test.each([
    [["tasks", "--state", "nope"], /Allowed choices are queued, claimed/, "usage: orchestra tasks"],
    [["frob"], /unknown command 'frob'/, "usage: orchestra <command>"],
    [["branches"], /missing required argument 'owner\/repo'/, "usage: orchestra branches"],
    [["branches", "acme/app", "--stale-days", "0"], /whole number of days/, "usage: orchestra branches"],
    [["sweeps", "--kind", "weekly"], /Allowed choices are reconcile/, "usage: orchestra sweeps"],
    [["task"], /missing required argument 'id'/, "usage: orchestra task"],
    [["status", "extra"], /too many arguments/, "usage: orchestra status"],
    [["replay"], /replay needs a delivery id/, "usage: orchestra replay <delivery-id>"],
  ])("%j → exit 2, the reason and the usage line on stderr, nothing on stdout", async (args, reason, usage) => {
    const r = await run({ ORCHESTRA_URL: "http://127.0.0.1:9", ORCHESTRA_ADMIN_TOKEN: "t" }, args);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toMatch(reason);
    expect(r.stderr).toContain(usage);
  });

  test("--help and no arguments: the commands and the exit codes, exit 0", async () => {
    for (const args of [["--help"], []]) {
      const r = await run({}, args);
      expect(r.code).toBe(0);
      for (const verb of ["status", "tasks", "task", "pause", "unpause", "sweeps", "branches", "workers", "classify"])
        expect(r.stdout).toMatch(new RegExp(`^  ${verb} `, "m"));
      expect(r.stdout).toMatch(/exit codes:\n {2}0 {2}done\n {2}1 {2}.+\n {2}2 {2}usage error/);
    }
  });

  test("npm run orchestra -- <command> in the checkout: the built bin, its output and its exit code, no compiling", async () => {
    const npm = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          "npm",
          ["run", "-s", "orchestra", "--", ...args],
          {
            cwd: join(import.meta.dirname, "..", ".."),
            // npm itself is a node script: node on the PATH, the one running the tests.
            env: childEnv({ PATH: `${dirname(process.execPath)}:${process.env["PATH"] ?? ""}` }),
            timeout: 60_000,
          },
          (err, stdout, stderr) =>
            resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
    const help = await npm("classify", "--help");
    // The build is fresh (npm test builds first): nothing is compiled, and nothing but the bin's output is printed.
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: orchestra classify \[--batch\] < facts\.json\n/);
    const wrong = await npm("frob");
    expect(wrong).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "orchestra: unknown command 'frob'\nusage: orchestra <command> [options]; orchestra --help lists the commands\n",
    });
  });

  test("nothing listening at ORCHESTRA_URL → exit 1, says to set ORCHESTRA_URL", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    for (const args of [["status"], ["tasks", "--json"], ["pause", "acme/app"]]) {
      const r = await run({ ORCHESTRA_URL: url, ORCHESTRA_ADMIN_TOKEN: "t" }, args);
      expect(r).toMatchObject({ code: 1, stdout: "" });
      expect(r.stderr).toMatch(
        new RegExp(`^orchestra: cannot reach the service at ${url} .*set ORCHESTRA_URL if it listens elsewhere\\n$`),
      );
    }
  });
});

// The CLI renders the API's answers: what it prints does not depend on the database.
describe.each(oneProvider.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const { cli, ok } = cliAgainst(() => rig.app);
  const apiJson = async (path: string) => {
    const res = await rig.app.admin(path);
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  };

  test("status, tasks, task, pause and unpause: human and --json", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    await rig.queue(2);
    const w = await rig.worker();
    const { run: claimed } = (await w.claim()).body;
    const leased = (await apiJson("/api/v1/tasks?state=claimed")).tasks[0];
    const queued = (await apiJson("/api/v1/tasks?state=queued")).tasks[0];

    const paused = await ok("pause", REPO, "--reason", "deploy freeze");
    expect(paused).toMatch(/^acme\/app paused: nothing new is claimed/);
    expect(paused).toMatch(/paused now:\n {2}acme\/app {2}since \S+Z {2}by operator: deploy freeze\n$/);
    expect(JSON.parse(await ok("pause", REPO, "--reason", "deploy freeze", "--json"))).toMatchObject({
      scope: REPO,
      paused: true,
      all: [{ scope: REPO, reason: "deploy freeze", by: "operator" }],
    });

    const status = await ok("status");
    expect(status).toContain(
      `queue: 1 queued task(s) in 1 repository\n  ${REPO}  1 queued, 1 waiting\n    #${queued.issue} waits for paused: ${REPO} is paused by operator: deploy freeze\n`,
    );
    expect(status).toContain(`live leases: 1\n  ${leased.id}  ${REPO}#${leased.issue}  attempt 1`);
    expect(status).toMatch(/^blocked: 0$/m);
    expect(status).toMatch(/^failed: 0$/m);
    expect(status).toMatch(/^deliveries: 0 parked, 0 retrying, \d+ pending$/m);
    expect(status).toMatch(/^effects: 0 parked, \d+ pending$/m);
    expect(status).toMatch(/^failing reconcile scopes: 0$/m);
    expect(status).toMatch(
      /^replicas: 1 beating\n {2}\S+-\d+-[0-9a-f]{8} {2}last beat [\d.]+ s ago, up since \S+Z {2}\(answered this\)$/m,
    );
    const statusJson = JSON.parse(await ok("status", "--json"));
    expect(statusJson.queued.map((t: { id: string }) => t.id)).toEqual([queued.id]);
    expect(statusJson.claimed.map((t: { id: string }) => t.id)).toEqual([leased.id]);
    expect(statusJson.pause.paused).toEqual([expect.objectContaining({ scope: REPO, by: "operator" })]);
    expect(statusJson.sweeps.failing).toEqual({});

    expect(JSON.parse(await ok("tasks", "--json"))).toEqual(await apiJson("/api/v1/tasks"));
    expect(JSON.parse(await ok("tasks", "--repo", REPO, "--state", "claimed", "--json"))).toEqual({ tasks: [leased] });
    const table = (await ok("tasks")).split("\n");
    expect(table[0]).toMatch(/^ID +ISSUE +STATE +ATTEMPT +PR +WHY$/);
    expect(table).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^${leased.id} +${REPO}#${leased.issue} +claimed +1 +-$`)),
        expect.stringMatching(
          new RegExp(`^${queued.id} +${REPO}#${queued.issue} +queued +${queued.attempt} +- +waiting: paused: `),
        ),
      ]),
    );
    expect(await ok("tasks", "--state", "failed")).toBe("no tasks\n");

    await w.heartbeat(claimed.id, claimed.leaseEpoch);
    const detail = await ok("task", leased.id);
    expect(detail).toMatch(new RegExp(`^task ${leased.id}  ${REPO}#${leased.issue}`));
    expect(detail).toMatch(new RegExp(`^lease: run ${claimed.id}  worker ${w.id}  expires \\S+Z$`, "m"));
    expect(detail).toMatch(new RegExp(`^runs \\(1\\):\\n  #1 ${claimed.id}  live  worker ${w.id}  `, "m"));
    expect(detail).toMatch(/^cost: 1 run\(s\), 1 attempt\(s\), \d+ s wall, GitHub calls \d+/m);
    const detailJson = JSON.parse(await ok("task", leased.id, "--json"));
    const fromApi = await apiJson(`/api/v1/tasks/${leased.id}`);
    expect({ ...detailJson, cost: undefined }).toEqual({ ...fromApi, cost: undefined });
    expect(Object.keys(detailJson.cost).sort()).toEqual(Object.keys(fromApi.cost).sort());

    const missing = await cli("task", "nope");
    expect(missing).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "orchestra: GET /api/v1/tasks/nope answered 404: no task nope\n",
    });

    expect(await ok("unpause", REPO)).toBe("acme/app resumed\npaused now:\n  nothing is paused\n");
    expect(JSON.parse(await ok("unpause", REPO, "--json"))).toEqual({
      scope: REPO,
      paused: false,
      changed: false,
      all: [],
    });
    expect((await apiJson("/api/v1/pause")).paused).toEqual([]);
    expect(await ok("pause")).toMatch(/^Orchestra \(every repository\) paused/);
    expect((await apiJson("/api/v1/pause")).paused).toEqual([expect.objectContaining({ scope: "all" })]);
    expect(await ok("unpause")).toMatch(/^Orchestra \(every repository\) resumed/);

    // A run that ended is shown with its class, recovery and evidence.
    expect((await w.exit(claimed.id, { leaseEpoch: claimed.leaseEpoch, exitCode: 1 })).status).toBe(200);
    const ended = (await apiJson(`/api/v1/tasks/${leased.id}`)).runs[0];
    expect(ended.class).toEqual(expect.any(String));
    const after = await ok("task", leased.id);
    expect(after).toContain(`     class ${ended.class} → recovery ${ended.recovery}\n`);
    for (const key of Object.keys(ended.evidence ?? {})) expect(after).toMatch(new RegExp(`^       ${key}: `, "m"));
  });

  test("sweeps and branches: human and --json", async () => {
    rig = await startRig({ provider });
    await rig.queue(3);
    await rig.sweep();
    const sweeps = await ok("sweeps");
    expect(sweeps).toMatch(/^failing: none\nAT +KIND +INSTALLATION +COUNTS\n\S+Z +deliveries +- +/);
    const sweepsJson = JSON.parse(await ok("sweeps", "--kind", "deliveries", "--json"));
    expect(sweepsJson.reports.length).toBeGreaterThan(0);
    expect(sweepsJson.reports.every((r: { kind: string }) => r.kind === "deliveries")).toBe(true);
    expect(sweepsJson).toEqual(await apiJson("/api/v1/sweeps?kind=deliveries"));

    // deliveries took --json with the rest; its human form is as before.
    await rig.settle();
    const deliveries = await apiJson("/api/v1/deliveries");
    expect(JSON.parse(await ok("deliveries", "--json"))).toEqual(deliveries);
    expect(await ok("deliveries")).toMatch(
      new RegExp(
        `^deliveries: ${Object.entries(deliveries.summary)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(" ")}\n`,
      ),
    );

    rig.fake.state.addBranch(REPO, "agent/fresh", { aheadBy: 1 });
    const old = rig.fake.state.addBranch(REPO, "agent/abandoned", { aheadBy: 2 });
    rig.fake.state.repo(REPO).commits.get(old)!.date = new Date(rig.clock.now().getTime() - 30 * 86_400_000);
    const branches = (await ok("branches", REPO)).split("\n");
    expect(branches[0]).toBe(`${REPO}: 2 branch(es) under agent/, 1 stale (older than 14 days; listed, never deleted)`);
    expect(branches[1]).toMatch(/^BRANCH +SHA +COMMITTED +TASK +PRS +STALE +WHY$/);
    expect(branches).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^agent\/abandoned +[0-9a-f]{7} +\S+Z +- +0 +yes +.*30 days ago/),
        expect.stringMatching(/^agent\/fresh +[0-9a-f]{7} +\S+Z +- +0 +no +/),
      ]),
    );
    const longer = JSON.parse(await ok("branches", REPO, "--stale-days", "40", "--json"));
    expect(longer).toMatchObject({ repo: REPO, staleDays: 40, stale: 0 });
    expect(longer.branches.map((b: { name: string }) => b.name).sort()).toEqual(["agent/abandoned", "agent/fresh"]);

    const unknown = await cli("branches", "nobody/knows");
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toMatch(
      /^orchestra: GET \/api\/v1\/branches\?repo=nobody%2Fknows answered 404: Orchestra does not know nobody\/knows/,
    );
  });
});
