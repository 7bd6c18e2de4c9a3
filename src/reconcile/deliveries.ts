/**
 * Missed deliveries. GitHub never retries a webhook delivery that failed (the
 * App was down, the database could not store it, the network dropped it).
 * Every minute this sweep reads the App's delivery log from a checkpoint,
 * keeps the guids that have failed attempts and no successful one, and asks
 * GitHub to deliver each again unless the inbox already holds it. The event
 * then comes back through the webhook endpoint and the inbox like any other,
 * so deduplication holds whatever happens here.
 *
 * Bounds: 10 pages of 100 per sweep (what is left is read from a saved cursor
 * next time), 50 redeliveries per sweep, one request per guid per hour (the
 * Redelivery table, a conditional write, so replicas never both ask), only
 * deliveries within GitHub's 3-day redelivery window. A listing that fails
 * changes nothing. In dry run the plan is recorded and nothing is asked.
 */
import type { HookDelivery } from "../github/app-hooks.js";
import { GitHubError } from "../github/port.js";
import { errorText } from "../github/errors.js";
import {
  ASK_EVERY_MS,
  CHECKPOINT,
  DEFAULT_LIMITS,
  WINDOW_MS,
  type DeliveriesDeps,
  type DeliveriesLimits,
  type DeliveriesReport,
  type Seen,
  type State,
} from "./deliveries-model.js";

const ok = (d: HookDelivery) => d.statusCode >= 200 && d.statusCode < 300;

export class MissedDeliveries {
  readonly limits: DeliveriesLimits;
  constructor(readonly deps: DeliveriesDeps) {
    this.limits = { ...DEFAULT_LIMITS, ...deps.limits };
  }

  async sweep(): Promise<DeliveriesReport> {
    const { queries, hooks, log } = this.deps;
    const now = this.deps.clock.now();
    const edge = now.getTime() - WINDOW_MS;
    const out: DeliveriesReport = { read: 0, missing: 0, redelivered: 0, skipped: 0, deferred: 0, errors: 0 };
    const row = await queries.checkpoint(CHECKPOINT);
    const state = this.#parse(row?.value);

    let read: Awaited<ReturnType<MissedDeliveries["read"]>>;
    try {
      read = await this.read(state);
    } catch (err) {
      // Positive evidence only: nothing is asked and the checkpoint stays; the next sweep reads again.
      // Only a saved cursor GitHub refuses outright is dropped, or every sweep would fail on it.
      if (state.backlog && err instanceof GitHubError && (err.status === 400 || err.status === 422)) {
        log.warn(
          { cursor: state.backlog.cursor, err: errorText(err) },
          "deliveries: GitHub refused the saved cursor; the older deliveries it led to are not read",
        );
        await this.#save(row, { ...state, backlog: null }, now);
      }
      out.errors++;
      log.warn(
        { err: errorText(err) },
        "deliveries: GitHub's delivery log could not be read; nothing changed, the next sweep retries",
      );
      await this.#report(out, now, { listing: errorText(err) });
      return out;
    }
    out.read = read.count;
    const pending = new Map(Object.entries(state.pending));
    for (const [guid, seen] of read.seen) {
      const old = pending.get(guid);
      if (seen.ok) pending.delete(guid);
      else if (seen.failed) {
        const f = seen.failed;
        const first = old && Date.parse(old.first) < seen.first.getTime() ? old.first : seen.first.toISOString();
        const newest =
          old && old.id > f.id
            ? old
            : { id: f.id, event: f.action ? `${f.event}.${f.action}` : f.event, installationId: f.installationId };
        pending.set(guid, { id: newest.id, first, event: newest.event, installationId: newest.installationId });
      }
    }
    const expired: string[] = [];
    for (const [guid, p] of pending) {
      if (Date.parse(p.first) < edge) {
        pending.delete(guid);
        expired.push(guid);
      }
    }
    for (const guid of await this.#inInbox([...pending.keys()])) pending.delete(guid);
    out.missing = pending.size;
    out.skipped = expired.length;

    const asked = new Map<string, Date>();
    for (const chunk of chunks([...pending.keys()])) {
      for (const r of await queries.redeliveriesAsked(chunk)) asked.set(r.guid, r.requestedAt);
    }
    const due = [...pending].filter(([guid]) => !((asked.get(guid)?.getTime() ?? 0) > now.getTime() - ASK_EVERY_MS));
    out.skipped += pending.size - due.length;
    // Oldest first: they leave GitHub's window first.
    due.sort(([, a], [, b]) => Date.parse(a.first) - Date.parse(b.first) || a.id - b.id);
    const batch = due.slice(0, this.limits.redeliveries);
    out.deferred = due.length - batch.length;
    const plan = batch.map(([guid, p]) => ({
      guid,
      deliveryId: p.id,
      event: p.event,
      installationId: p.installationId,
      firstFailedAt: p.first,
    }));

    let detail: Record<string, unknown> | null = null;
    if (this.deps.dryRun) {
      out.wouldRedeliver = plan.length;
      if (plan.length) detail = { dryRun: true, wouldRedeliver: plan };
    } else {
      const done: string[] = [];
      const failed: Array<{ guid: string; error: string }> = [];
      for (const [i, [guid, p]] of batch.entries()) {
        if (!(await this.#claim(guid, p.event, now))) {
          out.skipped++;
          continue;
        }
        try {
          await hooks.redeliver(p.id);
          out.redelivered++;
          done.push(guid);
        } catch (err) {
          out.errors++;
          failed.push({ guid, error: errorText(err) });
          // Not sent (a refusal, a rate limit): the next sweep may ask again; maybe sent: in an hour.
          const sent = !(err instanceof GitHubError) || err.mayHaveSent;
          await queries.redeliveryFailed(guid, {
            lastError: errorText(err).slice(0, 500),
            ...(sent ? {} : { requestedAt: new Date(now.getTime() - ASK_EVERY_MS) }),
          });
          if (err instanceof GitHubError && err.retryAfterMs !== undefined) {
            out.deferred += batch.length - i - 1;
            break;
          }
        }
      }
      if (done.length || failed.length) detail = { redelivered: done, ...(failed.length ? { failed } : {}) };
    }
    if (expired.length) detail = { ...detail, expired };

    await this.#save(row, { newest: read.newest, backlog: read.backlog, pending: Object.fromEntries(pending) }, now);
    await this.#report(out, now, detail);
    if (out.redelivered || out.errors || out.wouldRedeliver || out.deferred || expired.length) {
      log.info(
        { ...out, ...(expired.length ? { expired } : {}) },
        this.deps.dryRun
          ? "deliveries: dry run, would ask GitHub to redeliver missed deliveries"
          : "deliveries: asked GitHub to redeliver missed deliveries",
      );
    }
    return out;
  }

  /**
   * Installations with a failed delivery not yet recovered: no successful
   * attempt seen and no inbox row, within GitHub's window.
   */
  async waiting(): Promise<Set<number>> {
    const row = await this.deps.queries.checkpoint(CHECKPOINT);
    const edge = this.deps.clock.now().getTime() - WINDOW_MS;
    const failed = Object.entries(this.#parse(row?.value).pending).filter(
      ([, p]) => p.installationId !== null && Date.parse(p.first) >= edge,
    );
    const stored = new Set(await this.#inInbox(failed.map(([guid]) => guid)));
    return new Set(failed.filter(([guid]) => !stored.has(guid)).map(([, p]) => p.installationId!));
  }

  /**
   * Reads the log newest first: an unfinished older range first, then from
   * the top down to the newest attempt examined last time. The page that
   * reaches it is examined whole (no extra request), so attempts listed a
   * little out of order are not lost. Pages past the bound wait for the next
   * sweep at their cursor.
   */
  async read(
    state: State,
  ): Promise<{ count: number; seen: Map<string, Seen>; newest: number | null; backlog: State["backlog"] }> {
    const edge = this.deps.clock.now().getTime() - WINDOW_MS;
    const seen = new Map<string, Seen>();
    let pages = 0;
    let count = 0;
    let failedNew = 0;
    const full = () =>
      pages >= this.limits.pages || Object.keys(state.pending).length + failedNew >= this.limits.pending;
    const range = async (
      cursor: string | null,
      floor: number | null,
    ): Promise<{ done: boolean; next: string | null; top: number | null }> => {
      let top: number | null = null;
      for (;;) {
        if (full()) return { done: false, next: cursor, top };
        const page = await this.deps.hooks.listDeliveries(cursor);
        pages++;
        let stop = page.next === null;
        for (const item of page.items) {
          count++;
          top ??= item.id;
          if ((floor !== null && item.id <= floor) || item.deliveredAt.getTime() < edge) stop = true;
          const s = seen.get(item.guid) ?? { ok: false, failed: null, first: item.deliveredAt };
          if (ok(item)) s.ok = true;
          else {
            if (!s.failed) {
              if (!state.pending[item.guid]) failedNew++;
              s.first = item.deliveredAt;
            } else if (item.deliveredAt < s.first) s.first = item.deliveredAt;
            if (!s.failed || item.id > s.failed.id) s.failed = item;
          }
          seen.set(item.guid, s);
        }
        if (stop) return { done: true, next: null, top };
        cursor = page.next;
      }
    };
    let backlog = state.backlog;
    let newest = state.newest;
    if (backlog) {
      const r = await range(backlog.cursor, backlog.floor);
      backlog = r.done ? null : { cursor: r.next!, floor: backlog.floor };
    }
    if (!backlog) {
      const r = await range(null, state.newest);
      if (r.top !== null) newest = Math.max(r.top, state.newest ?? 0);
      if (!r.done && r.next !== null) backlog = { cursor: r.next, floor: state.newest };
    }
    return { count, seen, newest, backlog };
  }

  /** Claims the right to ask for a guid: no request for it within the hour, by any replica. */
  async #claim(guid: string, event: string, now: Date): Promise<boolean> {
    return this.deps.queries.claimRedelivery(guid, event, now, new Date(now.getTime() - ASK_EVERY_MS));
  }

  async #inInbox(guids: string[]): Promise<string[]> {
    const found: string[] = [];
    for (const chunk of chunks(guids)) {
      found.push(...(await this.deps.queries.inInbox(chunk)));
    }
    return found;
  }

  #parse(value: string | undefined): State {
    const empty: State = { newest: null, backlog: null, pending: {} };
    if (!value) return empty;
    try {
      const s = JSON.parse(value) as Partial<State>;
      return {
        newest: typeof s.newest === "number" ? s.newest : null,
        backlog: s.backlog?.cursor ? s.backlog : null,
        pending: s.pending && typeof s.pending === "object" ? s.pending : {},
      };
    } catch {
      this.deps.log.warn(
        { checkpoint: CHECKPOINT },
        "deliveries: the checkpoint is not readable; reading GitHub's delivery log from the top",
      );
      return empty;
    }
  }

  /** Written only if no other replica wrote it since it was read (its sweep then stands). */
  async #save(row: { updatedAt: Date } | null, state: State, now: Date): Promise<void> {
    await this.deps.queries.replaceCheckpoint(CHECKPOINT, row?.updatedAt ?? null, JSON.stringify(state), now);
  }

  async #report(out: DeliveriesReport, at: Date, detail: Record<string, unknown> | null): Promise<void> {
    await this.deps.queries.report({
      kind: "deliveries",
      at,
      counts: JSON.stringify(out),
      detail: detail ? JSON.stringify(detail) : null,
    });
  }
}

function chunks<T>(items: T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
