/**
 * Worker tokens end to end, through the real server: a token is stored only
 * as its hash (an Idempotency-Key replay of a registration never returns or
 * stores it), the operator lists, revokes and rotates tokens over the API and
 * the CLI (which registers workers too), and a revoked worker's live lease is
 * released through the machine.
 */
import { childEnv } from "../support/cli.js";
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO, startRig, type Rig } from "../support/lifecycle-rig.js";
import { onceForAll, providers } from "../support/databases.js";

const json = { "content-type": "application/json" };

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  const anyDb = onceForAll(provider);
  let rig: Rig;
  afterEach(async () => {
    rig.fake.assertNoViolations();
    await rig.stop();
  });

  const register = (body: unknown, key?: string) =>
    rig.app.admin("/api/v1/workers", {
      method: "POST",
      headers: { ...json, ...(key ? { "idempotency-key": key } : {}) },
      body: JSON.stringify(body),
    });
  const asWorker = (token: string, method: string, path: string, body?: unknown) =>
    fetch(rig.app.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...json },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** Every row of every table, as text: where a leaked token would show. */
  async function everyRow(): Promise<string> {
    const db = rig.app.database.db;
    const tables =
      rig.app.database.provider === "sqlite"
        ? await db.$queryRawUnsafe<Array<{ name: string }>>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
        : await db.$queryRawUnsafe<Array<{ name: string }>>(
            `SELECT tablename::text AS name FROM pg_tables WHERE schemaname = current_schema()`,
          );
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["Worker", "IdempotentResponse", "Run", "Task"]));
    let text = "";
    for (const { name } of tables) {
      const rows = await db.$queryRawUnsafe<unknown[]>(`SELECT * FROM "${name}"`);
      text += JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
    }
    return text;
  }

  test("a registration retried with its Idempotency-Key gets the same worker without the token; no table holds the token, the worker row only its hash and hint", async () => {
    rig = await startRig({ provider });
    const first = await register({ name: "laptop", repos: [REPO] }, "reg-1");
    expect(first.status).toBe(201);
    const made = (await first.json()) as { id: string; token: string; tokenHint: string };
    expect(made.token).toMatch(/^orw_[0-9a-f]{48}$/);
    expect(made.tokenHint).toBe(made.token.slice(-4));

    const retry = await register({ name: "laptop", repos: [REPO] }, "reg-1");
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replay")).toBe("true");
    const replayed = (await retry.json()) as Record<string, unknown>;
    expect(replayed).toMatchObject({ id: made.id, token: null, tokenHint: made.tokenHint });
    expect(replayed["message"]).toContain(`orchestra workers rotate ${made.id}`);
    expect(JSON.stringify(replayed)).not.toContain(made.token);
    expect(await rig.app.database.db.worker.count()).toBe(1);

    const row = await rig.app.database.db.worker.findUniqueOrThrow({ where: { id: made.id } });
    expect(row.tokenHash).toBe(createHash("sha256").update(made.token).digest("hex"));
    expect(row.tokenHint).toBe(made.tokenHint);
    const stored = await rig.app.database.db.idempotentResponse.findMany();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ state: "done", status: 201 });
    // The token works, and after the worker has used it nothing anywhere holds it.
    await rig.queue(1);
    expect((await asWorker(made.token, "POST", "/api/v1/claims", {})).status).toBe(200);
    const rows = await everyRow();
    expect(rows).toContain(made.id);
    expect(rows).not.toContain(made.token);
    expect(rows).not.toContain(made.token.slice(4));
  });

  test("two concurrent registrations with one key make one worker; the other answer carries no token", async () => {
    rig = await startRig({ provider });
    const answers = await Promise.all([register({ name: "twin" }, "reg-race"), register({ name: "twin" }, "reg-race")]);
    const bodies = (await Promise.all(answers.map((a) => a.json()))) as Array<Record<string, unknown>>;
    expect(await rig.app.database.db.worker.count()).toBe(1);
    const withToken = bodies.filter((b) => typeof b["token"] === "string");
    expect(withToken).toHaveLength(1);
    const other = bodies.find((b) => b !== withToken[0])!;
    // The other one was either turned away while the first ran, or replayed once it was done.
    if (other["reason"] === "in-progress") expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    else expect(other).toMatchObject({ id: withToken[0]!["id"], token: null });
  });

  test("the operator lists workers without secrets, rotates a token (the old one is refused at once, the new one works) and revokes a worker (401 that says so)", async () => {
    rig = await startRig({ provider });
    const a = await rig.worker("alpha", [REPO]);
    const b = await rig.worker("beta");
    await rig.queue(2);
    expect((await a.claim()).status).toBe(200);

    const listed = await rig.app.admin("/api/v1/workers");
    expect(listed.status).toBe(200);
    const { workers } = (await listed.json()) as { workers: Array<Record<string, unknown>> };
    expect(workers).toEqual([
      expect.objectContaining({
        id: a.id,
        name: "alpha",
        repos: [REPO],
        tokenHint: a.token.slice(-4),
        liveLeases: 1,
        revokedAt: null,
        rotatedAt: null,
        lastSeenAt: expect.any(String),
      }),
      expect.objectContaining({
        id: b.id,
        name: "beta",
        repos: null,
        tokenHint: b.token.slice(-4),
        liveLeases: 0,
        revokedAt: null,
        lastSeenAt: null,
      }),
    ]);
    expect(JSON.stringify(workers)).not.toContain(a.token);
    expect(
      (await fetch(rig.app.url + "/api/v1/workers", { headers: { authorization: `Bearer ${a.token}` } })).status,
    ).toBe(401);

    // Rotation: a new token, once; the old one stops at once, the live lease stays the worker's.
    const rotated = await rig.app.admin(`/api/v1/workers/${a.id}/rotate`, {
      method: "POST",
      headers: json,
      body: "{}",
    });
    expect(rotated.status).toBe(200);
    const fresh = (await rotated.json()) as { token: string; tokenHint: string; rotatedAt: string };
    expect(fresh.token).not.toBe(a.token);
    expect(fresh.tokenHint).toBe(fresh.token.slice(-4));
    const old = await asWorker(a.token, "GET", "/api/v1/workers/me/runs");
    expect(old.status).toBe(401);
    expect(((await old.json()) as { reason: string }).reason).toBe("unknown-token");
    const mine = await asWorker(fresh.token, "GET", "/api/v1/workers/me/runs");
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { runs: unknown[] }).runs).toHaveLength(1);
    const after = (
      (await (await rig.app.admin("/api/v1/workers")).json()) as { workers: Array<Record<string, unknown>> }
    ).workers.find((w) => w["id"] === a.id);
    expect(after).toMatchObject({ tokenHint: fresh.tokenHint, rotatedAt: fresh.rotatedAt });

    // Revocation: 204, then every call of that worker is refused with a reason.
    expect((await rig.app.admin(`/api/v1/workers/${b.id}`, { method: "DELETE" })).status).toBe(204);
    const refused = await b.claim();
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ reason: "revoked" });
    expect(refused.body.error).toContain("was revoked");
    expect(refused.body.error).toContain("register a new worker");
    // A revoked worker stays revoked: no rotation back to life; unknown ids are 404.
    const noRotate = await rig.app.admin(`/api/v1/workers/${b.id}/rotate`, {
      method: "POST",
      headers: json,
      body: "{}",
    });
    expect(noRotate.status).toBe(409);
    expect(((await noRotate.json()) as { error: string }).error).toContain("register a new one");
    expect((await rig.app.admin(`/api/v1/workers/nope`, { method: "DELETE" })).status).toBe(404);
    expect(
      (await rig.app.admin(`/api/v1/workers/nope/rotate`, { method: "POST", headers: json, body: "{}" })).status,
    ).toBe(404);
    // Revoking twice is fine and changes nothing more.
    const revokedAt = (await rig.app.database.db.worker.findUniqueOrThrow({ where: { id: b.id } })).revokedAt;
    expect((await rig.app.admin(`/api/v1/workers/${b.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await rig.app.database.db.worker.findUniqueOrThrow({ where: { id: b.id } })).revokedAt).toEqual(revokedAt);
  });

  test("revoking a worker releases its live lease through the machine: the run ends revoked, its heartbeat is refused, and the sweep sends the task back to the queue", async () => {
    rig = await startRig({ provider });
    await rig.queue(3);
    const w = await rig.worker("doomed");
    const run = (await w.claim()).body.run;
    expect(rig.labels(3)).toEqual(["agent:in-progress"]);

    const revoked = await rig.app.admin(`/api/v1/workers/${w.id}`, { method: "DELETE" });
    expect(revoked.status).toBe(204);
    expect(revoked.headers.get("x-leases-released")).toBe("1");
    const t = await rig.task(3);
    expect(t.task).toMatchObject({ state: "claimed", lease: null });
    expect(t.runs[0]).toMatchObject({ id: run.id, state: "revoked" });
    expect(t.runs[0].endReason).toBe("worker doomed was revoked");

    const beat = await w.heartbeat(run.id, run.leaseEpoch);
    expect(beat.status).toBe(401);
    expect(beat.body.reason).toBe("revoked");
    expect((await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0 })).status).toBe(401);

    // Classified like any run that ended without a PR (no grace: nobody will send a late exit).
    expect(await rig.sweep()).toMatchObject({ classified: 1 });
    const settled = await rig.task(3);
    expect(settled.runs[0]).toMatchObject({
      state: "revoked",
      class: "debris-empty",
      recovery: "delete-branch-requeue",
    });
    expect(settled.task.state).toBe("queued");
    expect(rig.labels(3)).toEqual(["agent:queued"]);
    const next = await rig.worker("successor");
    const claim = await next.claim();
    expect(claim.body).toMatchObject({ task: { issue: 3 }, run: { attempt: 2 } });
    const listed = (
      (await (await rig.app.admin("/api/v1/workers")).json()) as { workers: Array<Record<string, unknown>> }
    ).workers;
    expect(listed.find((x) => x["id"] === w.id)).toMatchObject({ liveLeases: 0, revokedAt: expect.any(String) });
  });

  test("a revocation made elsewhere (another replica) stops claims at once, even while this process still remembers the token", async () => {
    rig = await startRig({ provider });
    await rig.queue(4);
    const w = await rig.worker();
    expect((await w.call("GET", "/api/v1/workers/me/runs")).status).toBe(200); // cached now
    await rig.app.database.db.worker.update({ where: { id: w.id }, data: { revokedAt: new Date() } });
    const claim = await w.claim();
    expect(claim.status).toBe(401);
    expect(claim.body.reason).toBe("revoked");
    expect((await rig.task(4)).task.state).toBe("queued");
  });

  describe("the CLI", () => {
    const run = promisify(execFile);
    const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");
    const cli = (...args: string[]) =>
      run(process.execPath, [bin, ...args], {
        cwd: tmpdir(),
        env: childEnv({ ORCHESTRA_URL: rig.app.url, ORCHESTRA_ADMIN_TOKEN: rig.app.adminToken }),
      });

    anyDb(
      "orchestra workers add registers a worker: its token once, on a line of its own, and it claims with it; --json is the API's answer",
      async () => {
        rig = await startRig({ provider });
        const { stdout } = await cli("workers", "add", "laptop", "--repo", REPO, "--repo", "acme/lib");
        const lines = stdout.split("\n");
        const tokens = lines.filter((l) => /^orw_[0-9a-f]{48}$/.test(l));
        expect(tokens).toHaveLength(1);
        const token = tokens[0]!;
        expect(stdout.split(token)).toHaveLength(2); // printed once
        const id = /^worker (\S+) \(laptop\) registered; it may claim in acme\/app, acme\/lib$/.exec(lines[0]!)?.[1];
        expect(id).toBeDefined();
        expect(lines[1]).toBe(
          `its token, shown only once (Orchestra keeps only its hash; if it is lost, orchestra workers rotate ${id} makes a new one):`,
        );
        expect(lines[2]).toBe(token);
        expect(lines.slice(3)).toEqual([
          "give it to the worker in ORCHESTRA_WORKER_TOKEN, or in a file for --token-file:",
          `  ORCHESTRA_WORKER_TOKEN=<the token above> orchestra worker --url ${rig.app.url} --agent '<agent command>'`,
          "",
        ]);

        const listed = JSON.parse((await cli("workers", "--json")).stdout) as {
          workers: Array<Record<string, unknown>>;
        };
        expect(listed.workers).toEqual([
          expect.objectContaining({ id, name: "laptop", repos: [REPO, "acme/lib"], tokenHint: token.slice(-4) }),
        ]);
        const row = await rig.app.database.db.worker.findUniqueOrThrow({ where: { id: id! } });
        expect(row.tokenHash).toBe(createHash("sha256").update(token).digest("hex"));
        await rig.queue(7);
        const claim = await asWorker(token, "POST", "/api/v1/claims", {});
        expect(claim.status).toBe(200);
        expect(((await claim.json()) as { task: { issue: number } }).task.issue).toBe(7);

        // No --repo: every repository. --json: the API's answer, as is.
        const made = JSON.parse((await cli("workers", "add", "ci", "--json")).stdout) as Record<string, unknown>;
        expect(Object.keys(made).sort()).toEqual(["id", "token", "tokenHint"]);
        expect(made["token"]).toMatch(/^orw_[0-9a-f]{48}$/);
        expect((await asWorker(made["token"] as string, "GET", "/api/v1/workers/me/runs")).status).toBe(200);
        const all = JSON.parse((await cli("workers", "list", "--json")).stdout) as {
          workers: Array<Record<string, unknown>>;
        };
        expect(all.workers.find((w) => w["id"] === made["id"])).toMatchObject({ name: "ci", repos: null });

        // Mistakes are usage errors (exit 2) and register nothing.
        for (const [args, says] of [
          [["workers", "add"], "workers add needs a name for the worker"],
          [["workers", "add", "x", "--repo", "not-a-repo"], "--repo not-a-repo is not owner/repo"],
          [["workers", "add", "x", "y"], "workers add takes one name (got x y)"],
          [["workers", "list", "--repo", REPO], "workers list takes no --repo"],
        ] as const)
          await expect(cli(...args)).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining(says) });
        expect(await rig.app.database.db.worker.count()).toBe(2);
      },
    );

    anyDb("orchestra workers list | rotate | revoke, as a table and as --json", async () => {
      rig = await startRig({ provider });
      const w = await rig.worker("ci-runner", [REPO]);
      await rig.queue(5);
      await w.claim();

      const table = (await cli("workers")).stdout.split("\n");
      expect(table[0]).toMatch(/^ID\s+NAME\s+REPOS\s+TOKEN\s+LAST SEEN\s+LEASES\s+PAUSED UNTIL\s+REVOKED$/);
      expect(table[1]).toContain(w.id);
      expect(table[1]).toContain("ci-runner");
      expect(table[1]).toContain(REPO);
      expect(table[1]).toContain(`…${w.token.slice(-4)}`);
      expect(table[1]).toMatch(/\s1\s+-\s+-$/);
      expect((await cli("workers", "list")).stdout).toBe(table.join("\n"));
      const listed = JSON.parse((await cli("workers", "list", "--json")).stdout) as {
        workers: Array<Record<string, unknown>>;
      };
      expect(listed.workers).toEqual([
        expect.objectContaining({ id: w.id, name: "ci-runner", liveLeases: 1, revokedAt: null }),
      ]);

      const rotated = (await cli("workers", "rotate", w.id)).stdout;
      const token = rotated.trim().split("\n").pop()!;
      expect(rotated).toContain("shown once");
      expect(token).toMatch(/^orw_[0-9a-f]{48}$/);
      expect((await asWorker(token, "GET", "/api/v1/workers/me/runs")).status).toBe(200);
      expect((await asWorker(w.token, "GET", "/api/v1/workers/me/runs")).status).toBe(401);
      const again = JSON.parse((await cli("workers", "rotate", w.id, "--json")).stdout) as {
        token: string;
        tokenHint: string;
      };
      expect(again.tokenHint).toBe(again.token.slice(-4));
      expect((await asWorker(token, "GET", "/api/v1/workers/me/runs")).status).toBe(401);

      const revoked = (await cli("workers", "revoke", w.id)).stdout;
      expect(revoked).toBe(
        `worker ${w.id} (ci-runner) revoked: its token is refused from now on; 1 live lease released (their runs are classified by the next sweep)\n`,
      );
      expect((await asWorker(again.token, "GET", "/api/v1/workers/me/runs")).status).toBe(401);
      const json2 = JSON.parse((await cli("workers", "revoke", w.id, "--json")).stdout) as {
        worker: Record<string, unknown>;
        leasesReleased: number;
      };
      expect(json2).toMatchObject({
        worker: { id: w.id, liveLeases: 0, revokedAt: expect.any(String) },
        leasesReleased: 0,
      });

      // Mistakes say what went wrong and what to do.
      await expect(cli("workers", "revoke")).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringContaining("needs a worker id; list them with: orchestra workers list"),
      });
      await expect(cli("workers", "rotate", "nope")).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining("answered 404: no worker nope"),
      });
      await expect(cli("workers", "promote", w.id)).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringContaining('unknown verb "promote"'),
      });
    });
  });
});
