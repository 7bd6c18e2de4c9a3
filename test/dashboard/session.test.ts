/** The dashboard's signed session cookie, CSRF tokens, and where sign-in may send you. */
import {
  checkCsrf,
  csrfToken,
  issueSession,
  readCookie,
  sessionCookie,
  signInLink,
  verifyLink,
  verifySession,
  LINK_MAX_MS,
} from "../../src/dashboard/session.js";
import { safeNext } from "../../src/dashboard/routes.js";

const TOKEN = "admin-token-0123456789";
const NOW = new Date("2026-12-01T08:00:00Z");
const { value, session } = issueSession(TOKEN, NOW, 3_600_000);
const [expires, nonce, mac] = value.split(".") as [string, string, string];

describe("verifySession", () => {
  test.each([
    ["the issued cookie, within its lifetime", TOKEN, value, NOW, true],
    ["one second before it expires", TOKEN, value, new Date(NOW.getTime() + 3_599_000), true],
    ["at its expiry", TOKEN, value, new Date(NOW.getTime() + 3_600_000), false],
    ["signed with another admin token (rotated)", "another-token", value, NOW, false],
    ["a later expiry with the old signature", TOKEN, `${Number(expires) + 1000}.${nonce}.${mac}`, NOW, false],
    [
      "another nonce with the old signature",
      TOKEN,
      `${expires}.${nonce[0] === "x" ? "y" : "x"}${nonce.slice(1)}.${mac}`,
      NOW,
      false,
    ],
    ["a truncated signature", TOKEN, `${expires}.${nonce}.${mac.slice(1)}`, NOW, false],
    ["no cookie", TOKEN, undefined, NOW, false],
    ["garbage", TOKEN, "1.2.3", NOW, false],
    ["an empty value (signed out)", TOKEN, "", NOW, false],
  ])("%s → %s", (_what, token, cookie, now, ok) => {
    expect(verifySession(token, cookie, now) !== null).toBe(ok);
  });

  test("a verified cookie gives back the session it was issued for", () => {
    expect(verifySession(TOKEN, value, NOW)).toEqual(session);
  });
});

describe("verifyLink", () => {
  const link = signInLink(TOKEN, NOW, 600_000);
  const [at, once, sig] = link.code.split(".") as [string, string, string];
  test.each([
    ["the link, within its lifetime", TOKEN, link.code, NOW, true],
    ["one second before it expires", TOKEN, link.code, new Date(NOW.getTime() + 599_000), true],
    ["at its expiry", TOKEN, link.code, new Date(NOW.getTime() + 600_000), false],
    ["signed with another admin token (rotated)", "another-token", link.code, NOW, false],
    ["a later expiry with the old signature", TOKEN, `${Number(at) + 1000}.${once}.${sig}`, NOW, false],
    ["a session cookie offered as a link", TOKEN, value, NOW, false],
    ["a truncated signature", TOKEN, `${at}.${once}.${sig.slice(1)}`, NOW, false],
    ["no code", TOKEN, null, NOW, false],
    ["garbage", TOKEN, "1.2.3", NOW, false],
  ])("%s → %s", (_what, token, code, now, ok) => {
    expect(verifyLink(token, code, now) !== null).toBe(ok);
  });

  test("a link is no session cookie, and it lasts LINK_MAX_MS at most", () => {
    expect(verifySession(TOKEN, link.code, NOW)).toBeNull();
    expect(verifyLink(TOKEN, link.code, NOW)).toEqual(link.session);
    const long = signInLink(TOKEN, NOW, 10 * LINK_MAX_MS);
    expect(long.session.expiresAt).toBe(NOW.getTime() + LINK_MAX_MS);
  });
});

describe("CSRF", () => {
  const other = issueSession(TOKEN, NOW).session;
  test.each([
    ["this session's token", csrfToken(TOKEN, session), true],
    ["another session's token", csrfToken(TOKEN, other), false],
    ["the token under another admin token", csrfToken("another-token", session), false],
    ["none", null, false],
    ["empty", "", false],
  ])("%s → %s", (_what, token, ok) => {
    expect(checkCsrf(TOKEN, session, token)).toBe(ok);
  });
});

test.each([
  [
    { secure: false, maxAgeSeconds: 43200 },
    "orchestra_session=v; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=43200",
  ],
  [
    { secure: true, maxAgeSeconds: 0 },
    "orchestra_session=v; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0; Secure",
  ],
])("sessionCookie(%j)", (opts, header) => {
  expect(sessionCookie("v", opts)).toBe(header);
});

test.each([
  ["a=1; orchestra_session=abc.def; b=2", "abc.def"],
  ["orchestra_session=x", "x"],
  ["other_orchestra_session=x", undefined],
  [undefined, undefined],
])("readCookie(%j)", (header, found) => {
  expect(readCookie(header, "orchestra_session")).toBe(found);
});

test.each([
  ["/dashboard", "/dashboard"],
  ["/dashboard/tasks/t-1", "/dashboard/tasks/t-1"],
  ["/dashboard#parked", "/dashboard#parked"],
  ["https://evil.example/dashboard", "/dashboard"],
  ["//evil.example/dashboard", "/dashboard"],
  ["/dashboard//evil.example", "/dashboard"],
  ["/dashboardx", "/dashboard"],
  ["/api/v1/tasks", "/dashboard"],
  ["/dashboard/tasks/<script>", "/dashboard"],
  [null, "/dashboard"],
])("safeNext(%j) → %j", (next, to) => {
  expect(safeNext(next)).toBe(to);
});
