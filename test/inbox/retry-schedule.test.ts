/**
 * The retry schedule of deliveries and effects, and the one classifier that
 * feeds it: an outage is outlasted, a deterministic failure parks quickly.
 */
import { z } from "zod";
import {
  backoffMs,
  DEFAULT_RETRY,
  durationText,
  retryDecision,
  type FailureClass,
  type RetryDecision,
} from "../../src/retry/schedule.js";
import { failureOf, toGitHubError } from "../../src/github/errors.js";
import { windowFromOf, pushError } from "../../src/store/error-ring.js";
import { mulberry32 } from "../support/random.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = new Date("2026-03-01T10:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const mid = () => 0.5; // no jitter: the base delay exactly

type Row = [
  name: string,
  klass: FailureClass,
  attempts: number,
  triedMs: number,
  retryAfterMs: number | undefined,
  expected: { retryInMs: number } | { park: RegExp },
];

describe("retryDecision", () => {
  test.each<Row>([
    ["5xx, first failure: the base delay", "github-5xx", 1, 0, undefined, { retryInMs: 2_000 }],
    ["5xx, attempt 5: doubling", "github-5xx", 5, 60_000, undefined, { retryInMs: 32_000 }],
    ["5xx, attempt 12: at the 10 min cap", "github-5xx", 12, 1 * HOUR, undefined, { retryInMs: 10 * MIN }],
    ["5xx at 5 h 59 min: still retrying", "github-5xx", 40, 6 * HOUR - MIN, undefined, { retryInMs: 10 * MIN }],
    [
      "5xx after the 6 h window: parked, saying for how long",
      "github-5xx",
      41,
      6 * HOUR + 4 * MIN,
      undefined,
      { park: /^GitHub server errors \(5xx\) for 6 h 4 min: 41 attempts, and the retry window is 6 h$/ },
    ],
    ["timeout / network error: retried like a 5xx", "network", 3, 10_000, undefined, { retryInMs: 8_000 }],
    [
      "timeout after the window: parked as no answer",
      "network",
      44,
      7 * HOUR,
      undefined,
      { park: /^no answer \(timeouts or network errors\) for 7 h: 44 attempts/ },
    ],
    ["rate limit with retry-after later than the backoff: honoured", "rate-limit", 1, 0, 60_000, { retryInMs: 60_000 }],
    ["rate limit reset an hour away: honoured beyond the cap", "rate-limit", 2, 5 * MIN, HOUR, { retryInMs: HOUR }],
    [
      "rate limit with retry-after sooner than the backoff: the backoff",
      "rate-limit",
      8,
      HOUR,
      1_000,
      { retryInMs: 256_000 },
    ],
    [
      "rate limit after the window: parked",
      "rate-limit",
      30,
      6 * HOUR,
      60_000,
      { park: /^GitHub rate limits for 6 h/ },
    ],
    ["deterministic (404), first attempt: retried soon", "deterministic", 1, 0, undefined, { retryInMs: 2_000 }],
    ["deterministic (422), attempt 4: retried once more", "deterministic", 4, 14_000, undefined, { retryInMs: 16_000 }],
    [
      "deterministic (validation error), attempt 5: parked quickly",
      "deterministic",
      5,
      30_000,
      undefined,
      { park: /^a failure that retrying does not fix .*: 5 attempts over 30 s$/ },
    ],
    [
      "deterministic after an outage's attempts: parked at once",
      "deterministic",
      20,
      2 * HOUR,
      undefined,
      { park: /: 20 attempts over 2 h$/ },
    ],
  ])("%s", (_name, klass, attempts, triedMs, retryAfterMs, expected) => {
    const now = at(triedMs);
    const d = retryDecision({
      failure: { class: klass, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
      attempts,
      firstFailedAt: attempts === 1 ? null : T0,
      now,
      policy: DEFAULT_RETRY,
      random: mid,
    });
    expect(d.firstFailedAt).toEqual(attempts === 1 ? now : T0);
    if ("retryInMs" in expected) {
      expect(d).not.toHaveProperty("park");
      expect((d as { retryAt: Date }).retryAt.getTime() - now.getTime()).toBe(expected.retryInMs);
    } else {
      expect(d).toMatchObject({ park: true, why: expect.stringMatching(expected.park) });
    }
  });

  test("the window is configurable", () => {
    const policy = { ...DEFAULT_RETRY, windowMs: 1 * HOUR };
    const input = { failure: { class: "github-5xx" as const }, attempts: 15, firstFailedAt: T0, policy, random: mid };
    expect(retryDecision({ ...input, now: at(HOUR - 1) })).not.toHaveProperty("park");
    expect(retryDecision({ ...input, now: at(HOUR) })).toMatchObject({
      park: true,
      why: expect.stringContaining("the retry window is 1 h"),
    });
  });

  test("a window start in the future (clocks of two replicas apart) counts as now", () => {
    const d = retryDecision({
      failure: { class: "github-5xx" },
      attempts: 2,
      firstFailedAt: at(5 * MIN),
      now: T0,
      policy: DEFAULT_RETRY,
      random: mid,
    });
    expect(d.firstFailedAt).toEqual(T0);
  });

  test("a 6 h outage with jitter: never parked inside the window, attempts at most 10 min apart, parked soon after", () => {
    for (const seed of [1, 2, 3, 42]) {
      const random = mulberry32(seed);
      let now = T0;
      let firstFailedAt: Date | null = null;
      let attempts = 0;
      let d: RetryDecision;
      const gaps: number[] = [];
      for (;;) {
        attempts++;
        d = retryDecision({
          failure: { class: "github-5xx" },
          attempts,
          firstFailedAt,
          now,
          policy: DEFAULT_RETRY,
          random,
        });
        firstFailedAt = d.firstFailedAt;
        if ("park" in d) break;
        gaps.push(d.retryAt.getTime() - now.getTime());
        now = d.retryAt;
      }
      const parkedAfter = now.getTime() - T0.getTime();
      expect(parkedAfter).toBeGreaterThanOrEqual(6 * HOUR);
      expect(parkedAfter).toBeLessThan(6 * HOUR + 10 * MIN);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(10 * MIN);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_500);
      expect(attempts).toBeGreaterThan(36); // at least one attempt per 10 min for 6 h
    }
  });
});

describe("backoffMs", () => {
  test.each([
    [1, 0, 1_500],
    [1, 1, 2_500],
    [3, 0.5, 8_000],
    [10, 0, 450_000],
    [10, 0.999, 600_000], // the jitter never lifts a delay above the cap
    [50, 1, 600_000],
  ])("attempt %i, jitter draw %d → %i ms", (attempts, draw, ms) => {
    expect(backoffMs(attempts, DEFAULT_RETRY, () => draw)).toBe(ms);
  });
});

describe("durationText", () => {
  test.each([
    [0, "0 s"],
    [40_000, "40 s"],
    [14 * MIN, "14 min"],
    [6 * HOUR, "6 h"],
    [6 * HOUR + 2 * MIN + 10_000, "6 h 2 min"],
  ])("%i ms → %s", (ms, text) => expect(durationText(ms)).toBe(text));
});

/** An octokit RequestError as it reaches the port. */
const requestError = (status: number | undefined, message: string, headers: Record<string, string> = {}) =>
  toGitHubError("op", { status, message, response: status === undefined ? undefined : { headers, data: { message } } });
const coded = (code: string, name = "Error") => Object.assign(new Error(code), { code, name });

describe("failureOf: the one classifier", () => {
  // GitHub's answers carry its clock in their Date header; a reset is measured against it.
  const now = Date.parse("2026-06-01T12:00:00Z");
  const date = new Date(now).toUTCString();
  test.each<[string, unknown, FailureClass]>([
    ["GitHub 502", requestError(502, "Bad Gateway"), "github-5xx"],
    ["GitHub 503", requestError(503, "Service Unavailable"), "github-5xx"],
    ["GitHub 500 (octokit's code for a lost connection)", requestError(500, "fetch failed"), "github-5xx"],
    ["no status at all", requestError(undefined, "socket hang up"), "network"],
    [
      "403 secondary rate limit (retry-after)",
      requestError(403, "You have exceeded a secondary rate limit", { "retry-after": "30" }),
      "rate-limit",
    ],
    [
      "403 primary rate limit (remaining 0)",
      requestError(403, "API rate limit exceeded", {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(Math.floor(now / 1000) + 600),
      }),
      "rate-limit",
    ],
    ["429", requestError(429, "Too Many Requests", { "retry-after": "5" }), "rate-limit"],
    [
      "403 without rate-limit headers: a refusal",
      requestError(403, "Resource not accessible by integration"),
      "deterministic",
    ],
    ["404", requestError(404, "Not Found"), "deterministic"],
    ["422", requestError(422, "Validation Failed"), "deterministic"],
    [
      "AbortSignal.timeout",
      Object.assign(new Error("The operation was aborted due to timeout"), { name: "TimeoutError" }),
      "network",
    ],
    ["connection reset", coded("ECONNRESET"), "network"],
    [
      "undici connect timeout in the cause",
      Object.assign(new TypeError("fetch failed"), { cause: coded("UND_ERR_CONNECT_TIMEOUT") }),
      "network",
    ],
    ["database out of reach (Prisma P1001)", coded("P1001", "PrismaClientKnownRequestError"), "network"],
    ["validation error (zod)", z.object({ a: z.string() }).safeParse({}).error, "deterministic"],
    ["programming error", new TypeError("cannot read properties of undefined"), "deterministic"],
    ["a plain string thrown", "boom", "deterministic"],
    [
      "several handlers: a 404 and a 502",
      new AggregateError([requestError(404, "Not Found"), requestError(502, "Bad Gateway")]),
      "github-5xx",
    ],
    [
      "several handlers: two deterministic",
      new AggregateError([new TypeError("x"), requestError(422, "Validation Failed")]),
      "deterministic",
    ],
  ])("%s → %s", (_name, err, klass) => {
    expect(failureOf(err).class).toBe(klass);
  });

  test("a rate limit carries how long it asks to wait: retry-after, x-ratelimit-reset, the longest of several", () => {
    expect(failureOf(requestError(403, "secondary rate limit", { "retry-after": "30" }))).toEqual({
      class: "rate-limit",
      retryAfterMs: 30_000,
    });
    const resetAt = now / 1000 + 900;
    const spent = { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(resetAt), date };
    expect(failureOf(requestError(403, "API rate limit exceeded", spent))).toEqual({
      class: "rate-limit",
      retryAfterMs: 900_000,
    });
    const both = failureOf(
      new AggregateError([
        requestError(429, "slow down", { "retry-after": "5" }),
        requestError(403, "API rate limit exceeded", spent),
      ]),
    );
    expect(both).toEqual({ class: "rate-limit", retryAfterMs: 900_000 });
  });
});

describe("an effect's failure window in its error ring", () => {
  test("the newest entry carrying a window start gives it; a repeat takes the newer start", () => {
    let ring = pushError([], {
      at: "2026-03-01T10:00:00.000Z",
      class: "github-502",
      message: "502",
      windowFrom: "2026-03-01T10:00:00.000Z",
    });
    ring = pushError(ring, { at: "2026-03-01T10:05:00.000Z", class: "token", message: "no token" });
    expect(windowFromOf(ring)).toEqual(new Date("2026-03-01T10:00:00.000Z"));
    ring = pushError(ring, {
      at: "2026-03-01T12:00:00.000Z",
      class: "token",
      message: "no token",
      windowFrom: "2026-03-01T12:00:00.000Z",
    });
    expect(windowFromOf(ring)).toEqual(new Date("2026-03-01T12:00:00.000Z"));
    expect(windowFromOf([])).toBeNull();
  });
});
