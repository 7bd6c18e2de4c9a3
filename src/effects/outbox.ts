/**
 * The outbox table: effects written with their transition, claimed by an
 * executor one at a time per installation (a conditional update, so two
 * replicas never perform the same effect at once), finished, retried with
 * backoff, or parked with their error ring for an operator to replay.
 */
import type { Database } from "../store/db.js";
import { atomically, StepRefused, type Step } from "../store/sql.js";
import { type ErrorEntry, pushError } from "../store/error-ring.js";
import { OWNERSHIP_LANE } from "../machine/effects.js";
import { issueOf, parsed, summary, type EffectSummary, type OutboxEffect } from "./outbox-rows.js";
import type { OutboxQueries } from "./queries.js";

export { EFFECT_STATES, summary, type EffectState, type EffectSummary, type OutboxEffect } from "./outbox-rows.js";

export class Outbox {
  constructor(
    readonly queries: OutboxQueries,
    readonly database: Pick<Database, "raw" | "provider">,
  ) {}

  /** Installations with effects due now, skipping those held back. */
  async dueInstallations(now: Date, skip: ReadonlySet<number>, limit = 50): Promise<number[]> {
    const rows = await this.queries.dueInstallations(now, skip, limit);
    return rows.map((r) => r.installationId);
  }

  /**
   * Claims the installation's next due effect: the first lane's oldest
   * (machine/effects.ts, LANES), so ownership labels pass housekeeping. An effect whose previous
   * performer died mid-way is claimed as maybe-sent: its write may have
   * happened, so the performer reads before writing again.
   *
   * A label effect comes with up to `max - 1` more due label effects of its lane on other issues, to be
   * performed with it (their swaps are one request, effects/swap-batch.ts). An issue's effects still go one at
   * a time and in order: none joins past an earlier effect on its issue that is not taken.
   */
  async claimNext(installationId: number, owner: string, leaseMs: number, now: Date, max = 1): Promise<OutboxEffect[]> {
    for (let round = 0; round < 3; round++) {
      const candidates = await this.queries.dueEffects(installationId, now, Math.max(5, max + 2));
      if (candidates.length === 0) return [];
      const taken: OutboxEffect[] = [];
      const passed = new Set<string>();
      for (const [i, c] of candidates.entries()) {
        const issue = issueOf(c);
        const first = taken[0];
        const joins =
          !first ||
          (first.kind === "label" &&
            c.kind === "label" &&
            c.lane === first.lane &&
            taken.length < max &&
            issue !== null &&
            !passed.has(issue));
        if (issue !== null) passed.add(issue);
        if (!joins || !(await this.queries.claimEffect(c, owner, new Date(now.getTime() + leaseMs)))) continue;
        taken.push({
          ...parsed({ ...c, attempts: c.attempts + 1, maybeSent: c.maybeSent || c.state === "running" }),
          laneBusy: candidates.slice(i + 1).some((x) => x.lane === c.lane),
        });
        if (c.kind !== "label") break;
      }
      // Performed at once, each one's lane is busy with the others' writes as well.
      if (taken.length > 1) for (const e of taken) e.laneBusy = true;
      if (taken.length > 0) return taken;
    }
    return [];
  }

  /** The newer effect that does what this one would (its key), or null: this one goes out. */
  async supersededBy(e: OutboxEffect, now: Date): Promise<string | null> {
    return e.coalesceKey ? this.queries.newerOf(e.coalesceKey, e.seq, now) : null;
  }

  /**
   * The statement that finishes a claimed effect: done, dropped (superseded
   * or refused by its guard), dry-run, or parked with its errors. Run on its
   * own, or inside the transaction of the outcome the task hears (a
   * dispatch, a publish, a dispatch given up): both, or neither.
   */
  finishStep(
    e: OutboxEffect,
    owner: string,
    state: "done" | "dropped" | "dry-run" | "parked",
    fields: { result?: unknown; note?: string; errors?: ErrorEntry[]; maybeSent?: boolean },
    now: Date,
  ): Step {
    return {
      sql:
        `UPDATE "Effect" SET "state" = ?, "lockedBy" = NULL, "lockedUntil" = NULL, "doneAt" = ?, "result" = ?, ` +
        `"note" = ?, "errors" = ?, "maybeSent" = ? WHERE "seq" = ? AND "state" = 'running' AND "lockedBy" = ?`,
      args: [
        state,
        state === "parked" ? null : now,
        fields.result !== undefined ? JSON.stringify(fields.result) : null,
        fields.note ?? null,
        JSON.stringify(fields.errors ?? e.errors),
        fields.maybeSent ?? e.maybeSent,
        e.seq,
        owner,
      ],
      check: (r) => (r.changes === 1 ? null : "another executor took the effect over"),
    };
  }

  /** Runs `finishStep` on its own; false when another executor had taken the effect over. */
  async finish(
    e: OutboxEffect,
    owner: string,
    state: Parameters<Outbox["finishStep"]>[2],
    fields: Parameters<Outbox["finishStep"]>[3],
    now: Date,
  ): Promise<boolean> {
    try {
      await atomically(this.database, [this.finishStep(e, owner, state, fields, now)]);
      return true;
    } catch (err) {
      if (err instanceof StepRefused) return false;
      throw err;
    }
  }

  /** The fields of an effect given up: its note says why (the retry schedule's reason) and what to do. */
  parked(
    e: OutboxEffect,
    error: { class: string; message: string; windowFrom?: string },
    maybeSent: boolean,
    now: Date,
    why: string,
  ) {
    const note =
      `parked after ${e.attempts} attempt(s): ${why}; last error: ${error.message}. ` +
      `Fix the cause, then run: orchestra effects replay ${e.id}`;
    return {
      note,
      errors: pushError(e.errors, { at: now.toISOString(), ...error }),
      maybeSent: e.maybeSent || maybeSent,
    };
  }

  /** Back to pending at `at`; `countAttempt: false` for waits that are not the effect's fault (rate limits). */
  async retryAt(
    e: OutboxEffect,
    owner: string,
    at: Date,
    error: { class: string; message: string; windowFrom?: string },
    opts: { countAttempt: boolean; maybeSent: boolean },
    now: Date,
  ): Promise<void> {
    const errors = JSON.stringify(pushError(e.errors, { at: now.toISOString(), ...error }));
    await this.queries.retryEffect(e.seq, owner, at, errors, opts);
  }

  /**
   * Part of it done, the rest due now but behind the others of its lane (its place in line is now): a claim's
   * label added, the labels it replaces removed after the other claims' labels are added.
   */
  async requeueBehind(e: OutboxEffect, owner: string, now: Date): Promise<void> {
    await this.queries.retryEffect(e.seq, owner, now, JSON.stringify(e.errors), {
      countAttempt: false,
      maybeSent: false,
      behind: now,
      // An interlock whose label is on: what it replaces is ownership, behind the other claims' interlocks.
      ...(e.lane < OWNERSHIP_LANE ? { lane: OWNERSHIP_LANE } : {}),
    });
  }

  /**
   * Back to pending, due now, its attempt given back and its errors as they
   * were: the service is stopping, which is no failure of the effect. A write
   * that may have reached GitHub is marked maybe-sent (read before it is sent
   * again).
   */
  async release(e: OutboxEffect, owner: string, maybeSent: boolean, now: Date): Promise<void> {
    await this.queries.retryEffect(e.seq, owner, now, JSON.stringify(e.errors), { countAttempt: false, maybeSent });
  }

  /**
   * Drops the pending effects of an installation or repository that Orchestra
   * no longer manages (GitHub would refuse them).
   */
  async dropPending(where: { installationId: number } | { repo: string }, why: string, now: Date): Promise<number> {
    return this.queries.dropPendingEffects(where, why, now);
  }

  /**
   * A suspended installation or a repository removed from it: its pending effects wait (GitHub would refuse
   * them now) until it comes back, instead of failing until they are parked; `held: false` lets them go.
   */
  async hold(where: { installationId: number } | { repo: string }, held: boolean, now: Date): Promise<number> {
    return this.queries.holdEffects(where, held, now);
  }

  /** Extends the claim on an effect being performed; false when it was lost (its lease ran out and it was taken). */
  async renew(e: Pick<OutboxEffect, "seq">, owner: string, leaseMs: number, now: Date): Promise<boolean> {
    return this.queries.renewEffect(e.seq, owner, new Date(now.getTime() + leaseMs));
  }

  /** One process owns the SQLite file: effects left running belong to a dead predecessor. */
  async releaseAll(): Promise<number> {
    return this.queries.releaseRunningEffects();
  }

  /** The effects a replica that stopped beating was performing, back to pending: each is read on GitHub first. */
  async releaseHeldBy(owner: string): Promise<number> {
    return this.queries.releaseRunningEffects(owner);
  }

  /** A parked effect goes back to the queue with a fresh attempt budget; its errors stay. */
  async replay(id: string, now: Date): Promise<boolean> {
    return this.queries.replayEffect(id, now);
  }

  /** Effects performable now or in flight (tests and shutdown wait for none). */
  async active(now: Date): Promise<number> {
    return this.queries.activeEffects(now);
  }

  async list(filter: { state?: string; taskId?: string; limit?: number }): Promise<EffectSummary[]> {
    const rows = await this.queries.effects({
      ...(filter.state ? { state: filter.state } : {}),
      ...(filter.taskId ? { taskId: filter.taskId } : {}),
      take: Math.min(filter.limit ?? 100, 1000),
    });
    return rows.map(summary);
  }

  async counts(): Promise<Record<string, number>> {
    const groups = await this.queries.effectStates();
    return Object.fromEntries(groups.map((g) => [g.state, g._count._all]));
  }
}
