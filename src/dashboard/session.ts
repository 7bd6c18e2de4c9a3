/**
 * Dashboard sign-in without server-side session state, so every replica
 * accepts the same cookie: the cookie is an expiry and a random nonce,
 * signed with a key derived from the admin token. Changing the admin token
 * signs every session out; signing out records the one nonce in the database
 * until its expiry (queries.ts), so a copy of that cookie is refused too.
 * The CSRF token of a session is derived from its nonce with the same key, so
 * a form can only be posted by a page that was rendered for that session.
 * A sign-in link carries the same kind of signed expiry and nonce, and is
 * taken once: its nonce is recorded as spent the way a signed-out one is.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const COOKIE = "orchestra_session";
export const SESSION_MS = 12 * 3_600_000;

export interface Session {
  nonce: string;
  expiresAt: number;
}

const keyOf = (adminToken: string): Buffer =>
  createHash("sha256").update(`orchestra dashboard session\0${adminToken}`).digest();
const mac = (key: Buffer, text: string): string => createHmac("sha256", key).update(text).digest("base64url");

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The constant-time comparison of a typed token with the admin token. */
export function isAdminToken(typed: string, adminToken: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(typed), digest(adminToken));
}

export function issueSession(adminToken: string, now: Date, ttlMs = SESSION_MS): { value: string; session: Session } {
  const session = { nonce: randomBytes(18).toString("base64url"), expiresAt: now.getTime() + ttlMs };
  const body = `${session.expiresAt}.${session.nonce}`;
  return { value: `${body}.${mac(keyOf(adminToken), body)}`, session };
}

/** The session a cookie value proves, or null (malformed, forged, signed with another admin token, or expired). */
export function verifySession(adminToken: string, value: string | undefined, now: Date): Session | null {
  if (!value) return null;
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!m) return null;
  if (!same(mac(keyOf(adminToken), `${m[1]}.${m[2]}`), m[3]!)) return null;
  const expiresAt = Number(m[1]);
  return expiresAt > now.getTime() ? { nonce: m[2]!, expiresAt } : null;
}

/** How long a sign-in link may be opened, at most (`signInLink`). */
export const LINK_MAX_MS = 24 * 3_600_000;

/**
 * A sign-in link's code: an expiry and a nonce signed like a session, but under a purpose of its own, so a session
 * cookie is no link and a link is no cookie. Whoever holds the admin token can make one without asking the service
 * (the demo prints one); the service takes it once (the nonce is recorded as spent until its expiry) and answers a
 * session cookie.
 */
export function signInLink(adminToken: string, now: Date, ttlMs: number): { code: string; session: Session } {
  const expiresAt = now.getTime() + Math.min(ttlMs, LINK_MAX_MS);
  const session = { nonce: randomBytes(18).toString("base64url"), expiresAt };
  const body = `${session.expiresAt}.${session.nonce}`;
  return { code: `${body}.${mac(keyOf(adminToken), `link.${body}`)}`, session };
}

/**
 * The link a code proves, or null: malformed, forged, signed with another admin token, expired, or made to last
 * longer than LINK_MAX_MS from now.
 */
export function verifyLink(adminToken: string, code: string | null, now: Date): Session | null {
  const m = code === null ? null : /^(\d{1,15})\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/.exec(code);
  if (!m) return null;
  if (!same(mac(keyOf(adminToken), `link.${m[1]}.${m[2]}`), m[3]!)) return null;
  const expiresAt = Number(m[1]);
  return expiresAt > now.getTime() && expiresAt <= now.getTime() + LINK_MAX_MS ? { nonce: m[2]!, expiresAt } : null;
}

export function csrfToken(adminToken: string, session: Session): string {
  return mac(keyOf(adminToken), `csrf.${session.nonce}`);
}

export function checkCsrf(adminToken: string, session: Session, token: string | null): boolean {
  return token !== null && same(csrfToken(adminToken, session), token);
}

/**
 * The seal on a message carried through a redirect (`?notice=…&seal=…`): a page shows a notice or error from its
 * address only when Orchestra wrote it, so a link someone else crafted cannot put words on an operator's page.
 */
export function messageSeal(adminToken: string, kind: "notice" | "error", text: string): string {
  return mac(keyOf(adminToken), `message.${kind}.${text}`).slice(0, 22);
}

export function checkSeal(adminToken: string, kind: "notice" | "error", text: string, seal: string | null): boolean {
  return seal !== null && same(messageSeal(adminToken, kind, text), seal);
}

/** The Set-Cookie value: HttpOnly, SameSite=Strict, scoped to the dashboard, Secure when served over HTTPS. */
export function sessionCookie(value: string, opts: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${COOKIE}=${value}`,
    "Path=/dashboard",
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${opts.maxAgeSeconds}`,
    ...(opts.secure ? ["Secure"] : []),
  ].join("; ");
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
