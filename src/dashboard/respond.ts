/**
 * How the dashboard answers a browser and reads what it sends: pages with their security headers, redirects,
 * where a redirect may go, messages sealed through a redirect, and form bodies.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { TLSSocket } from "node:tls";
import { HttpError } from "../http/router.js";
import { BodyTooLarge, readBody } from "../http/respond.js";
import type { Html } from "./html.js";
import { checkSeal, messageSeal } from "./session.js";

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function send(res: ServerResponse, status: number, page: Html, headers: Record<string, string> = {}): void {
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

export function redirect(res: ServerResponse, to: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { location: to, "cache-control": "no-store", ...headers });
  res.end();
}

export const secure = (req: IncomingMessage): boolean =>
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
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === "null") return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** The dashboard page a form was posted from (its Referer), else the fleet. */
export function backTo(req: IncomingMessage): string {
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
export function withMessage(adminToken: string, path: string, kind: "notice" | "error", text: string): string {
  const [base, hash] = path.split("#");
  const said = text.slice(0, 500);
  const seal = messageSeal(adminToken, kind, said);
  return `${base}?${kind}=${encodeURIComponent(said)}&seal=${seal}${hash ? `#${hash}` : ""}`;
}

/** The message of this kind in the address, when its seal shows Orchestra wrote it; else nothing. */
export function sealedMessage(adminToken: string, query: URLSearchParams, kind: "notice" | "error"): string | null {
  const text = query.get(kind);
  return text !== null && checkSeal(adminToken, kind, text, query.get("seal")) ? text : null;
}

export async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
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
