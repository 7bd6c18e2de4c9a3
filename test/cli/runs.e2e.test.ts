/**
 * `orchestra runs` and GET /api/v1/runs against the real service: a run
 * driven through the lifecycle rig until it is classified, another left live,
 * then the list newest first in its human and --json forms, each filter, and
 * a bad filter refused with the parameter it is about.
 */
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { providers } from "../support/databases.js";
import { cliAgainst } from "../support/cli.js";

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const { cli, ok } = cliAgainst(() => rig.app);
  const api = async (path: string) => {
    const res = await rig.app.admin(path);
    return { status: res.status, body: (await res.json()) as any };
  };

  test("a classified run and a live one: newest first, human and --json, filtered by class, state, task, repository and limit", async () => {
    rig = await startRig({ provider });
    await rig.queue(1);
    await rig.queue(2);
    const w = await rig.worker("night-shift");
    const first = (await w.claim()).body;
    // No branch, no PR on GitHub: the exit is classified as empty debris.
    const exited = await w.exit(first.run.id, { leaseEpoch: first.run.leaseEpoch, exitCode: 1 });
    expect(exited.body).toMatchObject({
      outcome: "classified",
      class: "debris-empty",
      recovery: "delete-branch-requeue",
    });
    const second = (await w.claim()).body;
    expect(second.run.id).not.toBe(first.run.id);

    // The JSON is the API's, and each run is rendered exactly as in its task's detail.
    const listed = await api("/api/v1/runs");
    expect(listed.status).toBe(200);
    expect(JSON.parse(await ok("runs", "--json"))).toEqual(listed.body);
    expect(listed.body.limit).toBe(50);
    expect(listed.body.runs.map((r: { id: string }) => r.id)).toEqual([second.run.id, first.run.id]);
    for (const r of listed.body.runs) {
      const detail = (await api(`/api/v1/tasks/${r.task.id}`)).body;
      const { task, workerName, ...run } = r;
      expect(run).toEqual(detail.runs.find((d: { id: string }) => d.id === r.id));
      expect(task).toEqual({ id: detail.task.id, repo: REPO, issue: detail.task.issue });
      expect(workerName).toBe("night-shift");
    }
    const classified = listed.body.runs[1];
    expect(classified).toMatchObject({
      state: "exited",
      endReason: expect.stringMatching(/^exited 1/),
      class: "debris-empty",
      recovery: "delete-branch-requeue",
      task: { id: first.task.id, issue: first.task.issue },
    });

    const table = (await ok("runs")).split("\n");
    expect(table[0]).toMatch(/^RUN +TASK +WORKER +STATE +CLASS +RECOVERY +STARTED +TOOK +EVIDENCE$/);
    expect(table[1]).toMatch(
      new RegExp(`^${second.run.id} +${REPO}#${second.task.issue} +night-shift +live +- +- +\\S+Z +\\d+s so far$`),
    );
    expect(table[2]).toMatch(
      new RegExp(
        `^${first.run.id} +${REPO}#${first.task.issue} +night-shift +${classified.endReason} +debris-empty +delete-branch-requeue +\\S+Z +\\d+s +no pull request and no branch on GitHub; nothing reported dirty$`,
      ),
    );
    expect(table.slice(3)).toEqual([""]);

    const byClass = JSON.parse(await ok("runs", "--class", "debris-empty", "--json"));
    expect(byClass.runs.map((r: { id: string }) => r.id)).toEqual([first.run.id]);
    expect(JSON.parse(await ok("runs", "--class", "infra", "--json")).runs).toEqual([]);
    expect(JSON.parse(await ok("runs", "--state", "live", "--json")).runs.map((r: { id: string }) => r.id)).toEqual([
      second.run.id,
    ]);
    expect(
      JSON.parse(await ok("runs", "--task", first.task.id, "--json")).runs.map((r: { id: string }) => r.id),
    ).toEqual(
      listed.body.runs
        .filter((r: { task: { id: string } }) => r.task.id === first.task.id)
        .map((r: { id: string }) => r.id),
    );
    const newest = await ok("runs", "--repo", REPO, "--limit", "1");
    expect(newest.split("\n").slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${second.run.id} `)),
      "(the newest 1; --limit shows more)",
      "",
    ]);
    expect(await ok("runs", "--repo", "acme/elsewhere")).toBe("no runs\n");
  });

  test("a bad filter: 400 naming the parameter; the CLI says so (exit 1) or refuses the option itself (exit 2)", async () => {
    rig = await startRig({ provider });
    for (const [query, message] of [
      ["class=nope", /^class must be one of merged, phantom, .*unknown \(got "nope"\)$/],
      ["state=done", /^state must be one of live, exited, expired, revoked, review, aborted/],
      ["repo=acme", /^repo must be owner\/name/],
      ["limit=0", /^limit must be a whole number from 1 to 1000 \(got "0"\)$/],
      ["limit=5x", /^limit must be a whole number from 1 to 1000/],
      ["limit=1&limit=2", /^limit is given more than once/],
      ["clas=infra", /^unknown query parameter clas; this list takes repo, class, task, state, limit$/],
    ] as const) {
      const r = await api(`/api/v1/runs?${query}`);
      expect({ query, status: r.status }).toEqual({ query, status: 400 });
      expect(r.body.error).toMatch(message);
    }
    const unknownTask = await api("/api/v1/runs?task=no-such-task");
    expect(unknownTask).toEqual({
      status: 404,
      body: expect.objectContaining({ error: "no task no-such-task; list them with GET /api/v1/tasks" }),
    });
    expect((await fetch(`${rig.app.url}/api/v1/runs`)).status).toBe(401);

    const badRepo = await cli("runs", "--repo", "acme");
    expect(badRepo).toMatchObject({ code: 1, stdout: "" });
    expect(badRepo.stderr).toMatch(/^orchestra: GET \/api\/v1\/runs\?repo=acme answered 400: repo must be owner\/name/);
    for (const [args, reason] of [
      [["runs", "--class", "nope"], /Allowed choices are merged, phantom/],
      [["runs", "--limit", "0"], /expected a whole number from 1 to 1000/],
    ] as const) {
      const r = await cli(...args);
      expect(r).toMatchObject({ code: 2, stdout: "" });
      expect(r.stderr).toMatch(reason);
      expect(r.stderr).toContain("usage: orchestra runs");
    }
  });
});
