/**
 * Routes a stored delivery to the capability handlers registered for its event
 * ("issues" or "issues.labeled"), with the payload typed as GitHub sends it
 * (`@octokit/webhooks`). Deliveries no capability handles, and those of an
 * installation Orchestra no longer manages, are recorded as ignored. Every
 * handler runs even when one fails; the failures are collected and the
 * delivery is retried, so handlers must be idempotent (they are: they raise
 * events, and the machine decides on what is there now).
 */
import type { Logger } from "pino";
import type { EmitterWebhookEvent, EmitterWebhookEventName } from "@octokit/webhooks";
import type { GitHub } from "../github/port.js";
import type { ClaimedDelivery } from "../inbox/store.js";
import { INSTALLATION_EVENTS } from "../inbox/task-key.js";
import type { DispatchResult } from "../inbox/processor.js";

type P<E extends EmitterWebhookEventName> = EmitterWebhookEvent<E>["payload"];

/**
 * The webhooks capabilities handle, with their payloads as GitHub sends them.
 * Listed one by one (a capability adds the ones it reads): typing against
 * every event GitHub has is more than the compiler can infer through.
 */
export interface Payloads {
  "issues.labeled": P<"issues.labeled">;
  "issues.unlabeled": P<"issues.unlabeled">;
  "issues.closed": P<"issues.closed">;
  "issues.reopened": P<"issues.reopened">;
  "issues.deleted": P<"issues.deleted">;
  "issues.transferred": P<"issues.transferred">;
  issue_dependencies: P<"issue_dependencies">;
  installation: P<"installation">;
  installation_repositories: P<"installation_repositories">;
  "repository.renamed": P<"repository.renamed">;
  "repository.transferred": P<"repository.transferred">;
  sub_issues: P<"sub_issues">;
  "issue_comment.created": P<"issue_comment.created">;
  "issue_comment.edited": P<"issue_comment.edited">;
  "pull_request.opened": P<"pull_request.opened">;
  "pull_request.reopened": P<"pull_request.reopened">;
  "pull_request.ready_for_review": P<"pull_request.ready_for_review">;
  "pull_request.closed": P<"pull_request.closed">;
  "pull_request.synchronize": P<"pull_request.synchronize">;
  "pull_request_review.submitted": P<"pull_request_review.submitted">;
  "check_run.completed": P<"check_run.completed">;
  "check_suite.completed": P<"check_suite.completed">;
  workflow_run: P<"workflow_run">;
  workflow_job: P<"workflow_job">;
  push: P<"push">;
}

export type HandledEvent = keyof Payloads;

export interface EventContext<E extends HandledEvent = HandledEvent> {
  deliveryId: string;
  event: string;
  action: string | null;
  payload: Payloads[E];
  installationId: number | null;
  /** The GitHub port for the delivery's installation; throws when there is none. */
  github(): Promise<GitHub>;
  log: Logger;
}

type AnyHandler = (ctx: EventContext) => Promise<void>;

export class EventRouter {
  readonly #handlers = new Map<string, AnyHandler[]>();

  /** `name` is an event ("issues") or an event and action ("issues.labeled"). */
  on<E extends HandledEvent>(name: E, handler: (ctx: EventContext<E>) => Promise<void>): void {
    this.#add([name], handler as unknown as AnyHandler);
  }

  /** One handler for several events or actions (its payload is the union of theirs). */
  onEach<E extends HandledEvent>(names: readonly E[], handler: (ctx: EventContext<E>) => Promise<void>): void {
    this.#add(names, handler as unknown as AnyHandler);
  }

  #add(names: readonly string[], handler: AnyHandler): void {
    for (const name of names) {
      // One handler per event or action (webhooks/register.ts): a second one is a wiring mistake.
      if (this.#handlers.has(name)) throw new Error(`${name} has a handler already; register each event once`);
      const list = this.#handlers.get(name) ?? [];
      list.push(handler);
      this.#handlers.set(name, list);
    }
  }

  handlersFor(event: string, action: string | null): AnyHandler[] {
    return [...(this.#handlers.get(event) ?? []), ...(action ? (this.#handlers.get(`${event}.${action}`) ?? []) : [])];
  }

  dispatcher(deps: {
    githubFor(installationId: number): Promise<GitHub>;
    log: Logger;
    /**
     * Why Orchestra no longer manages an installation (uninstalled,
     * suspended), or null. Its deliveries are ignored instead of failing on a
     * token GitHub will not mint; installation events themselves always pass.
     */
    unmanaged?(installationId: number): Promise<string | null>;
    /** Told of every delivery ignored here (counted). */
    onIgnored?(why: "unhandled" | "unmanaged"): Promise<void>;
    /** Shown every handled delivery's payload before its handlers run (what it says of an issue's labels). */
    observe?(payload: unknown): Promise<void>;
  }) {
    const ignore = async (why: "unhandled" | "unmanaged"): Promise<DispatchResult> => {
      await deps.onIgnored?.(why);
      return "ignored";
    };
    return async (d: ClaimedDelivery): Promise<DispatchResult> => {
      const handlers = this.handlersFor(d.event, d.action);
      if (handlers.length === 0) return ignore("unhandled");
      const installationId = d.installationId === null ? null : Number(d.installationId);
      if (installationId !== null && !INSTALLATION_EVENTS.has(d.event) && deps.unmanaged) {
        const why = await deps.unmanaged(installationId);
        if (why !== null) {
          deps.log.info(
            { delivery: d.deliveryId, event: d.event, installationId, why },
            "delivery ignored: Orchestra does not manage this installation now",
          );
          return ignore("unmanaged");
        }
      }
      const payload = JSON.parse(d.payload) as EventContext["payload"];
      await deps.observe?.(payload);
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
      if (failures.length > 1)
        throw new AggregateError(
          failures,
          failures.map((f) => (f instanceof Error ? f.message : String(f))).join("; "),
        );
      return "done";
    };
  }
}
