/**
 * The dashboard under /dashboard: sign-in with the admin token, the fleet
 * overview, a page per task, and the operator's actions. Pages are rendered
 * on the server with no script; every action is a form post carrying the
 * session's CSRF token, answered with a redirect back (post/redirect/get).
 * Actions go through the same code as the API: task actions raise the
 * machine's command event, replays put a parked row back in its queue.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { TLSSocket } from "node:tls";
import { HttpError, REFUSAL_STATUS, type Request, type Router } from "../http/router.js";
import { Refusal } from "../refusal.js";
import { ADMIN_HINT, tooManyMessage } from "../http/throttle.js";
import { BodyTooLarge, readBody } from "../http/respond.js";
import { html, type Html } from "./html.js";
import { layout, type PageContext } from "./layout.js";
import {
  checkCsrf,
  COOKIE,
  csrfToken,
  isAdminToken,
  issueSession,
  readCookie,
  SESSION_MS,
  sessionCookie,
  verifySession,
  messageSeal,
  checkSeal,
  verifyLink,
  type Session,
} from "./session.js";
import { overviewPage } from "./overview.js";
import { taskPage } from "./task-page.js";
import { STYLE } from "./style.js";
import { fleetOverview, type FleetDeps } from "../views/fleet.js";
import { taskDetail, type TaskReadDeps } from "../views/task-detail.js";
import { callSeries, runsByClass } from "../views/activity.js";
import type { ViewsQueries } from "../views/queries.js";
import type { DashboardQueries } from "./queries.js";
import { taskAction, type TaskActionDeps } from "../human/actions.js";
import type { Inbox } from "../inbox/store.js";
import { githubStanding } from "../metrics/standing.js";
import type { FailureStreaks } from "../reconcile/failing.js";
import type { HostReport } from "../github/features.js";

export interface DashboardDeps extends FleetDeps, TaskReadDeps, TaskActionDeps {
  views: ViewsQueries;
  sessions: DashboardQueries;
  adminToken: string;
  inbox: Pick<Inbox, "list" | "replay" | "tally">;
  streaks: Pick<FailureStreaks, "current">;
  callHours: Parameters<typeof githubStanding>[0]["callHours"];
  rateLimits: Parameters<typeof githubStanding>[0]["rateLimits"];
  /** GitHub's web address for links: https://github.com, or the GHE host. */
  web: string;
  pokeInbox: () => void;
  pokeEffects: () => void;
  /** What is known of the GitHub host: its release and the features it lacks, with their fallbacks. */
  host: () => HostReport;
}

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const HOURS = 24;

function send(res: ServerResponse, status: number, page: Html, headers: Record<string, string> = {}): void {
  const body = page.text;
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(body);
}

function redirect(res: ServerResponse, to: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { location: to, "cache-control": "no-store", ...headers });
  res.end();
}

const secure = (req: IncomingMessage): boolean =>
  req.socket instanceof TLSSocket ||
  String(req.headers["x-forwarded-proto"] ?? "")
    .split(",")[0]
    ?.trim() === "https";

/** Where to go after signing in: a dashboard path of this service, never another site. */
export function safeNext(next: string | null): string {
  return next && /^\/dashboard(\/[A-Za-z0-9._~%/-]*)?(#[A-Za-z0-9_-]*)?$/.test(next) && !next.includes("//")
    ? next
    : "/dashboard";
}

/** No Origin header (older clients), or one naming this host; a malformed one is another site. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === "null") return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** The dashboard page a form was posted from (its Referer), else the fleet. */
function backTo(req: IncomingMessage): string {
  const referer = req.headers.referer;
  if (!referer) return "/dashboard";
  try {
    const url = new URL(referer);
    return safeNext(url.pathname + (url.pathname === "/dashboard" ? "#parked" : ""));
  } catch {
    return "/dashboard";
  }
}

/** A message carried through the redirect after an action, sealed so that only Orchestra's own words are shown. */
function withMessage(adminToken: string, path: string, kind: "notice" | "error", text: string): string {
  const [base, hash] = path.split("#");
  const said = text.slice(0, 500);
  const seal = messageSeal(adminToken, kind, said);
  return `${base}?${kind}=${encodeURIComponent(said)}&seal=${seal}${hash ? `#${hash}` : ""}`;
}

/** The message of this kind in the address, when its seal shows Orchestra wrote it; else nothing. */
function sealedMessage(adminToken: string, query: URLSearchParams, kind: "notice" | "error"): string | null {
  const text = query.get(kind);
  return text !== null && checkSeal(adminToken, kind, text, query.get("seal")) ? text : null;
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim()
    .toLowerCase();
  if (type !== "application/x-www-form-urlencoded")
    throw new HttpError(415, "send the form as application/x-www-form-urlencoded");
  try {
    return new URLSearchParams((await readBody(req, 16 * 1024)).toString("utf8"));
  } catch (err) {
    throw new HttpError(err instanceof BodyTooLarge ? 413 : 400, "the form could not be read");
  }
}

/**
 * What the sign-in page may say, by the code in its address (`?notice=signed-out`). Anyone can send a link to the
 * sign-in page, so it shows only Orchestra's own words: an unknown code shows nothing, and no text from the address.
 */
const SIGN_IN_NOTICES: Readonly<Record<string, string>> = {
  "signed-out": "Signed out.",
};

const SPENT_LINK =
  "That sign-in link does not work: each link signs in once, before it expires. Sign in with the admin token.";

export function signInNotice(code: string | null): string | null {
  return code !== null && Object.hasOwn(SIGN_IN_NOTICES, code) ? SIGN_IN_NOTICES[code]! : null;
}

function signInPage(ctx: PageContext, next: string, error: string | null): Html {
  return layout(
    { ...ctx, error },
    "Sign in",
    html`<form class="signin" method="post" action="/dashboard/sign-in">
  <h2>Sign in</h2>
  <p class="muted">The dashboard is for the operators of this Orchestra service. Sign in with its admin token.</p>
  <label for="token">Admin token</label>
  <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
  <input type="hidden" name="next" value="${next}">
  <button type="submit">Sign in</button>
</form>`,
  );
}

const WRONG_TOKEN = "That is not the admin token. It is ORCHESTRA_ADMIN_TOKEN in the service's environment.";

export function dashboardRoutes(router: Router, deps: DashboardDeps): void {
  const context = (req: Request, session: Session | null): PageContext => ({
    now: deps.clock.now(),
    csrf: session ? csrfToken(deps.adminToken, session) : null,
    web: deps.web,
    notice: sealedMessage(deps.adminToken, req.query, "notice"),
    error: sealedMessage(deps.adminToken, req.query, "error"),
  });
  /** The session the request's cookie proves, unless it was signed out (on any replica). */
  const sessionOf = async (req: IncomingMessage): Promise<Session | null> => {
    const session = verifySession(deps.adminToken, readCookie(req.headers.cookie, COOKIE), deps.clock.now());
    return session && !(await deps.sessions.isSignedOut(session.nonce)) ? session : null;
  };

  /** A page for a signed-in operator; others are sent to sign in. Errors become pages too. */
  const page = (handler: (r: Request, ctx: PageContext) => Promise<Html>) => async (r: Request) => {
    const session = await sessionOf(r.req);
    if (!session)
      return redirect(
        r.res,
        `/dashboard/sign-in?next=${encodeURIComponent(safeNext(r.req.url?.split("?")[0] ?? null))}`,
      );
    const ctx = context(r, session);
    try {
      send(r.res, 200, await handler(r, ctx));
    } catch (err) {
      if (!(err instanceof HttpError) && !(err instanceof Refusal)) throw err;
      send(
        r.res,
        err instanceof Refusal ? REFUSAL_STATUS[err.kind] : err.status,
        layout({ ...ctx, error: err.message }, "Error", html`<p><a href="/dashboard">Back to the fleet</a></p>`),
      );
    }
  };

  /**
   * A form post of a signed-in operator with the session's CSRF token; the handler answers where to go and what to say.
   */
  const action = (handler: (r: Request) => Promise<{ to: string; notice: string }>) => async (r: Request) => {
    const session = await sessionOf(r.req);
    if (!session) throw new HttpError(401, "not signed in: sign in at /dashboard/sign-in");
    if (!sameOrigin(r.req)) throw new HttpError(403, "the form was posted from another site");
    const form = await formBody(r.req);
    if (!checkCsrf(deps.adminToken, session, form.get("csrf")))
      throw new HttpError(403, "the form's CSRF token does not belong to this session; reload the page and try again");
    const back = backTo(r.req);
    try {
      const { to, notice } = await handler(r);
      redirect(r.res, withMessage(deps.adminToken, to, "notice", notice));
    } catch (err) {
      if (!(err instanceof HttpError) && !(err instanceof Refusal)) throw err;
      redirect(r.res, withMessage(deps.adminToken, back, "error", err.message));
    }
  };

  router.add("GET", "/dashboard/assets/style.css", ({ res }) => {
    res.writeHead(200, {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "max-age=300",
      "x-content-type-options": "nosniff",
    });
    res.end(STYLE);
  });

  /** The sign-in page's frame: no session, and no text from the address (signInNotice). */
  const signInContext = (r: Request): PageContext => ({
    ...context(r, null),
    notice: signInNotice(r.query.get("notice")),
    error: null,
  });

  router.add("GET", "/dashboard/sign-in", (r) => {
    send(r.res, 200, signInPage(signInContext(r), safeNext(r.query.get("next")), null));
  });

  router.add("POST", "/dashboard/sign-in", async (r) => {
    const form = await formBody(r.req);
    const next = safeNext(form.get("next"));
    if (!isAdminToken(form.get("token") ?? "", deps.adminToken)) {
      const wait = router.tokenFailed(r.req);
      if (wait === null) return send(r.res, 401, signInPage(signInContext(r), next, WRONG_TOKEN));
      return send(r.res, 429, signInPage(signInContext(r), next, tooManyMessage(wait, ADMIN_HINT)), {
        "retry-after": String(wait),
      });
    }
    const { value } = issueSession(deps.adminToken, deps.clock.now());
    redirect(r.res, next, {
      "set-cookie": sessionCookie(value, { secure: secure(r.req), maxAgeSeconds: SESSION_MS / 1000 }),
    });
  });

  // A link made with the admin token (session.ts signInLink) signs in once, without typing the token.
  router.add("GET", "/dashboard/sign-in/link", async (r) => {
    const now = deps.clock.now();
    const link = verifyLink(deps.adminToken, r.query.get("code"), now);
    if (!link || !(await deps.sessions.spendLink(link.nonce, new Date(link.expiresAt), now))) {
      const wait = link ? null : router.tokenFailed(r.req);
      if (wait === null) return send(r.res, 401, signInPage(signInContext(r), "/dashboard", SPENT_LINK));
      return send(r.res, 429, signInPage(signInContext(r), "/dashboard", tooManyMessage(wait, ADMIN_HINT)), {
        "retry-after": String(wait),
      });
    }
    const { value } = issueSession(deps.adminToken, now);
    redirect(r.res, "/dashboard", {
      "set-cookie": sessionCookie(value, { secure: secure(r.req), maxAgeSeconds: SESSION_MS / 1000 }),
    });
  });

  router.add("POST", "/dashboard/sign-out", async (r) => {
    const form = await formBody(r.req);
    const session = await sessionOf(r.req);
    if (session && !checkCsrf(deps.adminToken, session, form.get("csrf")))
      throw new HttpError(403, "the form's CSRF token does not belong to this session");
    // Clearing the cookie is not enough: a copy of it (another browser, a proxy's log) would still work until
    // its expiry. Every replica refuses a signed-out session.
    if (session) await deps.sessions.signOut(session.nonce, new Date(session.expiresAt), deps.clock.now());
    redirect(r.res, "/dashboard/sign-in?notice=signed-out", {
      "set-cookie": sessionCookie("", { secure: secure(r.req), maxAgeSeconds: 0 }),
    });
  });

  router.add(
    "GET",
    "/dashboard",
    page(async (_r, ctx) => {
      const [fleet, runs, github, deliveries, effects, failing] = await Promise.all([
        fleetOverview(deps),
        runsByClass(deps.views, ctx.now, HOURS),
        githubStanding(deps),
        deps.inbox.tally().then((t) => t.summary),
        deps.outbox.counts(),
        deps.streaks.current(),
      ]);
      return overviewPage(ctx, {
        fleet,
        runs,
        calls: callSeries(github.callsPerHour),
        health: { deliveries, effects, github, failing, host: deps.host() },
      });
    }),
  );

  router.add(
    "GET",
    "/dashboard/tasks/:id",
    page(async (r, ctx) => {
      const detail = await taskDetail(deps, r.params["id"]!);
      if (!detail) throw new HttpError(404, `There is no task ${r.params["id"]}.`);
      return taskPage(ctx, detail);
    }),
  );

  router.add(
    "POST",
    "/dashboard/tasks/:id/:action",
    action(async (r) => {
      const id = r.params["id"]!;
      const done = await taskAction(deps, id, r.params["action"]!, "dashboard");
      const to = `/dashboard/tasks/${encodeURIComponent(id)}`;
      return {
        to,
        notice:
          done.outcome === "applied"
            ? `${done.action}: done; the task is ${done.task.state ?? "gone"}.`
            : `${done.action}: nothing to change; the task is ${done.task.state ?? "gone"}.`,
      };
    }),
  );

  // Replays: a parked row goes back to its queue, as the API's replay does.
  const replays = [
    {
      path: "deliveries",
      what: "Delivery",
      replay: (id: string) => deps.inbox.replay(id, deps.clock.now()),
      poke: deps.pokeInbox,
    },
    {
      path: "effects",
      what: "Effect",
      replay: (id: string) => deps.outbox.replay(id, deps.clock.now()),
      poke: deps.pokeEffects,
    },
  ];
  for (const { path, what, replay, poke } of replays) {
    router.add(
      "POST",
      `/dashboard/${path}/:id/replay`,
      action(async (r) => {
        const id = r.params["id"]!;
        if (!(await replay(id)))
          throw new HttpError(
            409,
            `${what} ${id} is not parked (or does not exist); only parked ${path} can be replayed.`,
          );
        poke();
        return { to: backTo(r.req), notice: `${what} ${id} is queued again.` };
      }),
    );
  }
}
