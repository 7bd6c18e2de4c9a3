/**
 * `orchestra doctor`'s GitHub checks, made as the App itself (its JWT, like
 * the service's delivery sweep): `GET /app`, `GET /app/installations` (every
 * page) and `GET /app/hook/deliveries` (recent pages); the host's own
 * check (host.ts) reads `GET /meta` as an installation. A failed call is
 * reported as what it was — refused credentials, a missing endpoint, GitHub's
 * own 5xx, or no answer at all — never as "not found" or "nothing there".
 */
import { ProbotOctokit } from "probot";
import { nextCursor, toHookDelivery, type HookDelivery } from "../../github/app-hooks.js";
import { GitHubError } from "../../github/port.js";
import type { Check } from "./check.js";
import type { Access, InstallationFacts } from "./compare.js";

/** Each call gives up after this long: a silent connection is reported, not waited on. */
const TIMEOUT_MS = 10_000;

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

// Retries off: doctor reports what GitHub answered now (the function form is the one that takes effect).
const DoctorOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));
type Octokit = InstanceType<typeof ProbotOctokit>;

export interface AppTarget {
  appId: number;
  privateKey: string;
  /** REST base URL; undefined is api.github.com. */
  baseUrl: string | undefined;
}

const apiOf = (t: Pick<AppTarget, "baseUrl">): string => t.baseUrl ?? "https://api.github.com";

export function appOctokit(t: AppTarget): Octokit {
  return new DoctorOctokit({
    auth: { appId: t.appId, privateKey: t.privateKey },
    ...(t.baseUrl ? { baseUrl: t.baseUrl } : {}),
    log: quiet,
  });
}

/** As one installation, as the service reads GitHub; without one, unauthenticated (where GitHub allows it). */
export function installationOctokit(t: AppTarget, installationId: number | null): Octokit {
  return new DoctorOctokit({
    ...(installationId === null ? {} : { auth: { appId: t.appId, privateKey: t.privateKey, installationId } }),
    ...(t.baseUrl ? { baseUrl: t.baseUrl } : {}),
    log: quiet,
  });
}

export const request = () => ({ request: { signal: AbortSignal.timeout(TIMEOUT_MS) } });

interface RequestErrorLike {
  status?: number;
  message?: string;
  request?: unknown;
  response?: { status: number; headers?: Record<string, string | undefined>; data?: unknown };
  cause?: unknown;
}

/** Why a call failed, in the operator's terms, and what to do; `notFound` is what a 404 means for this call. */
export function githubProblem(
  err: unknown,
  call: string,
  t: AppTarget,
  notFound: { detail: string; fix: string },
): { detail: string; fix: string } {
  const e = (err ?? {}) as RequestErrorLike;
  const again = "then run orchestra doctor again";
  if (e.request === undefined && e.response === undefined) {
    // Failed before anything was sent: the JWT could not be made from the key.
    return {
      detail: `${call} was not sent: ${e.message ?? String(err)}`,
      fix:
        `PRIVATE_KEY (or the file PRIVATE_KEY_PATH names) must be the App's ` +
        `PEM private key as downloaded from its settings page; ${again}`,
    };
  }
  if (e.response === undefined) {
    const cause = e.cause as { name?: string; message?: string } | undefined;
    const why =
      cause?.name === "TimeoutError"
        ? `no answer within ${TIMEOUT_MS / 1000} s`
        : `no answer: ${e.message ?? "the connection failed"}`;
    return {
      detail: `${call} at ${apiOf(t)}: ${why}`,
      fix:
        `check GHE_HOST and GHE_PROTOCOL (unset both for github.com), ` +
        `and DNS, proxy and firewall between this host and GitHub; ${again}`,
    };
  }
  const status = e.response.status;
  const data = e.response.data as { message?: unknown } | undefined;
  const message = typeof data?.message === "string" ? data.message : (e.message ?? "");
  const answered = `${call} answered ${status}${message ? ` (${message})` : ""}`;
  if (status === 401) {
    return {
      detail: `GitHub refused the App's credentials: ${answered}`,
      fix:
        `APP_ID (${t.appId}) must be the App's id and the private key one generated ` +
        `for that App on its settings page (a deleted key is refused); this machine's ` +
        `clock must be right to within a minute, since the JWT carries the time; ${again}`,
    };
  }
  if (status === 404) return { detail: `${answered}: ${notFound.detail}`, fix: notFound.fix };
  if (status === 403 || status === 429) {
    const headers = e.response.headers ?? {};
    if (headers["x-ratelimit-remaining"] === "0" || headers["retry-after"] !== undefined) {
      const resets = headers["x-ratelimit-reset"]
        ? ` (${new Date(Number(headers["x-ratelimit-reset"]) * 1000).toISOString()})`
        : "";
      return {
        detail: `rate limited: ${answered}`,
        fix: `wait until the limit resets${resets}; ${again}`,
      };
    }
    return {
      detail: `GitHub refused the request: ${answered}`,
      fix: `an IP allow list on the organization or enterprise must include this host; ${again}`,
    };
  }
  if (status >= 500) {
    return {
      detail: `GitHub failed: ${answered}; that is GitHub's trouble, not a sign that anything is missing`,
      fix:
        `try again in a few minutes; see https://www.githubstatus.com (or the health of your GitHub ` +
        `Enterprise Server)`,
    };
  }
  return { detail: answered, fix: `see GitHub's message; ${again}` };
}

export interface AppInfo {
  slug: string;
  owner: string;
  access: Access;
  /** The App's "Permissions & events" settings page. */
  settingsUrl: string;
}

/** GET /app: the App exists at this host and its credentials are accepted; its permissions and events. */
export async function appCheck(octokit: Octokit, t: AppTarget): Promise<{ check: Check; app: AppInfo | null }> {
  const name = "github";
  try {
    const { data } = await octokit.request("GET /app", request());
    const app = data as {
      slug?: string;
      name: string;
      html_url: string;
      owner: { login?: string; type?: string } | null;
      permissions?: Record<string, string | undefined>;
      events?: string[];
    };
    const slug = app.slug ?? app.name;
    const owner = app.owner?.login ?? "";
    const origin = new URL(app.html_url).origin;
    const settingsUrl =
      app.owner?.type === "Organization"
        ? `${origin}/organizations/${owner}/settings/apps/${slug}/permissions`
        : `${origin}/settings/apps/${slug}/permissions`;
    const permissions = Object.fromEntries(
      Object.entries(app.permissions ?? {}).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    return {
      check: {
        name,
        status: "ok",
        detail: `${apiOf(t)} accepts the App's credentials: ${slug} (id ${t.appId}), owned by ${owner || "?"}`,
      },
      app: { slug, owner, settingsUrl, access: { permissions, events: app.events ?? [] } },
    };
  } catch (err) {
    const p = githubProblem(err, "GET /app", t, {
      detail: `no GitHub REST API at ${apiOf(t)}`,
      fix:
        `GHE_HOST must name your GitHub Enterprise Server host (its API is at /api/v3), ` +
        `GHE_PROTOCOL http or https; unset both for github.com; then run orchestra doctor again`,
    });
    return { check: { name, status: "fail", ...p }, app: null };
  }
}

/** GET /app/installations, every page. */
export async function listInstallations(octokit: Octokit, t: AppTarget): Promise<InstallationFacts[] | Check> {
  try {
    const items = (await octokit.paginate("GET /app/installations", { per_page: 100, ...request() })) as Array<{
      id: number;
      account: { login?: string; slug?: string } | null;
      html_url: string;
      suspended_at?: string | null;
      permissions?: Record<string, string | undefined>;
      events?: string[];
    }>;
    return items.map((i) => ({
      id: i.id,
      account: i.account?.login ?? i.account?.slug ?? `installation ${i.id}`,
      htmlUrl: i.html_url,
      suspended: Boolean(i.suspended_at),
      access: {
        permissions: Object.fromEntries(
          Object.entries(i.permissions ?? {}).filter((e): e is [string, string] => typeof e[1] === "string"),
        ),
        events: i.events ?? [],
      },
    }));
  } catch (err) {
    const p = githubProblem(err, "GET /app/installations", t, {
      detail: "GitHub lists no installations endpoint here",
      fix: "check GHE_HOST; then run orchestra doctor again",
    });
    return { name: "installations", status: "fail", ...p };
  }
}

/** GET /app/hook/deliveries, newest first, until an attempt older than `since` or `maxPages` pages. */
export async function readDeliveries(
  octokit: Octokit,
  t: AppTarget,
  since: Date,
  maxPages = 10,
): Promise<{ items: HookDelivery[]; complete: boolean } | Check> {
  const items: HookDelivery[] = [];
  let cursor: string | null = null;
  try {
    for (let page = 0; page < maxPages; page++) {
      const res = await octokit.request("GET /app/hook/deliveries", {
        per_page: 100,
        ...(cursor ? { cursor } : {}),
        ...request(),
      });
      const batch = (res.data as Array<Parameters<typeof toHookDelivery>[0]>).map(toHookDelivery);
      items.push(...batch);
      cursor = nextCursor(res.headers.link);
      if (cursor === null || batch.some((d) => d.deliveredAt < since)) return { items, complete: true };
    }
    return { items, complete: false };
  } catch (err) {
    if (err instanceof GitHubError)
      return {
        name: "webhook deliveries",
        status: "fail",
        detail: `GitHub's answer is not understood: ${err.message}`,
        fix: "run orchestra doctor again; if it persists, report it with the answer above",
      };
    const p = githubProblem(err, "GET /app/hook/deliveries", t, {
      detail: "GitHub keeps no delivery log for this App",
      fix:
        "the App needs an active webhook: in its settings, tick Active under Webhook and set the URL to " +
        "https://<public host>/api/github/webhooks; then run orchestra doctor again",
    });
    return { name: "webhook deliveries", status: "fail", ...p };
  }
}
