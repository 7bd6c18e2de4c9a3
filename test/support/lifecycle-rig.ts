/**
 * A rig for lifecycle tests: the fake GitHub with one installation and
 * repository, the real App pointed at it, and helpers that act like GitHub
 * (signed webhooks that match the fake's state) and like workers (the HTTP
 * worker API).
 */
import { randomUUID } from "node:crypto";
import { startFakeGitHub, type FakeGitHub } from "../fake-github/index.js";
import type { SweepReport } from "../../src/sweeps/sweeper.js";
import type { ExecutorOptions } from "../../src/effects/executor.js";
import type { Provider } from "../../src/store/db.js";
import type { OrchestraOptions } from "../../src/app/index.js";
import { RigClock } from "./clock.js";
import { testDatabase, type TestDb } from "./databases.js";
import { eventually, startOrchestra, type Running } from "./orchestra.js";
import { fakeWebhookPayload, listExamples, sendWebhook } from "./webhooks.js";

/**
 * Waits until the outbox has no effect due within `horizonMs` on the App's clock, nor one in flight (retries coming
 * up soon count as work still to do), poking the executor meanwhile.
 */
export async function settleEffects(
  app: Running,
  clock: { now(): Date },
  o: { horizonMs: number; timeoutMs: number },
): Promise<void> {
  const { outbox, executor } = app.orchestra;
  const idle = async () => {
    if ((await outbox.active(new Date(clock.now().getTime() + o.horizonMs))) === 0) return true;
    executor.poke();
    return undefined;
  };
  const timedOut = (err: unknown) => {
    if (err instanceof Error && err.message.startsWith("timed out")) return false;
    throw err;
  };
  if (await eventually(idle, o.timeoutMs, "effects settled").catch(timedOut)) return;
  const left = [...(await outbox.list({ state: "pending" })), ...(await outbox.list({ state: "running" }))].map(
    (x) => ({
      kind: x.kind,
      state: x.state,
      next: x.nextAttemptAt,
      attempts: x.attempts,
    }),
  );
  throw new Error(`effects still pending after ${o.timeoutMs} ms: ${JSON.stringify(left)}`);
}

export const REPO = "acme/app";
export const INSTALLATION = 77;

/** The rig's GitHub: installation INSTALLATION of `acme` with its repository REPO, where alice may write and eve read. */
export function furnish(fake: FakeGitHub): FakeGitHub {
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION });
  fake.state.setPermission(REPO, "alice", "write");
  fake.state.setPermission(REPO, "eve", "read");
  return fake;
}

export interface WorkerClient {
  id: string;
  token: string;
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any }>;
  claim(): Promise<{ status: number; body: any }>;
  heartbeat(runId: string, leaseEpoch: string): Promise<{ status: number; body: any }>;
  exit(runId: string, body: Record<string, unknown>): Promise<{ status: number; body: any }>;
}

/** A delivery as sent: its id and the webhook's answer. */
export interface Posted {
  deliveryId: string;
  status: number;
  res: Response;
}

export interface Rig {
  fake: FakeGitHub;
  db: TestDb;
  app: Running;
  /** The App's and the fake GitHub's clock: starts at 12:00 UTC, moves forward only. */
  clock: RigClock;
  /** Sends a webhook built from the fake's state and waits until it is processed. */
  deliver(
    event: string,
    action: string,
    refs: Omit<Parameters<typeof fakeWebhookPayload>[3], "repo">,
    overrides?: Record<string, unknown>,
    deliveryId?: string,
  ): Promise<string>;
  deliverPayload(event: string, payload: Record<string, unknown>, deliveryId?: string): Promise<string>;
  /** Sends a signed delivery and answers GitHub's view of it (nothing waits for it to be processed). */
  post(event: string, payload: Record<string, unknown>, deliveryId?: string): Promise<Posted>;
  /** Creates an issue carrying the queue label and delivers the labeled event from `sender`. */
  queue(number: number, sender?: string): Promise<void>;
  worker(name?: string, repos?: string[]): Promise<WorkerClient>;
  config(yaml: string): void;
  /** Queues `issue`; `w` claims it, pushes one commit on the run's branch and opens its PR (no webhook delivered). */
  openPull(w: WorkerClient, issue: number): Promise<{ run: any; head: string; pr: number }>;
  /** `openPull`, then the exit: the task is in review (or the call throws). */
  inReview(w: WorkerClient, issue: number): Promise<{ pr: number; head: string; branch: string }>;
  /** A push that changes .github/orchestra.yml (to `yaml` when given): the App reads it again next time. */
  pushConfig(yaml?: string): Promise<void>;
  labels(issue: number): string[];
  task(issue: number): Promise<any>;
  /** Runs one sweep and waits until the effects it recorded are performed. */
  sweep(opts?: { timeoutMs?: number }): Promise<SweepReport>;
  /** Waits until no effect is due or in flight. */
  settle(timeoutMs?: number): Promise<void>;
  /** Starts the executor of a rig started with `effects: { start: false }`. */
  startEffects(): void;
  /** GitHub write requests (not token exchanges: minting and revoking tokens) recorded since `from`. */
  writesSince(from: number): Array<{ method: string; path: string }>;
  stop(): Promise<void>;
}

/**
 * GitHub's examples lack some actions (there is no issues.closed example):
 * then another example of the same event, whose shape is the same, carries
 * the action instead.
 */
function payloadFor(
  fake: FakeGitHub,
  event: string,
  action: string,
  refs: Omit<Parameters<typeof fakeWebhookPayload>[3], "repo">,
  overrides: Record<string, unknown>,
) {
  const hasExample = listExamples(event).some((e) => e["action"] === action);
  return fakeWebhookPayload(
    fake,
    event,
    hasExample ? action : undefined,
    { repo: REPO, ...refs },
    { ...overrides, action },
  );
}

export async function startRig(
  opts: {
    provider?: Provider;
    db?: TestDb;
    fake?: FakeGitHub;
    /** A restarted App keeps the clock it had. */ clock?: RigClock;
    effects?: ExecutorOptions & { spacingMs?: number; start?: boolean };
    env?: Record<string, string>;
    hooks?: OrchestraOptions["hooks"];
  } = {},
): Promise<Rig> {
  const fake = opts.fake ?? furnish(await startFakeGitHub());
  const db = opts.db ?? (await testDatabase(opts.provider ?? "sqlite", { migrated: true }));
  const clock = opts.clock ?? new RigClock();
  const app = await startOrchestra({
    db,
    github: fake,
    clock,
    sweepMs: 3_600_000,
    ...(opts.effects ? { effects: opts.effects } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.hooks ? { hooks: opts.hooks } : {}),
  });
  // Retries due within a few seconds are still work to wait for (test backoffs are milliseconds).
  /** Waits until the effects due within 5 s are performed (15 s at most unless told). */
  let effectsRunning = opts.effects?.start !== false;
  const startEffects = () => {
    effectsRunning = true;
    app.orchestra.executor.start();
  };
  const settle = (timeoutMs?: number) =>
    effectsRunning
      ? settleEffects(app, clock, { horizonMs: 5_000, timeoutMs: timeoutMs ?? 60_000 })
      : Promise.resolve();
  // Tests start from a quiet App: the sweep it runs at start-up has finished.
  await app.orchestra.sweepSettled();

  async function post(
    event: string,
    payload: Record<string, unknown>,
    deliveryId: string = randomUUID(),
  ): Promise<Posted> {
    const res = await sendWebhook(app.url + "/api/github/webhooks", { event, payload, secret: app.secret, deliveryId });
    return { deliveryId, status: res.status, res };
  }

  async function deliverPayload(
    event: string,
    payload: Record<string, unknown>,
    deliveryId: string = randomUUID(),
  ): Promise<string> {
    const { res } = await post(event, payload, deliveryId);
    if (res.status !== 202 && res.status !== 200)
      throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
    const answer = (await res.json()) as { replay?: boolean };
    if (answer.replay)
      throw new Error(
        `${event} delivery ${deliveryId} repeats an earlier body byte for byte, so the App took it as a replay; ` +
          "GitHub's bodies for two events differ (ids, timestamps): make the test's payloads differ too",
      );
    await eventually(
      async () => {
        const row = await app.database.db.delivery.findUnique({ where: { deliveryId } });
        if (!row) return undefined;
        if (row.state === "done" || row.state === "ignored") return true;
        if (row.attempts >= 1 && row.state === "pending") throw new Error(`delivery ${event} failed: ${row.errors}`);
        if (row.state === "parked") throw new Error(`delivery ${event} parked: ${row.errors}`);
        return undefined;
      },
      10_000,
      `${event} processed`,
    );
    await settle();
    return deliveryId;
  }

  async function worker(name = "w", repos?: string[]): Promise<WorkerClient> {
    const res = await app.admin("/api/v1/workers", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, ...(repos ? { repos } : {}) }),
    });
    if (res.status !== 201) throw new Error(`register answered ${res.status}`);
    const { id, token } = (await res.json()) as { id: string; token: string };
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(app.url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await r.text();
      // The answer comes at commit; what it caused on GitHub follows from the outbox.
      await settle();
      return { status: r.status, body: text ? JSON.parse(text) : null };
    };
    return {
      id,
      token,
      call,
      claim: () => call("POST", "/api/v1/claims", {}),
      heartbeat: (runId, leaseEpoch) => call("POST", `/api/v1/runs/${runId}/heartbeat`, { leaseEpoch }),
      exit: (runId, body) => call("POST", `/api/v1/runs/${runId}/exit`, body),
    };
  }

  async function queue(number: number, sender = "alice") {
    fake.state.addIssue(REPO, {
      number,
      title: `Issue ${number}`,
      body: `Do thing ${number}`,
      labels: ["agent:queued"],
      user: sender,
    });
    await deliverPayload(
      "issues",
      fakeWebhookPayload(fake, "issues", "labeled", { repo: REPO, issue: number, label: "agent:queued", sender }),
    );
  }

  async function openPull(w: WorkerClient, issue: number) {
    await queue(issue);
    const run = (await w.claim()).body.run;
    const head = fake.state.addBranch(REPO, run.branch, { aheadBy: 1 });
    const pr = fake.state.addPull(REPO, {
      head: run.branch,
      title: `Issue ${issue}`,
      body: `Closes #${issue}`,
      user: "agent-bot",
    });
    return { run, head, pr: pr.number };
  }

  return {
    fake,
    db,
    app,
    clock,
    deliver: (event, action, refs, overrides = {}, deliveryId) =>
      deliverPayload(event, payloadFor(fake, event, action, refs, overrides), deliveryId),
    deliverPayload,
    post,
    queue,

    worker,
    // Set before the first delivery: the App caches a repository's config for a minute.
    config(yaml) {
      fake.state.setFile(REPO, ".github/orchestra.yml", yaml);
    },
    openPull,
    async inReview(w, issue) {
      const { run, head, pr } = await openPull(w, issue);
      const exit = await w.exit(run.id, { leaseEpoch: run.leaseEpoch, exitCode: 0, headSha: head });
      if (exit.body?.outcome !== "review")
        throw new Error(`issue ${issue}: exit answered ${JSON.stringify(exit.body)}`);
      return { pr, head, branch: run.branch };
    },
    async pushConfig(yaml) {
      if (yaml !== undefined) fake.state.setFile(REPO, ".github/orchestra.yml", yaml);
      const commit = {
        id: "c".repeat(40),
        tree_id: "d".repeat(40),
        distinct: true,
        message: "config",
        timestamp: clock.now().toISOString(),
        url: "https://example.test",
        author: { name: "a", email: "a@example.test" },
        committer: { name: "a", email: "a@example.test" },
        added: [],
        removed: [],
        modified: [".github/orchestra.yml"],
      };
      await deliverPayload(
        "push",
        fakeWebhookPayload(
          fake,
          "push",
          undefined,
          { repo: REPO, sender: "alice" },
          { commits: [commit], head_commit: commit },
        ),
      );
    },
    labels: (issue) => fake.state.labelsOf(REPO, issue).filter((l) => l.startsWith("agent:")),
    async task(issue) {
      const t = await app.database.db.task.findUnique({ where: { repo_issue: { repo: REPO, issue } } });
      if (!t) return null;
      const res = await app.admin(`/api/v1/tasks/${t.id}`);
      return res.json();
    },
    async sweep(opts = {}) {
      const r = await app.orchestra.sweeper.sweep();
      await settle(opts.timeoutMs);
      return r;
    },
    settle,
    startEffects,
    writesSince(from) {
      return fake.requests
        .slice(from)
        .filter(
          (r) =>
            r.method !== "GET" &&
            !r.path.includes("/access_tokens") &&
            r.path !== "/installation/token" &&
            !r.path.endsWith("/graphql"),
        )
        .map((r) => ({ method: r.method, path: r.path }));
    },
    async stop() {
      await app.stop();
      if (!opts.db) await db.drop();
      if (!opts.fake) await fake.close();
    },
  };
}
