/**
 * Signing in and out: with the admin token, or once with a link made with it (session.ts signInLink). Signing out
 * is refused by every replica, not only cleared from the browser.
 */
import { HttpError, type Request, type Router } from "../http/router.js";
import { ADMIN_HINT, tooManyMessage } from "../http/throttle.js";
import { html, type Html } from "./html.js";
import { layout, type PageContext } from "./layout.js";
import { checkCsrf, isAdminToken, issueSession, SESSION_MS, sessionCookie, verifyLink } from "./session.js";
import { formBody, redirect, safeNext, secure, send } from "./respond.js";
import type { Guards } from "./guard.js";
import type { DashboardDeps } from "./deps.js";

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

export function signInRoutes(
  router: Router,
  deps: Pick<DashboardDeps, "clock" | "adminToken" | "sessions">,
  { context, sessionOf }: Guards,
): void {
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
}
