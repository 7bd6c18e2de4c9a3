/**
 * What a performer is given and what it answers (effects/perform.ts, effects/perform-labels.ts,
 * effects/perform-check-run.ts).
 */
import type { GitHub, LabelSwap, SwapAnswer } from "../github/port.js";
import type { RunView, TaskView } from "../machine/decision.js";
import type { EffectKind, EffectPayloads } from "../machine/effects.js";
import type { TaskEvent } from "../machine/events.js";
import type { CheckRunView } from "../texts/check-run.js";
import type { OutboxEffect } from "./outbox.js";
import type { Seen } from "./seen.js";

export interface PerformContext {
  effect: OutboxEffect;
  task: TaskView | null;
  run: RunView | null;
  github: GitHub;
  /** What the Orchestra check run shows, read when it is performed. */
  checkRunOf?: (taskId: string, headSha: string) => Promise<CheckRunView | null>;
  /** The repositories' fleet issues (fleet/issues.ts). */
  fleet?: { perform(effect: OutboxEffect, github: GitHub): Promise<Performed> };
  /** The tokens handed to runs' workers (credentials/broker.ts). */
  credentials?: { revoke(effect: OutboxEffect, github: GitHub): Promise<Performed> };
  /** What GitHub already said of an issue's labels and of Orchestra's check runs (effects/seen.ts). */
  seen?: Seen;
  /** Another effect of the same lane is due behind this one in its installation. */
  laneBusy?: boolean;
  /**
   * Sends a label swap with the other swaps of the effects performed with this one, in one request
   * (effects/swap-batch.ts); without it, a swap is a request of its own.
   */
  swap?: SwapSender;
  /** Asks `fn` once for all the effects performed with this one, under `key`; without it, each asks. */
  shared?: <T>(key: string, fn: () => Promise<T>) => Promise<T>;
}

/** One label swap, sent on its own or with others (GitHub.swapLabels). */
export type SwapSender = (s: LabelSwap) => Promise<SwapAnswer>;

export type Performed =
  | { status: "done"; result?: unknown; note?: string; event?: TaskEvent }
  | { status: "dropped"; note: string; event?: TaskEvent }
  /** Its urgent part done; the rest goes behind the others of its lane (Outbox.requeueBehind). */
  | { status: "later"; note: string };

export interface Performer<K extends EffectKind> {
  perform(ctx: PerformContext, payload: EffectPayloads[K]): Promise<Performed>;
  /** Attempts for failures that retrying will not fix (4xx other than rate limits); default 3. */
  deterministicAttempts?: number;
  /** What the task hears when the effect is given up and parked. */
  onGiveUp?(ctx: { effect: OutboxEffect }, payload: EffectPayloads[K], why: string, err: unknown): TaskEvent | null;
}

export const done = (result?: unknown, note?: string, event?: TaskEvent): Performed => ({
  status: "done",
  ...(result !== undefined ? { result } : {}),
  ...(note ? { note } : {}),
  ...(event ? { event } : {}),
});
export const later = (note: string): Performed => ({ status: "later", note });
export const dropped = (note: string, event?: TaskEvent): Performed => ({
  status: "dropped",
  note,
  ...(event ? { event } : {}),
});
