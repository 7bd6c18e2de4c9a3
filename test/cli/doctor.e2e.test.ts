/**
 * `orchestra doctor` as an operator runs it: the built bin as a child
 * process, with the service's environment aimed at the fake GitHub and a test
 * database. No service is running: doctor checks from where it is started.
 * GitHub's side — the App's and each installation's permissions and events,
 * its delivery log, its failures — is arranged on the fake, which answers in
 * GitHub's shapes.
 */
import { spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeGitHub, type FakeGitHub } from "../fake-github/index.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { eventually, freePort } from "../support/orchestra.js";
import { bin, runCli, childEnv } from "../support/cli.js";
import { openDatabase } from "../../src/store/db.js";
import { listMigrations, migrate } from "../../src/store/migrate.js";
import { maskUrl, scrub, secretsOf } from "../../src/redact/redact.js";

const NAMES = [
  "environment",
  "database",
  "github",
  "app permissions",
  "installation acme",
  "github host",
  "webhook deliveries",
];

interface Line {
  name: string;
  status: string;
  detail: string;
  fix?: string;
}

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let fake: FakeGitHub;
  let db: TestDb;
  const secret = `whsec-${randomBytes(12).toString("hex")}`;
  const adminToken = randomBytes(32).toString("hex");

  beforeEach(async () => {
    fake = await startFakeGitHub({ appSlug: "conductor" });
    fake.state.addInstallation(77, "acme");
    fake.state.addRepo("acme/app", { installationId: 77 });
    db = await testDatabase(provider, { migrated: true });
  });
  afterEach(async () => {
    fake.assertNoViolations();
    await fake.close();
    await db.drop();
  });

  const env = (over: Record<string, string | undefined> = {}): Record<string, string> => {
    const all: Record<string, string | undefined> = {
      ...fake.env,
      WEBHOOK_SECRET: secret,
      ORCHESTRA_ADMIN_TOKEN: adminToken,
      DATABASE_URL: db.url,
      ...over,
    };
    return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  };
  const doctor = (over: Record<string, string | undefined> = {}, json = false) =>
    runCli(env(over), json ? ["doctor", "--json"] : ["doctor"]);
  const checks = async (over: Record<string, string | undefined> = {}) => {
    const r = await doctor(over, true);
    expect(r.stderr).toBe("");
    return { code: r.code, checks: (JSON.parse(r.stdout) as { checks: Line[] }).checks };
  };
  const byName = (lines: Line[], name: string) => lines.find((c) => c.name === name);
  // GitHub's side and the settings do not depend on the database: checked once, on the first provider.
  const once = ((name: string, fn: () => Promise<void>) => {
    if (provider === providers[0]) test(name, fn);
  }) as (name: string, fn: () => Promise<void>) => void;
  // What doctor prints of a text: every secret masked wherever it appears (CI's PostgreSQL password is "orchestra").
  const shown = (text: string) => scrub(text, secretsOf(env()));

  once("(a) everything in order: one ok line per check, exit 0; --json says the same", async () => {
    const r = await doctor();
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = r.stdout.split("\n").filter(Boolean);
    expect(lines.map((l) => /^(\S+) +([^:]+):/.exec(l)?.slice(1, 3))).toEqual([
      ...NAMES.map((n) => ["ok", n]),
      undefined,
    ]);
    expect(lines[0]).toBe(
      shown(
        `ok    environment: APP_ID ${fake.appId}, private key from PRIVATE_KEY, WEBHOOK_SECRET and ORCHESTRA_ADMIN_TOKEN set, GitHub API ${fake.apiUrl}, database ${maskUrl(db.url)}`,
      ),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `^ok    database: ${provider} .* answers; all ${listMigrations(provider).length} migrations applied$`,
        "m",
      ),
    );
    expect(r.stdout).toMatch(
      /^ok {4}app permissions: the App conductor holds what app.yml asks: 6 permissions, 11 events$/m,
    );
    expect(r.stdout).toMatch(/^ok {4}installation acme: installation 77 on acme holds what app.yml asks/m);
    expect(r.stdout).toMatch(
      /^ok {4}github host: api\.github\.com or GitHub Enterprise Cloud: every feature Orchestra uses is there$/m,
    );
    expect(r.stdout).toMatch(/^ok {4}webhook deliveries: no deliveries in the last 24 h$/m);
    expect(lines[lines.length - 1]).toBe(`all ${NAMES.length} checks passed`);

    const j = await checks();
    expect(j.code).toBe(0);
    expect(j.checks.map((c) => [c.name, c.status])).toEqual(NAMES.map((n) => [n, "ok"]));
    expect(j.checks.every((c) => c.fix === undefined && c.detail.length > 0)).toBe(true);
    // GitHub was asked as the App, for what the lines report.
    expect(fake.requestsFor("apps/get-authenticated").length).toBe(2);
    expect(fake.requestsFor("apps/list-installations").length).toBe(2);
    expect(fake.requestsFor("apps/list-webhook-deliveries").length).toBe(2);
    // The host is asked as an installation, as the service asks it.
    expect(fake.requestsFor("meta/get").map((q) => q.headers["authorization"])).toEqual([
      expect.stringMatching(/^token /),
      expect.stringMatching(/^token /),
    ]);
  });

  once(
    "(b) an installation without pull_requests and an event, and an App below app.yml: exit 1, named, with what to do",
    async () => {
      const globex = fake.state.addInstallation(78, "globex");
      delete globex.permissions["pull_requests"];
      globex.events = globex.events.filter((e) => e !== "pull_request_review");
      fake.state.appPermissions["checks"] = "read";

      const r = await doctor();
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(
        /^FAIL {2}app permissions: the App conductor: missing permission checks: write \(has read\)$/m,
      );
      // The fake's App is owned by a user account: its settings live under /settings/apps.
      expect(r.stdout).toMatch(
        /^ {6}fix: in the App's settings \(http:\/\/127\.0\.0\.1:\d+\/settings\/apps\/conductor\/permissions\) set checks to Read and write; then the owner of each installation accepts the new permissions$/m,
      );
      // acme accepted what the App asked before it was lowered: nothing is missing there.
      expect(r.stdout).toMatch(/^ok {4}installation acme: /m);
      expect(r.stdout).toContain(
        "FAIL  installation globex: installation 78 on globex: missing permission pull_requests: write (not granted); missing event pull_request_review\n" +
          `      fix: an owner of globex accepts the App's requested permissions at ${fake.url}/organizations/globex/settings/installations/78 (Review request)\n`,
      );
      expect(r.stdout).toMatch(/^2 of 8 checks failed$/m);

      const j = await checks();
      expect(j.code).toBe(1);
      expect(byName(j.checks, "installation globex")).toMatchObject({
        status: "fail",
        fix: expect.stringContaining("an owner of globex accepts"),
      });
    },
  );

  once(
    "(c) failed webhook deliveries in GitHub's log show up: counted, the latest named with event and status, the fix for each",
    async () => {
      const now = Date.now();
      const ago = (minutes: number) => new Date(now - minutes * 60_000);
      fake.state.hookDeliveries.push(
        { event: "issues", action: "labeled", status: 202, deliveredAt: ago(50) },
        { event: "pull_request", action: "opened", status: 502, deliveredAt: ago(40), guid: "recovered-guid" },
        {
          event: "pull_request",
          action: "opened",
          status: 202,
          deliveredAt: ago(35),
          guid: "recovered-guid",
          redelivery: true,
        },
        { event: "issue_comment", action: "created", status: 401, deliveredAt: ago(20), guid: "bad-signature-guid" },
        { event: "push", action: null, status: 0, deliveredAt: ago(10), guid: "no-connection-guid" },
        { event: "issues", action: "opened", status: 500, deliveredAt: ago(25 * 60), guid: "too-old-guid" },
      );
      const r = await doctor();
      expect(r.code).toBe(1);
      const block = r.stdout.slice(r.stdout.indexOf("FAIL  webhook deliveries:"));
      expect(block.split("\n").slice(0, 5)).toEqual([
        "FAIL  webhook deliveries: 3 of 5 delivery attempt(s) in the last 24 h failed; 2 deliveries have not arrived since",
        expect.stringMatching(/^ {6}\S+Z {2}push {2}no connection {2}no-connection-guid$/),
        expect.stringMatching(/^ {6}\S+Z {2}issue_comment\.created {2}answered 401 {2}bad-signature-guid$/),
        expect.stringMatching(
          /^ {6}\S+Z {2}pull_request\.opened {2}answered 502 {2}recovered-guid {2}\(arrived later\)$/,
        ),
        expect.stringMatching(
          /^ {6}fix: GitHub could not connect to the webhook URL: .*; the signature did not match: WEBHOOK_SECRET must equal .*; the service could not take them/,
        ),
      ]);
      expect(r.stdout).not.toContain("too-old-guid");

      // Only a failure a later attempt recovered: a warning, exit 0.
      fake.state.hookDeliveries.items.splice(3);
      const j = await checks();
      expect(byName(j.checks, "webhook deliveries")).toMatchObject({
        status: "warn",
        detail: expect.stringMatching(
          /^1 of 3 delivery attempt\(s\) in the last 24 h failed; 0 deliveries have not arrived since\n/,
        ),
      });
      expect(j.code).toBe(0);
    },
  );

  once(
    "(d) a missing or malformed setting: a FAIL line naming each, nothing secret shown, GitHub not asked",
    async () => {
      const badToken = `short-${randomBytes(6).toString("hex")}`;
      const badKey = `not-a-pem-${randomBytes(8).toString("hex")}`;
      const r = await doctor({
        WEBHOOK_SECRET: undefined,
        ORCHESTRA_ADMIN_TOKEN: badToken,
        PRIVATE_KEY: badKey,
        APP_ID: "app-one",
      });
      expect(r.code).toBe(1);
      const out = r.stdout + r.stderr;
      expect(r.stdout).toMatch(/^FAIL {2}environment: 3 settings are missing or malformed:\n/);
      expect(r.stdout).toMatch(
        /^ {6}APP_ID must be the App's numeric id from its settings page, e\.g\. 123456 \(got "app-one"\)$/m,
      );
      expect(r.stdout).toMatch(/^ {6}PRIVATE_KEY must be a PEM private key/m);
      expect(r.stdout).toMatch(/^ {6}ORCHESTRA_ADMIN_TOKEN must be at least 32 characters/m);
      expect(r.stdout).toMatch(/^ {6}fix: set them as each line says, in the service's environment/m);
      for (const s of [badToken, badKey]) expect(out).not.toContain(s);
      // The database is checked on its own; GitHub is not asked with settings known to be wrong.
      expect(r.stdout).toMatch(/^ok {4}database: /m);
      for (const n of ["github", "app permissions", "installations", "webhook deliveries"])
        expect(r.stdout).toMatch(new RegExp(`^skip  ${n}: not checked: the environment check failed`, "m"));
      expect(fake.requests.length).toBe(0);

      // Once APP_ID and the key are right, the missing secret is named on its own, and the key and token stay unshown.
      const missing = await doctor({ WEBHOOK_SECRET: undefined }, true);
      expect(byName((JSON.parse(missing.stdout) as { checks: Line[] }).checks, "environment")).toMatchObject({
        status: "fail",
        detail:
          "1 setting is missing or malformed:\nWEBHOOK_SECRET is missing: set it to the webhook secret configured on the App",
      });
      for (const s of [adminToken, ...fake.privateKey.split("\n").filter((l) => l.length > 40)])
        expect(missing.stdout + missing.stderr).not.toContain(s);

      // Nothing of the App set: the service would start its registration page instead.
      const none = await checks({
        APP_ID: undefined,
        PRIVATE_KEY: undefined,
        WEBHOOK_SECRET: undefined,
        ORCHESTRA_ADMIN_TOKEN: undefined,
      });
      expect(byName(none.checks, "environment")).toMatchObject({
        status: "fail",
        detail: expect.stringMatching(
          /^not set: APP_ID, PRIVATE_KEY \(or PRIVATE_KEY_PATH\), WEBHOOK_SECRET, ORCHESTRA_ADMIN_TOKEN; /,
        ),
      });
    },
  );

  once(
    "(e) GitHub failing is reported as that: a 500, no answer, refused credentials — never as a missing App",
    async () => {
      fake.outage({ status: 500 });
      const down = await doctor();
      expect(down.code).toBe(1);
      expect(down.stdout).toMatch(
        /^FAIL {2}github: GitHub failed: GET \/app answered 500 .*; that is GitHub's trouble, not a sign that anything is missing$/m,
      );
      expect(down.stdout).toMatch(/^ {6}fix: try again in a few minutes/m);
      for (const n of ["app permissions", "installations", "webhook deliveries"])
        expect(down.stdout).toMatch(
          new RegExp(`^skip  ${n}: not checked: GitHub did not accept or answer GET /app`, "m"),
        );
      expect(down.stdout).not.toMatch(/not installed|missing permission|no deliveries/);
      fake.outage(null);

      const port = await freePort();
      const away = await doctor({ GHE_HOST: `127.0.0.1:${port}` });
      expect(away.code).toBe(1);
      expect(away.stdout).toMatch(
        new RegExp(`^FAIL  github: GET /app at http://127\\.0\\.0\\.1:${port}/api/v3: no answer: .*ECONNREFUSED`, "m"),
      );
      expect(away.stdout).toMatch(/^ {6}fix: check GHE_HOST and GHE_PROTOCOL/m);

      const otherKey = generateKeyPairSync("rsa", { modulusLength: 2048 })
        .privateKey.export({ type: "pkcs1", format: "pem" })
        .toString();
      const refused = await doctor({ PRIVATE_KEY: otherKey });
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/^FAIL {2}github: GitHub refused the App's credentials: GET \/app answered 401 /m);
      expect(refused.stdout).not.toContain(otherKey.split("\n")[1]!);

      // GitHub failing on the delivery log alone: that line fails as a failure, the others stand.
      fake.inject({ path: "apps/list-webhook-deliveries", status: 503, times: Infinity });
      const partial = await checks();
      expect(byName(partial.checks, "webhook deliveries")).toMatchObject({
        status: "fail",
        detail: expect.stringMatching(/^GitHub failed: GET \/app\/hook\/deliveries answered 503/),
      });
      expect(byName(partial.checks, "installation acme")?.status).toBe("ok");
    },
  );

  once(
    "(f) a GitHub Enterprise Server without a feature: a warning naming it and its fallback, exit 0; one too old fails",
    async () => {
      await fake.close();
      fake = await startFakeGitHub({ appSlug: "conductor", host: "ghes-3.17", installedVersion: "3.17.4" });
      fake.state.addInstallation(77, "acme");
      const r = await doctor();
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        "warn  github host: GitHub Enterprise Server 3.17.4 lacks issue dependencies; Orchestra falls back:\n" +
          "      issue dependencies (GHES 3.19): no dependency gate: a task's blockers are taken as read and empty, " +
          "so queued tasks are claimable (a `blocked by` link made on GitHub does not hold them)\n" +
          "      fix: upgrade GitHub Enterprise Server to 3.19 or later to have them\n",
      );
      expect(r.stdout).toMatch(/^all 7 checks passed, 1 with a warning$/m);

      fake.state.host.installedVersion = "3.16.9";
      const old = await checks();
      expect(old.code).toBe(1);
      expect(byName(old.checks, "github host")).toEqual({
        name: "github host",
        status: "fail",
        detail:
          "GitHub Enterprise Server 3.16.9 is older than GitHub Enterprise Server 3.17, the oldest Orchestra supports",
        fix: "upgrade GitHub Enterprise Server to 3.17 or later; then run orchestra doctor again",
      });

      // GitHub failing to say is GitHub failing, not a host without features; the service still finds out itself.
      fake.inject({ path: "meta/get", status: 502, times: Infinity });
      const down = await checks();
      expect(down.code).toBe(0);
      expect(byName(down.checks, "github host")).toMatchObject({
        status: "warn",
        detail: expect.stringMatching(/^GitHub failed: GET \/meta answered 502/),
      });
    },
  );

  test("the database: pending migrations named, a SQLite file that is not there not created", async () => {
    const names = listMigrations(provider).map((m) => m.name);
    const older = await testDatabase(provider);
    try {
      const database = await openDatabase(older.url);
      await migrate(database, () => {}, { through: names[names.length - 2]! });
      await database.close();
      const r = await checks({ DATABASE_URL: older.url });
      expect(r.code).toBe(1);
      expect(byName(r.checks, "database")).toMatchObject({
        status: "fail",
        detail: expect.stringContaining(
          `answers, but 1 of ${names.length} migrations are not applied: ${names[names.length - 1]}`,
        ),
        fix: expect.stringContaining(shown("run orchestra migrate with the same DATABASE_URL")),
      });
    } finally {
      await older.drop();
    }
    // A server that does not answer: said so with the driver's reason, the password masked.
    const port = await freePort();
    const password = `pw-${randomBytes(6).toString("hex")}`;
    const away = await doctor({ DATABASE_URL: `postgresql://ops:${password}@127.0.0.1:${port}/doctor` }, true);
    expect(away.stdout + away.stderr).not.toContain(password);
    expect(byName((JSON.parse(away.stdout) as { checks: Line[] }).checks, "database")).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(
        new RegExp(`^postgresql://ops:\\*\\*\\*@127\\.0\\.0\\.1:${port}/doctor does not answer \\(.+\\)$`),
      ),
      fix: expect.stringMatching(/^check DATABASE_URL \(host, port, user, password, database name\)/),
    });
    if (provider === "sqlite") {
      const nowhere = join(tmpdir(), `orchestra-doctor-${randomBytes(4).toString("hex")}`, "orchestra.db");
      const r = await checks({ DATABASE_URL: `file:${nowhere}` });
      expect(byName(r.checks, "database")).toMatchObject({ status: "fail", detail: `no database at ${nowhere}` });
      expect(byName(r.checks, "github")?.status).toBe("ok");
    }
  });

  once("each line is printed as its check completes", async () => {
    const held = fake.hold("apps/list-installations");
    const child = spawn(process.execPath, [bin, "doctor"], { cwd: tmpdir(), env: childEnv(env()) });
    let stdout = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await held.reached;
    // While GitHub has not answered the installations, the checks before it are already on screen.
    await eventually(
      () => (/^ok {4}app permissions: /m.test(stdout) ? true : undefined),
      10_000,
      "the lines before the installations",
    );
    expect(stdout).not.toMatch(/installation acme|webhook deliveries/);
    held.release();
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/^ok {4}installation acme: .*\nok {4}github host: .*\nok {4}webhook deliveries: /m);
  });
});
