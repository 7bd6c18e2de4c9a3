/**
 * Starts the real App in this process on a free port, against a test database
 * and (optionally) the fake GitHub, exactly as main.ts wires it.
 */
import type { BodyTiming } from "../../src/ingest/body.js";
import { Writable } from "node:stream";
import { createServer } from "node:net";
import { randomBytes } from "node:crypto";
import { takeAppKeys } from "../fake-github/auth.js";
import { ProbotOctokit } from "probot";
import { createOrchestra, type Orchestra, type OrchestraOptions } from "../../src/app/index.js";
import { parseEnv } from "../../src/config/env.js";
import { openDatabase, type Database } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { createLogger } from "../../src/log.js";
import type { ProcessorOptions } from "../../src/inbox/processor.js";
import type { ExecutorOptions } from "../../src/effects/executor.js";
import type { RetryPolicy } from "../../src/retry/schedule.js";
import type { TestDb } from "./databases.js";
import { RigClock } from "./clock.js";

/**
 * The executor in tests: no write spacing and short retry delays, so that
 * a test waits milliseconds where production waits seconds. Pacing itself is
 * tested on its own (test/effects) and measured by bench/claims.
 */
export const TEST_EFFECTS: ExecutorOptions & { spacingMs: number } = {
  spacingMs: 0,
  pollMs: 50,
  pokeGapMs: 5,
  backoff: { baseMs: 20, capMs: 200 },
};

/** Octokit with retries and throttling off (function form: the object form has no effect). */
export const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));

export interface Running {
  url: string;
  secret: string;
  adminToken: string;
  orchestra: Orchestra;
  database: Database;
  clock: { now(): Date };
  logs: Array<Record<string, unknown>>;
  admin(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

let fallbackKey: string | undefined;

/** A port free right now (Probot's server reads port 0 as "use 3000"). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startOrchestra(opts: {
  db: TestDb;
  /** The fake GitHub (or any host) to point the App at; a fake is put on the App's clock. */
  github?: { host: string; appId: number; privateKey: string; state?: { clock: () => Date } };
  processor?: ProcessorOptions;
  retry?: Partial<RetryPolicy>;
  sweepMs?: number;
  /** The App's clock; a new rig clock (12:00 UTC, forward only) unless given. */
  clock?: { now(): Date };
  effects?: ExecutorOptions & { spacingMs?: number; start?: boolean };
  env?: Record<string, string>;
  ingest?: { maxUnverifiedBytes?: number; bodyTiming?: BodyTiming };
  hooks?: OrchestraOptions["hooks"];
}): Promise<Running> {
  const secret = randomBytes(16).toString("hex");
  const adminToken = randomBytes(32).toString("hex");
  // Without a fake nothing checks the App's JWT; the run's shared pair saves generating one.
  fallbackKey ??= (await takeAppKeys()).privateKey;
  const makeEnv = async () =>
    parseEnv({
      APP_ID: String(opts.github?.appId ?? 1),
      PRIVATE_KEY: opts.github?.privateKey ?? fallbackKey,
      WEBHOOK_SECRET: secret,
      ORCHESTRA_ADMIN_TOKEN: adminToken,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      DATABASE_URL: opts.db.url,
      // Nothing may reach the internet: without a fake, point at a closed port.
      GHE_HOST: opts.github?.host ?? "127.0.0.1:9",
      GHE_PROTOCOL: "http",
      ...opts.env,
    });
  let env = await makeEnv();
  const clock = opts.clock ?? new RigClock();
  // One clock for the App and the fake GitHub: what GitHub stamps (comments, deliveries, resets) is "now" to the App.
  if (opts.github?.state) opts.github.state.clock = () => clock.now();
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split("\n")) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const database = await openDatabase(env.databaseUrl, { poolSize: 5 });
  await migrate(database);
  // The port was free when chosen; another process (or an outgoing socket) may take it before the server
  // listens. Then the App is assembled again on another port.
  for (let tries = 1; ; tries++) {
    const orchestra = await createOrchestra({
      env: { ...env, credentials: env.credentials! },
      database,
      log: createLogger("info", sink),
      Octokit: TestOctokit,
      processor: { pollMs: 50, ...opts.processor },
      ...(opts.retry ? { retry: opts.retry } : {}),
      sweepMs: opts.sweepMs ?? 60_000,
      effects: { ...TEST_EFFECTS, ...opts.effects },
      ...(opts.ingest ? { ingest: opts.ingest } : {}),
      ...(opts.hooks ? { hooks: opts.hooks } : {}),
      clock,
    });
    try {
      const { port } = await orchestra.start();
      return running(orchestra, port);
    } catch (err) {
      if (tries >= 5 || !/already in use/.test(String(err))) throw err;
      env = await makeEnv();
    }
  }

  function running(orchestra: Orchestra, port: number): Running {
    const url = `http://127.0.0.1:${port}`;
    return {
      url,
      secret,
      adminToken,
      orchestra,
      database,
      clock,
      logs,
      admin: (path, init = {}) =>
        fetch(url + path, { ...init, headers: { authorization: `Bearer ${adminToken}`, ...(init.headers ?? {}) } }),
      async stop() {
        await orchestra.stop();
        await database.close();
      },
    };
  }
}

/** Polls until `check` returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  ms = 10_000,
  what = "condition",
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25)); // the poll interval: the wait ends on the condition, not on time
  }
}
