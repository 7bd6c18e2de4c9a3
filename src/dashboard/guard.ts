/**
 * Who may see a dashboard page or post its forms: the session a request's cookie proves, the frame of its page,
 * and the two wrappers every route goes through (a page for a signed-in operator; a form post with the session's
 * CSRF token, answered with a redirect back).
 */
import type { IncomingMessage } from "node:http";
import { HttpError, REFUSAL_STATUS, type Request } from "../http/router.js";
import { Refusal } from "../refusal.js";
import { html, type Html } from "./html.js";
import { layout, type PageContext } from "./layout.js";
import { checkCsrf, COOKIE, csrfToken, readCookie, verifySession, type Session } from "./session.js";
import { backTo, formBody, redirect, safeNext, sameOrigin, sealedMessage, send, withMessage } from "./respond.js";
import type { DashboardDeps } from "./deps.js";

export function guards(deps: Pick<DashboardDeps, "clock" | "adminToken" | "web" | "sessions">) {
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
  return { context, sessionOf, page, action };
}

export type Guards = ReturnType<typeof guards>;
