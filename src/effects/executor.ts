/**
 * The effects executor: performs the outbox at GitHub's pace. Installations
 * are worked in parallel, each one's effects one at a time (first lane
 * first, oldest first within it; an effect a newer one supersedes is dropped)
 * but for label effects on different issues, a few at once with their swaps
 * in one request; writes spaced by the installation's pacer. A rate limit holds back only its
 * installation; a token GitHub will not mint pauses only its installation.
 * Failures retry on the same schedule as deliveries (retry/schedule.ts):
 * through a GitHub outage for the retry window, a deterministic refusal only
 * a few times; then the effect is parked with its error ring, and one whose
 * outcome the task waits for (a dispatch) tells the task. Nothing here waits
 * on behalf of a caller: the worker API and the inbox only write rows.
 */
import { instrument, newCounts } from "../github/instrument.js";
import { errorText as errText } from "../github/errors.js";
import { DEFAULT_RETRY } from "../retry/schedule.js";
import { describeEffect } from "../machine/effects.js";
import { runView, taskView } from "../apply/views.js";
import { Outbox, type OutboxEffect } from "./outbox.js";
import type { ExecutorDeps, ExecutorOptions } from "./executor-deps.js";
import type { TaskEvent } from "../machine/events.js";
import { PERFORMERS, type Performed, type Performer } from "./perform.js";
import { checkRunReader } from "./check-run-view.js";
import { HELD } from "./queries.js";
import { recordFailure } from "./failure.js";
import { PROCESSING_LEASE_MS } from "../config/defaults.js";
import { ownerId, whileRenewed } from "../store/renewal.js";
import { MAX_SWAPS, type LabelSwap, type SwapAnswer } from "../github/port.js";
import { sendWith, SwapBatch, type SwapMember } from "./swap-batch.js";

export type { ExecutorDeps, ExecutorOptions } from "./executor-deps.js";

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
    this.owner = opts.owner ?? ownerId();
    this.#checkRunOf = checkRunReader(deps.queries);
    this.#o = {
      concurrency: opts.concurrency ?? 4,
      pollMs: opts.pollMs ?? 1_000,
      leaseMs: opts.leaseMs ?? PROCESSING_LEASE_MS,
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

  /**
   * One installation's effects, one at a time, until none is due or the installation is held back; label
   * effects of one lane on different issues a few at a time, their swaps sent as one request (swap-batch.ts).
   */
  async #lane(installationId: number): Promise<void> {
    while (this.#running) {
      let batch: OutboxEffect[];
      try {
        batch = await this.deps.outbox.claimNext(
          installationId,
          this.owner,
          this.#o.leaseMs,
          this.deps.clock.now(),
          MAX_SWAPS,
        );
      } catch (err) {
        this.deps.log.error(
          { installationId, err: errText(err) },
          "effects: could not claim an effect; retrying at the next poll",
        );
        return;
      }
      if (batch.length === 0) return;
      const swaps = batch.length > 1 ? new SwapBatch(batch.length, (s) => this.#sendSwaps(installationId, s)) : null;
      const went = await Promise.all(batch.map((e) => this.#performClaimed(e, swaps?.member())));
      if (went.includes("stop")) return;
    }
  }

  /** Label swaps of a batch: one request, at one write slot of the installation's pace. */
  async #sendSwaps(installationId: number, swaps: LabelSwap[]): Promise<SwapAnswer[]> {
    const github = await this.deps.githubFor(installationId);
    await this.deps.installations.beforeWrite(installationId);
    return github.swapLabels(swaps);
  }

  /** A claimed effect performed, its claim renewed while it is (a slow write, or a wait for GitHub's pace). */
  async #performClaimed(e: OutboxEffect, member: SwapMember | undefined): Promise<"go" | "stop"> {
    try {
      return await whileRenewed(
        {
          leaseMs: this.#o.leaseMs,
          renew: () => this.deps.outbox.renew(e, this.owner, this.#o.leaseMs, this.deps.clock.now()),
          lost: () =>
            this.deps.log.warn({ effect: e.id }, "effects: lost the claim on an effect still being performed"),
        },
        () => this.#performOne(e, member),
      );
    } catch (err) {
      this.deps.log.error(
        { effect: e.id, err: errText(err) },
        "effects: could not record an effect's outcome; its claim expires and it is tried again",
      );
      return "stop";
    } finally {
      member?.done();
    }
  }

  async #performOne(e: OutboxEffect, member?: SwapMember): Promise<"go" | "stop"> {
    const { queries, outbox, log } = this.deps;
    const now = this.deps.clock.now();
    const performer = PERFORMERS[e.kind] as Performer<typeof e.kind>;
    if (e.dryRun) {
      await outbox.finish(e, this.owner, "dry-run", { note: `would have: ${describeEffect(e.spec)}` }, now);
      log.info({ effect: e.id, task: e.taskId, kind: e.kind }, `dry run: would have ${describeEffect(e.spec)}`);
      return "go";
    }
    // A newer effect of its coalescing key came after it (it was in flight or waiting to retry): that one says it all.
    const newer = await outbox.supersededBy(e, now);
    if (newer) {
      await outbox.finish(e, this.owner, "dropped", { note: `superseded by effect ${newer}` }, now);
      log.debug({ effect: e.id, task: e.taskId, kind: e.kind, newer }, "effect superseded");
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
          laneBusy: e.laneBusy === true,
          ...(member ? { swap: sendWith(member, counts), shared: member.shared } : {}),
        },
        e.spec.payload,
      );
      await this.deps.installations.healthy(e.installationId);
      await this.#finish(e, out);
      return "go";
    } catch (err) {
      return await recordFailure(
        {
          deps: this.deps,
          owner: this.owner,
          running: this.#running,
          policy: { ...this.#o.backoff, windowMs: this.#o.windowMs },
          settle: (effect, state, fields, event) => this.#settle(effect, state, fields, event),
        },
        e,
        err,
        counts,
        performer,
      );
    } finally {
      await this.deps.ledger.add(e.taskId, counts).catch(() => {});
    }
  }

  /** Done or dropped; an outcome the task waits for is applied in the same transaction. */
  async #finish(e: OutboxEffect, out: Performed): Promise<void> {
    if (out.status === "later") {
      this.deps.log.debug({ effect: e.id, task: e.taskId, kind: e.kind, note: out.note }, "effect continues later");
      await this.deps.outbox.requeueBehind(e, this.owner, this.deps.clock.now());
      return;
    }
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
}
