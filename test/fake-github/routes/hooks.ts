/**
 * The App's webhook as GitHub keeps it (JWT routes): every delivery attempt
 * is one item of a log, listed newest first and paged by cursor, and a
 * redelivery sends the same body again — signed with the webhook secret,
 * with the same X-GitHub-Delivery guid — to the App's webhook URL, as a new
 * item of the log.
 *
 *   fake.setWebhookTarget(app.url + "/api/github/webhooks", app.secret);
 *   fake.state.hookDeliveries.push({ event: "issues", status: 502, payload });   // a delivery that never arrived
 *   await fake.state.hookDeliveries.send("issues", payload);                    // a delivery that did
 */
import { randomUUID } from "node:crypto";
import { webhookHeaders } from "../../support/webhooks.js";
import { ts } from "../json.js";
import { fail, notFound, type RouteContext, type RouteTable } from "../http.js";

export interface HookDelivery {
  id: number;
  guid: string;
  event: string;
  action: string | null;
  installationId: number | null;
  repositoryId: number | null;
  /** the App's answer; 0 when GitHub could not connect */
  status: number;
  deliveredAt: Date;
  redelivery: boolean;
  /** the exact body sent (so it can be sent again); null when unknown */
  body: string | null;
}

/** What a test registers: `payload` (object or exact body) fills in guid, action, installation and repository. */
export type NewHookDelivery = Partial<Omit<HookDelivery, "body">> & {
  event: string;
  status: number;
  payload?: Record<string, unknown> | string;
};

/** GitHub redelivers deliveries of the past 3 days. */
const REDELIVERY_WINDOW_MS = 3 * 24 * 3_600_000;
const CURSOR = /^v1_(\d+)$/;

export class HookDeliveries {
  /** every attempt, oldest first */
  readonly items: HookDelivery[] = [];
  /** where deliveries go: the App's webhook URL and secret (`fake.setWebhookTarget`) */
  target: { url: string; secret: string } | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private seq = 40_000_000_000;

  constructor(private readonly now: () => Date) {}

  /** Records attempts (they are not sent); like Array.push, answers the new length. */
  push(...records: NewHookDelivery[]): number {
    for (const r of records) this.record(r);
    return this.items.length;
  }

  record(r: NewHookDelivery): HookDelivery {
    const body = r.payload === undefined ? null : typeof r.payload === "string" ? r.payload : JSON.stringify(r.payload);
    const parsed = (body ? JSON.parse(body) : {}) as {
      action?: unknown;
      installation?: { id?: unknown };
      repository?: { id?: unknown };
    };
    const item: HookDelivery = {
      id: r.id ?? ++this.seq,
      guid: r.guid ?? randomUUID(),
      event: r.event,
      action: r.action !== undefined ? r.action : typeof parsed.action === "string" ? parsed.action : null,
      installationId:
        r.installationId !== undefined
          ? r.installationId
          : typeof parsed.installation?.id === "number"
            ? parsed.installation.id
            : null,
      repositoryId:
        r.repositoryId !== undefined
          ? r.repositoryId
          : typeof parsed.repository?.id === "number"
            ? parsed.repository.id
            : null,
      status: r.status,
      deliveredAt: r.deliveredAt ?? this.now(),
      redelivery: r.redelivery ?? false,
      body,
    };
    if (item.id > this.seq) this.seq = item.id;
    this.items.push(item);
    return item;
  }

  /** Delivers to the target as GitHub does and records the attempt (status 0 when nothing answered). */
  async send(
    event: string,
    payload: Record<string, unknown> | string,
    opts: { guid?: string; redelivery?: boolean } = {},
  ): Promise<HookDelivery> {
    if (!this.target) throw new Error("fake GitHub: no webhook target; call fake.setWebhookTarget(url, secret) first");
    const body = typeof payload === "string" ? payload : JSON.stringify(payload);
    const guid = opts.guid ?? randomUUID();
    let status: number;
    try {
      const res = await fetch(this.target.url, {
        method: "POST",
        headers: webhookHeaders(event, body, this.target.secret, guid),
        body,
      });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 0;
    }
    return this.record({ event, status, payload: body, guid, redelivery: opts.redelivery ?? false });
  }

  /** Attempts of one guid, oldest first. */
  of(guid: string): HookDelivery[] {
    return this.items.filter((i) => i.guid === guid);
  }

  /** Waits until every redelivery under way has been answered and recorded. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** Sends an item again after the current answer, as GitHub does (asynchronously). */
  redeliver(item: HookDelivery): void {
    const p = new Promise((resolve) => setImmediate(resolve))
      .then(() => this.send(item.event, item.body!, { guid: item.guid, redelivery: true }))
      .catch(() => undefined)
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }
}

function itemJson(i: HookDelivery): Record<string, unknown> {
  return {
    id: i.id,
    guid: i.guid,
    delivered_at: ts(i.deliveredAt),
    redelivery: i.redelivery,
    duration: 0.05,
    status:
      i.status === 0
        ? "failed to connect"
        : i.status >= 200 && i.status < 300
          ? "OK"
          : `Invalid HTTP Response: ${i.status}`,
    status_code: i.status,
    event: i.event,
    action: i.action,
    installation_id: i.installationId,
    repository_id: i.repositoryId,
    throttled_at: null,
  };
}

function deliveries(ctx: RouteContext): HookDeliveries {
  return ctx.state.hookDeliveries;
}

export const hookRoutes: RouteTable = {
  // Newest first; the cursor names the first item of a page; Link rel="next" carries the next one.
  "GET /app/hook/deliveries": (ctx) => {
    const perPage = Math.min(Math.max(Number(ctx.query.get("per_page") ?? 30) || 30, 1), 100);
    const cursor = ctx.query.get("cursor");
    const status = ctx.query.get("status");
    let items = [...deliveries(ctx).items].sort((a, b) => b.id - a.id);
    if (status === "success") items = items.filter((i) => i.status >= 200 && i.status < 400);
    if (status === "failure") items = items.filter((i) => !(i.status >= 200 && i.status < 400));
    if (cursor !== null) {
      const m = CURSOR.exec(cursor);
      if (!m) throw fail(ctx, 400, "Invalid cursor");
      items = items.filter((i) => i.id <= Number(m[1]));
    }
    const page = items.slice(0, perPage);
    const next = items[perPage];
    const headers: Record<string, string> = {};
    if (next) {
      const u = new URL(ctx.url);
      u.searchParams.set("per_page", String(perPage));
      u.searchParams.set("cursor", `v1_${next.id}`);
      headers.link = `<${u.toString()}>; rel="next"`;
    }
    return { status: 200, body: page.map(itemJson), headers };
  },

  "POST /app/hook/deliveries/{delivery_id}/attempts": (ctx) => {
    const store = deliveries(ctx);
    const item = store.items.find((i) => i.id === ctx.int("delivery_id"));
    if (!item) throw notFound(ctx);
    if (ctx.state.now().getTime() - item.deliveredAt.getTime() > REDELIVERY_WINDOW_MS)
      throw fail(ctx, 422, "This delivery is too old to redeliver");
    if (item.body === null) {
      ctx.violation(
        `redelivery of ${item.guid}: the test registered it without a payload, so the fake cannot send it again`,
      );
      throw fail(ctx, 422, "Delivery has no payload");
    }
    if (!store.target) ctx.violation(`redelivery of ${item.guid}: no webhook target (fake.setWebhookTarget)`);
    else store.redeliver(item);
    return { status: 202, body: {} };
  },
};
