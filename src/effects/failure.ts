/**
 * What the executor does with an effect whose performer failed: keep it pending
 * while the service stops, pause the installation GitHub will not mint a
 * token for, hold an installation GitHub rate limited until its reset, retry
 * with backoff through the retry window, or park it with its error ring and
 * tell the task that waited on it.
 */
import { GitHubError } from "../github/port.js";
import type { CallCounts } from "../github/instrument.js";
import { errorClass, errorText as errText, failureOf } from "../github/errors.js";
import { retryDecision, type Failure } from "../retry/schedule.js";
import { windowFromOf } from "../store/error-ring.js";
import type { TaskEvent } from "../machine/events.js";
import type { Outbox, OutboxEffect } from "./outbox.js";
import type { ExecutorDeps } from "./executor-deps.js";
import type { Performer } from "./perform.js";

export interface FailureContext {
  deps: ExecutorDeps;
  owner: string;
  /** False once the service is stopping. */
  running: boolean;
  policy: { baseMs: number; capMs: number; windowMs: number };
  /** Records how the effect ended, with the outcome the task waits for in the same transaction. */
  settle(
    e: OutboxEffect,
    state: Parameters<Outbox["finishStep"]>[2],
    fields: Parameters<Outbox["finishStep"]>[3],
    event: TaskEvent | undefined,
  ): Promise<void>;
}

/**
 * Attempts a deterministic failure gets before its effect is parked: the
 * performer's own number (3 unless it says), but one for a GraphQL query
 * GitHub refused — refused the same way every time, so it is parked at once
 * with GitHub's messages rather than asked again.
 */
export function attemptsBeforeParking(failure: Failure, performer: Pick<Performer<never>, "deterministicAttempts">) {
  return failure.class === "graphql" ? 1 : (performer.deterministicAttempts ?? 3);
}

export async function recordFailure(
  x: FailureContext,
  e: OutboxEffect,
  err: unknown,
  counts: CallCounts,
  performer: Performer<typeof e.kind>,
): Promise<"go" | "stop"> {
  const { outbox, installations, log } = x.deps;
  const now = x.deps.clock.now();
  const message = errText(err);
  if (!x.running) {
    // Stopping: its GitHub calls were abandoned, which says nothing about the effect. It waits, pending.
    await outbox.release(e, x.owner, counts.writeFailed, now);
    log.info({ effect: e.id, kind: e.kind }, "effects: stopping; the effect in flight stays pending");
    return "stop";
  }
  if (err instanceof GitHubError && err.tokenFailure) {
    const until = await installations.tokenFailed(e.installationId, message);
    await outbox.retryAt(
      e,
      x.owner,
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
  const policy = { ...x.policy, maxAttempts: attemptsBeforeParking(failure, performer) };
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
    await x.settle(
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
      x.owner,
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
    x.owner,
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
