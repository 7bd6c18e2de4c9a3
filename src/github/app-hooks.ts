/**
 * The App's own webhook, read and driven as the App (its JWT, not an
 * installation token): the deliveries GitHub made, each attempt one item,
 * and asking GitHub to deliver one again. Failures map like every other
 * GitHub call (errors.ts): a 5xx or a timeout is an error, never an empty
 * listing.
 */
import type { ProbotOctokit } from "probot";
import { call } from "./errors.js";
import { GitHubError } from "./port.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

/** One delivery attempt as GitHub lists it. */
export interface HookDelivery {
  /** The attempt's id; newer attempts have larger ids. Redeliver by this id. */
  id: number;
  /** X-GitHub-Delivery: the same for the first attempt and every redelivery. */
  guid: string;
  deliveredAt: Date;
  redelivery: boolean;
  /** The App's answer; 0 when GitHub could not connect. */
  statusCode: number;
  event: string;
  action: string | null;
  installationId: number | null;
}

/** The App's webhook; `next` is the cursor of the next (older) page, null at the end. */
export interface AppHooks {
  listDeliveries(cursor?: string | null): Promise<{ items: HookDelivery[]; next: string | null }>;
  redeliver(id: number): Promise<void>;
}

/** The App's installations (all pages), and which are suspended. */
export type AppInstallations = () => Promise<Array<{ id: number; suspended: boolean }>>;

export function octokitAppInstallations(app: () => Promise<Octokit>, timeoutMs = 30_000): AppInstallations {
  return async () => {
    const octokit = await app();
    const items = await call("list installations", () =>
      octokit.paginate(octokit.rest.apps.listInstallations, {
        per_page: 100,
        request: { signal: AbortSignal.timeout(timeoutMs) },
      }),
    );
    return (items as Array<{ id: number; suspended_at?: string | null }>).map((i) => ({
      id: i.id,
      suspended: Boolean(i.suspended_at),
    }));
  };
}

export interface AppHooksOptions {
  /** Items per page (GitHub's maximum is 100). */
  perPage?: number;
  /** Each call gives up after this long (default 30 s). */
  timeoutMs?: number;
}

interface RawItem {
  id?: unknown;
  guid?: unknown;
  delivered_at?: unknown;
  redelivery?: unknown;
  status_code?: unknown;
  event?: unknown;
  action?: unknown;
  installation_id?: unknown;
}

/** A listing item, or an error: half-understood evidence is no evidence. */
export function toHookDelivery(raw: RawItem): HookDelivery {
  const deliveredAt = typeof raw.delivered_at === "string" ? new Date(raw.delivered_at) : new Date(NaN);
  if (
    typeof raw.id !== "number" ||
    typeof raw.guid !== "string" ||
    !raw.guid ||
    typeof raw.status_code !== "number" ||
    Number.isNaN(deliveredAt.getTime())
  ) {
    throw new GitHubError(
      "list webhook deliveries",
      undefined,
      `a delivery GitHub listed is not understood: ${JSON.stringify(raw).slice(0, 200)}`,
      false,
    );
  }
  return {
    id: raw.id,
    guid: raw.guid,
    deliveredAt,
    redelivery: raw.redelivery === true,
    statusCode: raw.status_code,
    event: typeof raw.event === "string" ? raw.event : "",
    action: typeof raw.action === "string" ? raw.action : null,
    installationId: typeof raw.installation_id === "number" ? raw.installation_id : null,
  };
}

/** The `cursor` of the Link header's rel="next" URL; null when there is no next page. */
export function nextCursor(link: string | undefined): string | null {
  if (!link) return null;
  for (const part of link.split(",")) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (!m) continue;
    const cursor = new URL(m[1]!, "http://x").searchParams.get("cursor");
    if (!cursor)
      throw new GitHubError("list webhook deliveries", undefined, `a next page without a cursor: ${m[1]}`, false);
    return cursor;
  }
  return null;
}

/** `app` gives the App-level (JWT) octokit: Probot's `auth()` without an installation. */
export function octokitAppHooks(app: () => Promise<Octokit>, opts: AppHooksOptions = {}): AppHooks {
  const perPage = opts.perPage ?? 100;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return {
    async listDeliveries(cursor) {
      const octokit = await app();
      const res = await call("list webhook deliveries", () =>
        octokit.rest.apps.listWebhookDeliveries({
          per_page: perPage,
          ...(cursor ? { cursor } : {}),
          request: { signal: AbortSignal.timeout(timeoutMs) },
        }),
      );
      if (!Array.isArray(res.data))
        throw new GitHubError("list webhook deliveries", res.status, "the answer is not a list", false);
      const next = nextCursor(res.headers.link);
      if (next !== null && next === cursor)
        throw new GitHubError("list webhook deliveries", res.status, "a next page with the same cursor", false);
      return { items: (res.data as RawItem[]).map(toHookDelivery), next };
    },
    async redeliver(id) {
      const octokit = await app();
      // A write: never retried blindly (the caller records that it asked).
      await call("redeliver webhook delivery", () =>
        octokit.rest.apps.redeliverWebhookDelivery({
          delivery_id: id,
          request: { retries: 0, signal: AbortSignal.timeout(timeoutMs) },
        }),
      );
    },
  };
}
