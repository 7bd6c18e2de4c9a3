/**
 * One live run as the worker holds it: the lease (epoch and expiry, renewed
 * by heartbeats), the credentials (renewed too), where its worktree is, and
 * why it must stop when the service said so. The heartbeat loop lives here:
 * every third of the lease, with the worktree's progress; the decisions a
 * heartbeat brings are written for the agent and receipted, each once.
 */
import { existsSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ServiceClient } from "./client.js";
import { errorOf, reasonOf, ServiceUnavailable } from "./client.js";
import { ORCHESTRA_DIR } from "./facts.js";
import { worktreeFacts } from "./git.js";
import { decisionFile, renderDecision } from "./prompt.js";
import type { Credentials, Decision, HeartbeatAnswer, Progress, RunContinuation } from "./protocol.js";
import type { Reporter, RunRef } from "./report.js";
import type { WorkerSettings } from "./config.js";
import { setTimeout as sleep } from "node:timers/promises";

export interface WorkerContext {
  settings: WorkerSettings;
  client: ServiceClient;
  report: Reporter;
  /** Why the whole worker is stopping (a signal), or null. */
  stopping(): string | null;
}

export interface SessionInit {
  runId: string;
  leaseEpoch: string;
  leaseExpiresAt: string;
  /** Seconds left on the lease by the service's clock, when it says. */
  leaseSeconds?: number;
  repo: string;
  issue: number;
  title: string;
  branch: string;
  continuation: RunContinuation | null;
  credentials: Credentials | null | undefined;
  cloneUrl: string;
  apiUrl: string;
}

/** Waits ms, or less when the signal aborts (never rejects on abort; each wait leaves no listener behind). */
const pause = (ms: number, signal: AbortSignal) =>
  sleep(ms, undefined, { signal }).catch((error: unknown) => {
    if ((error as { name?: string }).name !== "AbortError") throw error;
  });

export class Session {
  readonly ref: RunRef;
  leaseExpiresAt: number;
  /** Seconds left on the lease at the last answer, by the service's clock; null when the service does not say. */
  leaseSeconds: number | null;
  /** The brokered token, else the worker's own for `credentials: none` repositories, else none. */
  token: string | null;
  /** The 409 reason of a heartbeat (superseded, stalled, revoked, …): the lease is gone. */
  lost: string | null = null;
  step = "claimed";
  worktree: string | null = null;
  mirror: string | null = null;
  defaultBranch = "main";
  startSha = "";
  /** Where the agent's and the test command's output go. */
  get logFile(): string {
    return join(this.ctx.settings.workdir, "logs", `${this.init.runId}.log`);
  }
  readonly delivered = new Set<string>();
  /** Older servers refuse the dirty and ahead fields of progress: after one 400 they are left out. */
  #plainProgress = false;
  /** Whether the session holds a token the service brokered (else a heartbeat asks for one). */
  #brokered = false;
  #beats: AbortController | null = null;
  #loop: Promise<void> | null = null;

  constructor(
    readonly init: SessionInit,
    readonly ctx: WorkerContext,
  ) {
    this.ref = { repo: init.repo, issue: init.issue, runId: init.runId };
    this.leaseExpiresAt = Date.parse(init.leaseExpiresAt);
    this.leaseSeconds = init.leaseSeconds ?? null;
    this.token = init.credentials?.token ?? ctx.settings.gitToken;
    this.#brokered = Boolean(init.credentials?.token);
  }

  get superseded(): boolean {
    return this.lost === "superseded" || this.lost === "stale-epoch";
  }

  say(step: string, text: string, fields: Record<string, unknown> = {}, level: "debug" | "info" | "error" = "info") {
    this.ctx.report.step(this.ref, step, text, fields, level);
  }

  /** Heartbeats until stopHeartbeats(): every third of the time left on the lease. */
  startHeartbeats(): void {
    const beats = new AbortController();
    this.#beats = beats;
    this.#loop = (async () => {
      while (!beats.signal.aborted && this.lost === null) {
        // By the service's count of seconds left when it says one (clocks differ), else by its expiry time.
        const left = this.leaseSeconds !== null ? this.leaseSeconds * 1000 : this.leaseExpiresAt - Date.now();
        const wait = Math.max(1000, left / 3);
        await pause(wait, beats.signal);
        if (beats.signal.aborted) break;
        await this.heartbeat();
      }
    })();
  }

  async stopHeartbeats(): Promise<void> {
    this.#beats?.abort();
    await this.#loop;
  }

  async #progress(): Promise<Progress> {
    const p: Progress = { step: this.step };
    if (!this.worktree) return p;
    const f = await worktreeFacts(this.worktree, `refs/remotes/origin/${this.defaultBranch}`).catch(() => null);
    if (!f) return p;
    return {
      ...p,
      headSha: f.headSha,
      worktree: f.digest,
      ...(this.#plainProgress ? {} : { dirty: f.dirty, ahead: f.ahead }),
    };
  }

  /** One heartbeat; answers false when the lease is gone (this.lost says why). */
  async heartbeat(usage?: unknown): Promise<boolean> {
    const progress = await this.#progress();
    const path = `/api/v1/runs/${encodeURIComponent(this.init.runId)}/heartbeat`;
    let answer;
    try {
      answer = await this.ctx.client.post<HeartbeatAnswer>(path, {
        leaseEpoch: this.init.leaseEpoch,
        progress,
        ...(usage ? { usage } : {}),
        // A run holding no brokered token (re-attached after a restart, or its claim's mint failed) asks for one.
        ...(this.#brokered ? {} : { renewCredentials: true }),
      });
      if (
        answer.status === 400 &&
        !this.#plainProgress &&
        /dirty|ahead|unrecognized/i.test(errorOf(answer.body) ?? "")
      ) {
        this.#plainProgress = true;
        const { dirty: _d, ahead: _a, ...plain } = progress;
        answer = await this.ctx.client.post<HeartbeatAnswer>(path, {
          leaseEpoch: this.init.leaseEpoch,
          progress: plain,
        });
      }
    } catch (err) {
      if (!(err instanceof ServiceUnavailable)) throw err;
      this.say("heartbeat", `failed: ${err.message}`, {}, "error");
      return true;
    }
    if (answer.status === 409 || answer.status === 404) {
      this.lost = reasonOf(answer.body) ?? (answer.status === 404 ? "not-found" : "superseded");
      this.say("lease lost", `${this.lost}: ${errorOf(answer.body) ?? ""}`.trim(), { reason: this.lost }, "error");
      return false;
    }
    if (answer.status !== 200) {
      this.say("heartbeat", `answered ${answer.status}: ${errorOf(answer.body) ?? ""}`, {}, "error");
      return true;
    }
    this.leaseExpiresAt = Date.parse(answer.body.leaseExpiresAt);
    this.leaseSeconds = typeof answer.body.leaseSeconds === "number" ? answer.body.leaseSeconds : null;
    if (answer.body.credentials?.token) {
      this.token = answer.body.credentials.token;
      this.#brokered = true;
    }
    this.say("heartbeat", `lease until ${answer.body.leaseExpiresAt}`, { progress }, "debug");
    await this.deliver(answer.body.decisions ?? []);
    return true;
  }

  /** Each decision once: its file in `.orchestra/decisions/`, then its receipt. */
  async deliver(decisions: Decision[]): Promise<void> {
    if (!this.worktree) return;
    for (const d of decisions) {
      if (d.history || this.delivered.has(d.id)) continue;
      const file = join(this.worktree, ORCHESTRA_DIR, "decisions", decisionFile(d.id));
      if (!existsSync(file)) {
        // Whole or not at all: an agent watching the directory never reads a half-written decision.
        const partial = join(this.worktree, ORCHESTRA_DIR, `.${decisionFile(d.id)}.partial`);
        await writeFile(partial, renderDecision(d));
        await rename(partial, file);
      }
      const path =
        `/api/v1/runs/${encodeURIComponent(this.init.runId)}` + `/decisions/${encodeURIComponent(d.id)}/receipt`;
      const r = await this.ctx.client.post(path, { leaseEpoch: this.init.leaseEpoch }).catch((err: Error) => err);
      if (r instanceof Error) {
        this.say("decision", `${d.id} written, receipt failed (${r.message}); sent again next heartbeat`, {}, "error");
        continue;
      }
      this.delivered.add(d.id);
      this.say("decision", `${d.kind} from ${d.author} written to .orchestra/decisions/${decisionFile(d.id)}`, {
        decision: d.id,
        receipt: r.status,
      });
    }
  }
}
