/**
 * What the service's address answers in its two modes. Registered (App
 * credentials set): `/` leads to the dashboard. Setup mode (no credentials:
 * the real entry point, dist/src/main.js, serving Probot's setup page):
 * `/health` answers and says it is in setup mode, `/ready` answers 503 with
 * why, and Probot's pages are still there.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv } from "../support/cli.js";
import { freePort, startOrchestra, type Running } from "../support/orchestra.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";

const main = join(import.meta.dirname, "..", "..", "dist/src/main.js");

describe.each(providers)("registered, on %s", (provider) => {
  let db: TestDb;
  let app: Running;
  beforeEach(async () => {
    db = await testDatabase(provider, { migrated: true });
    app = await startOrchestra({ db });
  });
  afterEach(async () => {
    await app.stop();
    await db.drop();
  });

  test("/ redirects to the dashboard, which asks for the admin token; /health says the App is running", async () => {
    const root = await fetch(app.url + "/", { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/dashboard");
    // Followed as a browser would: no session yet, so the sign-in page.
    const page = await fetch(app.url + "/");
    expect(page.status).toBe(200);
    expect(new URL(page.url).pathname).toBe("/dashboard/sign-in");
    expect(await page.text()).toContain(`<label for="token">Admin token</label>`);
    const health = await fetch(app.url + "/health");
    expect({ status: health.status, body: await health.json() }).toEqual({
      status: 200,
      body: { status: "ok", mode: "app" },
    });
  });
});

describe("setup mode: the service without App credentials", () => {
  let cwd: string;
  let child: ChildProcess;
  let url: string;
  let exited: Promise<number | null>;

  beforeAll(async () => {
    // A directory of its own: no .env with credentials is read, ./data is created there.
    cwd = mkdtempSync(join(tmpdir(), "orchestra-setup-"));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [main], {
      cwd,
      env: childEnv({ PORT: String(port), HOST: "127.0.0.1", WEBHOOK_PROXY_URL: "https://smee.io/AbC123" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    let out = "";
    let err = "";
    child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (b: Buffer) => {
        out += b.toString();
        if (out.includes('"msg":"orchestra listening in setup mode"')) resolve();
      });
      void exited.then((code) => reject(new Error(`exited ${code} before listening: ${err}${out}`)));
    });
  });
  afterAll(async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(cwd, { recursive: true, force: true });
  });

  test("/health answers 200 and says setup mode; /ready answers 503 with why and what to do", async () => {
    const health = await fetch(url + "/health");
    expect(health.status).toBe(200);
    const h = (await health.json()) as Record<string, unknown>;
    expect(h).toMatchObject({ status: "ok", mode: "setup" });
    expect(h["setup"]).toMatch(/^setup mode: no App credentials \(APP_ID, PRIVATE_KEY\), so no webhook is received;/);

    const ready = await fetch(url + "/ready");
    expect(ready.status).toBe(503);
    const r = (await ready.json()) as Record<string, unknown>;
    expect(r).toEqual({ status: "not ready", reason: "setup mode", mode: "setup", setup: h["setup"] });
    expect(r["setup"]).toContain("register the App on this server's setup page (/probot), add ORCHESTRA_ADMIN_TOKEN");
  });

  test("Probot's setup page is still what / leads to", async () => {
    const root = await fetch(url + "/", { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/probot");
    const page = await fetch(url + "/probot");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Register GitHub App");
    // The manifest the button posts to GitHub: the proxy channel is the App's webhook URL.
    const manifest = /name="manifest"[^>]*value='([^']*)'|value='([^']*)'[^>]*name="manifest"/.exec(html);
    expect(manifest).not.toBeNull();
    const parsed = JSON.parse((manifest![1] ?? manifest![2])!.replace(/&quot;/g, '"')) as Record<string, unknown>;
    expect(parsed["hook_attributes"]).toEqual({ url: "https://smee.io/AbC123" });
  });

  test("SIGTERM stops it cleanly", async () => {
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
