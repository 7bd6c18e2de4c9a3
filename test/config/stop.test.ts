/**
 * SIGTERM stops the real service (dist/src/main.js, `npm run build` first)
 * within 10 s also while GitHub is unreachable: here a GitHub that accepts
 * connections and never answers, the worst kind (no refusal, no reset: only
 * timeouts would end the calls). A delivery and an effect are in flight on
 * it when the signal comes; the service abandons their GitHub calls, exits 0,
 * and both are left pending with no attempt counted and no error recorded:
 * the service went away, GitHub did not fail.
 */
import { spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openDatabase } from "../../src/store/db.js";
import { childEnv } from "../support/cli.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { eventually, freePort } from "../support/orchestra.js";
import { listExamples, sendWebhook } from "../support/webhooks.js";

const main = join(import.meta.dirname, "..", "..", "dist/src/main.js");
const key = generateKeyPairSync("rsa", { modulusLength: 2048 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();
const INSTALLATION = 77;

/** Takes every connection and every request, and answers none: the first line of each request is kept. */
async function silentGitHub(): Promise<{ server: Server; host: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("data", (b: Buffer) => {
      const first = b.toString("latin1").split("\r\n")[0]!;
      if (/^[A-Z]+ \//.test(first)) seen.push(first);
    });
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    server,
    host: `127.0.0.1:${port}`,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(providers.map((p) => [p]))("%s", (provider) => {
  let db: TestDb;
  let github: Awaited<ReturnType<typeof silentGitHub>>;
  let cwd: string;
  beforeEach(async () => {
    db = await testDatabase(provider, { migrated: true });
    github = await silentGitHub();
    cwd = mkdtempSync(join(tmpdir(), "orchestra-stop-"));
  });
  afterEach(async () => {
    await github.close();
    await db.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  test("SIGTERM with GitHub not answering: exit 0 within 10 s, the delivery and the effect in flight left pending", async () => {
    // An effect already in the outbox: the executor takes it at start and asks GitHub for a token.
    const seeded = await openDatabase(db.url);
    const effectId = randomUUID();
    await seeded.db.effect.create({
      data: {
        id: effectId,
        key: `comment:stop-test:${effectId}`,
        installationId: INSTALLATION,
        repo: "acme/app",
        kind: "comment",
        payload: JSON.stringify({ issue: 1, body: "hello" }),
        nextAttemptAt: new Date(),
        createdAt: new Date(),
      },
    });
    await seeded.close();

    const secret = randomBytes(16).toString("hex");
    const port = await freePort();
    const child = spawn(process.execPath, [main], {
      cwd,
      env: childEnv({
        APP_ID: "1",
        PRIVATE_KEY: key,
        WEBHOOK_SECRET: secret,
        ORCHESTRA_ADMIN_TOKEN: randomBytes(32).toString("hex"),
        PORT: String(port),
        HOST: "127.0.0.1",
        GHE_HOST: github.host,
        GHE_PROTOCOL: "http",
        DATABASE_URL: db.url,
        LOG_LEVEL: "info",
      }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      child.on("exit", (code) => resolve({ code, at: performance.now() })),
    );
    try {
      await eventually(() => (out.includes('"msg":"orchestra listening"') ? true : undefined), 20_000, "listening");

      // A delivery whose handler calls GitHub.
      const example = listExamples("issues").find((e) => e["action"] === "labeled")!;
      const deliveryId = randomUUID();
      const res = await sendWebhook(`http://127.0.0.1:${port}/api/github/webhooks`, {
        event: "issues",
        deliveryId,
        secret,
        payload: {
          ...example,
          installation: { id: INSTALLATION, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNzc=" },
        },
      });
      expect(res.status).toBe(202);

      // Both in flight, each waiting on GitHub.
      const watch = await openDatabase(db.url);
      try {
        await eventually(
          async () => {
            const [d, e] = await Promise.all([
              watch.db.delivery.findUnique({ where: { deliveryId } }),
              watch.db.effect.findUnique({ where: { id: effectId } }),
            ]);
            return d?.state === "processing" && e?.state === "running" ? true : undefined;
          },
          20_000,
          "the delivery and the effect in flight",
        );
        await eventually(
          () =>
            github.seen.some((l) => l.startsWith(`POST /api/v3/app/installations/${INSTALLATION}/access_tokens`))
              ? true
              : undefined,
          20_000,
          "a GitHub call of the executor",
        );

        const signalled = performance.now();
        child.kill("SIGTERM");
        const { code, at } = await exited;
        const ms = Math.round(at - signalled);
        console.log(
          `${provider}: SIGTERM to exit with GitHub not answering: ${ms} ms (${github.seen.length} requests unanswered)`,
        );
        expect(code).toBe(0);
        expect(ms).toBeLessThan(10_000);
        expect(out).toContain('"msg":"stopped"');

        const d = await watch.db.delivery.findUniqueOrThrow({ where: { deliveryId } });
        expect({ state: d.state, attempts: d.attempts, errors: d.errors }).toEqual({
          state: "pending",
          attempts: 0,
          errors: "[]",
        });
        const e = await watch.db.effect.findUniqueOrThrow({ where: { id: effectId } });
        expect({ state: e.state, attempts: e.attempts, errors: e.errors, lockedBy: e.lockedBy }).toEqual({
          state: "pending",
          attempts: 0,
          errors: "[]",
          lockedBy: null,
        });
      } finally {
        await watch.close();
      }
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
