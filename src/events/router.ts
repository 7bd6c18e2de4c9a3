/**
 * Routes a stored delivery to the capability handlers registered for its event
 * ("issues" or "issues.labeled"). Deliveries no capability handles are
 * recorded as ignored. Every handler runs even when one fails; the failures
 * are collected and the delivery is retried, so handlers must be idempotent
 * (they are: label swaps, conditional state updates, deduplicated comments).
 */
import type { Logger } from "pino";
import type { GitHub } from "../github/port.js";
import type { ClaimedDelivery } from "../inbox/store.js";
import type { DispatchResult } from "../inbox/processor.js";

export interface EventContext {
  deliveryId: string;
  event: string;
  action: string | null;
  payload: Record<string, unknown>;
  installationId: number | null;
  /** The GitHub port for the delivery's installation; throws when there is none. */
  github(): Promise<GitHub>;
  log: Logger;
}

export type EventHandler = (ctx: EventContext) => Promise<void>;

export class EventRouter {
  readonly #handlers = new Map<string, EventHandler[]>();

  /** `name` is an event ("issues") or an event and action ("issues.labeled"). */
  on(names: string | string[], handler: EventHandler): void {
    for (const name of Array.isArray(names) ? names : [names]) {
      const list = this.#handlers.get(name) ?? [];
      list.push(handler);
      this.#handlers.set(name, list);
    }
  }

  handlersFor(event: string, action: string | null): EventHandler[] {
    return [...(this.#handlers.get(event) ?? []), ...(action ? (this.#handlers.get(`${event}.${action}`) ?? []) : [])];
  }

  dispatcher(deps: { githubFor(installationId: number): Promise<GitHub>; log: Logger }) {
    return async (d: ClaimedDelivery): Promise<DispatchResult> => {
      const handlers = this.handlersFor(d.event, d.action);
      if (handlers.length === 0) return "ignored";
      const payload = JSON.parse(d.payload) as Record<string, unknown>;
      const installationId = d.installationId === null ? null : Number(d.installationId);
      let github: Promise<GitHub> | undefined;
      const ctx: EventContext = {
        deliveryId: d.deliveryId,
        event: d.event,
        action: d.action,
        payload,
        installationId,
        github: () => {
          if (installationId === null) return Promise.reject(new Error(`${d.event} delivery carries no installation`));
          github ??= deps.githubFor(installationId);
          return github;
        },
        log: deps.log.child({ delivery: d.deliveryId, event: d.action ? `${d.event}.${d.action}` : d.event }),
      };
      const failures: unknown[] = [];
      for (const h of handlers) {
        try {
          await h(ctx);
        } catch (err) {
          failures.push(err);
        }
      }
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) throw new AggregateError(failures, failures.map((f) => (f instanceof Error ? f.message : String(f))).join("; "));
      return "done";
    };
  }
}
