/**
 * The effects executor: performs the outbox at GitHub's pace. Installations
 * are worked in parallel, each one's effects one at a time (oldest first),
 * writes spaced by the installation's pacer. A rate limit holds back only its
 * installation; a token GitHub will not mint pauses only its installation.
 * Failures retry on the same schedule as deliveries (retry/schedule.ts):
 * through a GitHub outage for the retry window, a deterministic refusal only
 * a few times; then the effect is parked with its error ring, and one whose
 * outcome the task waits for (a dispatch) tells the task. Nothing here waits
 * on behalf of a caller: the worker API and the inbox only write rows.
 */
import { randomUUID } from "node:crypto";
import { GitHubError } from "../github/port.js";
import { instrument, newCounts, type CallCounts } from "../github/instrument.js";
import { errorClass, errorText as errText, failureOf } from "../github/errors.js";
import { DEFAULT_RETRY, retryDecision, type Failure } from "../retry/schedule.js";
import { windowFromOf } from "../store/error-ring.js";
import { describeEffect } from "../machine/effects.js";
import { runView, taskView } from "../apply/views.js";
import { Outbox, type OutboxEffect } from "./outbox.js";
import type { ExecutorDeps, ExecutorOptions } from "./executor-deps.js";
import type { TaskEvent } from "../machine/events.js";
import { PERFORMERS, type Performed, type Performer } from "./perform.js";
import { checkRunReader } from "./check-run-view.js";
import { HELD } from "./queries.js";

export type { ExecutorDeps, ExecutorOptions } from "./executor-deps.js";

/**
 * Attempts a deterministic failure gets before its effect is parked: the
 * performer's own number (3 unless it says), but one for a GraphQL query
 * GitHub refused — refused the same way every time, so it is parked at once
 * with GitHub's messages rather than asked again.
 */
export function attemptsBeforeParking(failure: Failure, performer: Pick<Performer<never>, "deterministicAttempts">) {
  return failure.class === "graphql" ? 1 : (performer.deterministicAttempts ?? 3);
}

export class Executor {
  readonly owner: string;
  readonly #o: Required<Omit<ExecutorOptions, "owner">>;
  readonly #lanes = new Map<number, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #timerDue = 0;
  #lastTick = 0;
  #running = false;
  #ticking: Promise<void> | null = null;
  #again = false;
  readonly #checkRunOf: ReturnType<typeof checkRunReader>;

  constructor(
    readonly deps: ExecutorDeps,
    opts: ExecutorOptions = {},
  ) {
    this.owner = opts.owner ?? `${process.pid}-${randomUUID().slice(0, 8)}`;
    this.#checkRunOf = checkRunReader(deps.queries);
    this.#o = {
      concurrency: opts.concurrency ?? 4,
      pollMs: opts.pollMs ?? 1_000,
      leaseMs: opts.leaseMs ?? 60_000,
      windowMs: opts.windowMs ?? DEFAULT_RETRY.windowMs,
      backoff: opts.backoff ?? { baseMs: DEFAULT_RETRY.baseMs, capMs: DEFAULT_RETRY.capMs },
      pokeGapMs: opts.pokeGapMs ?? 100,
    };
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.poke();
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#ticking;
    await Promise.allSettled([...this.#lanes.values()]);
  }

  /** New effects were recorded: look now rather than at the next poll. */
  poke(): void {
    if (!this.#running) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#schedule(Math.max(0, this.#lastTick + this.#o.pokeGapMs - Date.now()));
  }

  #schedule(waitMs: number): void {
    const due = Date.now() + waitMs;
    if (this.#timer && this.#timerDue <= due) return; // a look is coming soon enough
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerDue = due;
    this.#timer = setTimeout(() => this.#tick(), waitMs);
  }

  #tick(): void {
    this.#timer = undefined;
    if (!this.#running) return;
    this.#lastTick = Date.now();
    this.#ticking = this.#fill()
      .catch((err: unknown) =>
        this.deps.log.error(
          { err: errText(err) },
          "effects: could not look for due effects (database unavailable?); retrying at the next poll",
        ),
      )
      .finally(() => {
        this.#ticking = null;
        if (!this.#running) return;
        const soon = this.#again;
        this.#again = false;
        this.#schedule(soon ? this.#o.pokeGapMs : this.#o.pollMs);
      });
  }

  async #fill(): Promise<void> {
    const free = this.#o.concurrency - this.#lanes.size;
    if (free <= 0) return;
    const held = await this.deps.installations.held();
    const skip = new Set([...held.keys(), ...this.#lanes.keys()]);
    const ids = await this.deps.outbox.dueInstallations(this.deps.clock.now(), skip, free);
    for (const id of ids) {
      const lane = this.#lane(id).finally(() => {
        this.#lanes.delete(id);
        this.poke();
      });
      this.#lanes.set(id, lane);
    }
  }

  /** One installation's effects, one at a time, until none is due or the installation is held back. */
  async #lane(installationId: number): Promise<void> {
    while (this.#running) {
      let e: OutboxEffect | null;
      try {
        e = await this.deps.outbox.claimNext(installationId, this.owner, this.#o.leaseMs, this.deps.clock.now());
      } catch (err) {
        this.deps.log.error(
          { installationId, err: errText(err) },
          "effects: could not claim an effect; retrying at the next poll",
        );
        return;
      }
      if (!e) return;
      const go = await this.#performOne(e).catch((err: unknown) => {
        this.deps.log.error(
          { effect: e.id, err: errText(err) },
          "effects: could not record an effect's outcome; its claim expires and it is tried again",
        );
        return "stop" as const;
      });
      if (go === "stop") return;
    }
  }

  async #performOne(e: OutboxEffect): Promise<"go" | "stop"> {
    const { queries, outbox, log } = this.deps;
    const now = this.deps.clock.now();
    const performer = PERFORMERS[e.kind] as Performer<typeof e.kind>;
    if (e.dryRun) {
      await outbox.finish(e, this.owner, "dry-run", { note: `would have: ${describeEffect(e.spec)}` }, now);
      log.info({ effect: e.id, task: e.taskId, kind: e.kind }, `dry run: would have ${describeEffect(e.spec)}`);
      return "go";
    }
    // Recorded while (or just before) its repository was removed from the installation: it waits for it.
    if ((await queries.repoAccess(e.repo)) === "removed") {
      const message = "held: the repository was removed from the App's installation";
      await outbox.retryAt(
        e,
        this.owner,
        HELD,
        { class: "access", message },
        { countAttempt: false, maybeSent: false },
        now,
      );
      return "go";
    }
    const taskRow = e.taskId ? await queries.task(e.taskId) : null;
    const runId = e.runId ?? taskRow?.runId ?? null;
    const runRow = runId ? await queries.run(runId) : null;
    const counts = newCounts();
    try {
      const github = instrument(await this.deps.githubFor(e.installationId), counts, () =>
        this.deps.installations.beforeWrite(e.installationId),
      );
      const out = await performer.perform(
        {
          effect: e,
          task: taskRow ? taskView(taskRow) : null,
          run: runRow ? runView(runRow) : null,
          github,
          checkRunOf: this.#checkRunOf,
          ...(this.deps.fleet ? { fleet: this.deps.fleet } : {}),
          ...(this.deps.credentials ? { credentials: this.deps.credentials } : {}),
          ...(this.deps.seen ? { seen: this.deps.seen } : {}),
        },
        e.spec.payload,
      );
      await this.deps.installations.healthy(e.installationId);
      await this.#finish(e, out);
      return "go";
    } catch (err) {
      return await this.#failed(e, err, counts, performer);
    } finally {
      await this.deps.ledger.add(e.taskId, counts).catch(() => {});
    }
  }

  /** Done or dropped; an outcome the task waits for is applied in the same transaction. */
  async #finish(e: OutboxEffect, out: Performed): Promise<void> {
    const state = out.status === "done" ? "done" : "dropped";
    const result = out.status === "done" ? out.result : undefined;
    const fields = { ...(result !== undefined ? { result } : {}), ...(out.note ? { note: out.note } : {}) };
    this.deps.log[state === "done" ? "debug" : "info"](
      { effect: e.id, task: e.taskId, kind: e.kind, note: out.note },
      `effect ${state}`,
    );
    await this.#settle(e, state, fields, out.event);
    if (out.event?.kind === "dispatched")
      await this.deps.dispatches
        ?.accepted(e.repo, out.event.runId)
        .catch((err: unknown) =>
          this.deps.log.warn(
            { repo: e.repo, err: errText(err) },
            "effects: the breaker could not hear of an accepted dispatch; its sweep closes it when the probe ends",
          ),
        );
  }

  /** Records how the effect ended; an outcome the task waits for is applied in the same transaction. */
  async #settle(
    e: OutboxEffect,
    state: Parameters<Outbox["finishStep"]>[2],
    fields: Parameters<Outbox["finishStep"]>[3],
    event: TaskEvent | undefined,
  ): Promise<void> {
    const now = this.deps.clock.now();
    if (event && e.taskId) {
      const steps = [this.deps.outbox.finishStep(e, this.owner, state, fields, now)];
      const { dispatches } = this.deps;
      const r =
        event.kind === "dispatch-refused" && event.scope === "repository" && dispatches
          ? await dispatches.refused({ taskId: e.taskId, installationId: e.installationId, repo: e.repo }, event, steps)
          : await this.deps.tasks.raise({ taskId: e.taskId }, event, { steps });
      if (r.stepsRan) return;
    }
    await this.deps.outbox.finish(e, this.owner, state, fields, now);
  }

  async #failed(
    e: OutboxEffect,
    err: unknown,
    counts: CallCounts,
    performer: Performer<typeof e.kind>,
  ): Promise<"go" | "stop"> {
    const { outbox, installations, log } = this.deps;
    const now = this.deps.clock.now();
    const message = errText(err);
    if (!this.#running) {
      // Stopping: its GitHub calls were abandoned, which says nothing about the effect. It waits, pending.
      await outbox.release(e, this.owner, counts.writeFailed, now);
      log.info({ effect: e.id, kind: e.kind }, "effects: stopping; the effect in flight stays pending");
      return "stop";
    }
    if (err instanceof GitHubError && err.tokenFailure) {
      const until = await installations.tokenFailed(e.installationId, message);
      await outbox.retryAt(
        e,
        this.owner,
        until,
        { class: "token", message },
        { countAttempt: false, maybeSent: false },
        now,
      );
      log.warn(
        { installationId: e.installationId, until: until.toISOString(), err: message },
        "effects: GitHub would not mint the installation's token; installation paused (is the App still installed?)",
      );
      return "stop";
    }
    const failure = failureOf(err);
    // A failure on the first attempt since the effect was recorded or replayed starts a new window.
    const firstFailedAt = e.attempts <= 1 ? null : windowFromOf(e.errors);
    const policy = {
      ...this.#o.backoff,
      maxAttempts: attemptsBeforeParking(failure, performer),
      windowMs: this.#o.windowMs,
    };
    const decision = retryDecision({ failure, attempts: e.attempts, firstFailedAt, now, policy });
    const windowFrom = decision.firstFailedAt.toISOString();
    const maybeSent =
      failure.class !== "rate-limit" && counts.writeFailed && (err instanceof GitHubError ? err.mayHaveSent : true);
    const klass = failure.class === "rate-limit" ? "rate-limit" : errorClass(err, "error");
    if ("park" in decision) {
      log.error(
        { effect: e.id, task: e.taskId, kind: e.kind, attempts: e.attempts, failure: failure.class, err: message },
        `effects: parked after ${e.attempts} attempts (${decision.why}); ` +
          `fix the cause, then run: orchestra effects replay ${e.id}`,
      );
      const event = performer.onGiveUp?.({ effect: e }, e.spec.payload, message, err);
      await this.#settle(
        e,
        "parked",
        outbox.parked(e, { class: klass, message, windowFrom }, maybeSent, now, decision.why),
        event ?? undefined,
      );
      return "go";
    }
    if (failure.class === "rate-limit") {
      // The whole installation waits until GitHub's reset, not this effect's
      // backoff; the wait is not the effect's fault and costs no attempt.
      const lifts =
        failure.retryAfterMs === undefined ? decision.retryAt : new Date(now.getTime() + failure.retryAfterMs);
      await installations.rateLimited(e.installationId, lifts);
      await outbox.retryAt(
        e,
        this.owner,
        decision.retryAt,
        { class: klass, message, windowFrom },
        { countAttempt: false, maybeSent: false },
        now,
      );
      log.warn(
        { installationId: e.installationId, until: decision.retryAt.toISOString() },
        "effects: rate limited by GitHub; this installation waits, the others go on",
      );
      return "stop";
    }
    await outbox.retryAt(
      e,
      this.owner,
      decision.retryAt,
      { class: klass, message, windowFrom },
      { countAttempt: true, maybeSent },
      now,
    );
    log.warn(
      {
        effect: e.id,
        kind: e.kind,
        attempt: e.attempts,
        failure: failure.class,
        retryAt: decision.retryAt.toISOString(),
        err: message,
      },
      "effects: failed; retrying with backoff",
    );
    return "go";
  }
}
