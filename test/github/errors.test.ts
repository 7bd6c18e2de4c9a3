import { GraphqlResponseError } from "@octokit/graphql";
import { errorClass, failureOf, rateLimitWaitMs, toGitHubError } from "../../src/github/errors.js";
import { GitHubError } from "../../src/github/port.js";
import type { FailureClass } from "../../src/retry/schedule.js";

const NOW = Date.parse("2026-06-01T12:00:00Z");

describe("how long a rate limit asks to wait", () => {
  const answeredAt = new Date(NOW - 3_600_000).toUTCString();
  test.each<[string, number, string, Record<string, string>, number | undefined]>([
    [
      "secondary limit with retry-after",
      403,
      "You have exceeded a secondary rate limit.",
      { "retry-after": "60" },
      60_000,
    ],
    ["429 with retry-after", 429, "Too many requests", { "retry-after": "5" }, 5_000],
    [
      "primary quota spent: until the reset",
      403,
      "API rate limit exceeded",
      { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW / 1000 + 900) },
      900_000,
    ],
    // GitHub's clock an hour behind this machine's: the wait is measured on GitHub's clock.
    [
      "the reset against the answer's own Date",
      403,
      "API rate limit exceeded",
      { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String((NOW - 3_600_000) / 1000 + 900), date: answeredAt },
      900_000,
    ],
    [
      "a reset already past: no wait",
      403,
      "API rate limit exceeded",
      { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW / 1000 - 60) },
      0,
    ],
    ["a rate limit without headers: a minute", 403, "You have exceeded a secondary rate limit", {}, 60_000],
    ["a permission error is no rate limit", 403, "Resource not accessible by integration", {}, undefined],
    ["a 502 is no rate limit", 502, "Bad Gateway", { "retry-after": "5" }, undefined],
  ])("%s", (_n, status, message, headers, wait) => {
    expect(rateLimitWaitMs(status, message, headers, NOW)).toBe(wait);
  });
});

describe("what a failure means for a retry", () => {
  const err = (
    status: number | undefined,
    url = "https://api.github.com/repos/o/r/issues/1/comments",
    message = "m",
  ) => ({ status, message, request: { url }, response: { headers: {}, data: { message } } });
  test.each([
    ["502", err(502), { retryable: true, mayHaveSent: true, tokenFailure: false }],
    ["network error (no status)", err(undefined), { retryable: true, mayHaveSent: true, tokenFailure: false }],
    ["404", err(404), { retryable: false, mayHaveSent: false, tokenFailure: false }],
    ["422", err(422), { retryable: false, mayHaveSent: false, tokenFailure: false }],
    [
      "token refused (suspended)",
      err(403, "https://api.github.com/app/installations/9/access_tokens"),
      { retryable: false, mayHaveSent: false, tokenFailure: true, operation: "mint installation token" },
    ],
    [
      "a call with a token minted before the installation was suspended",
      err(403, undefined, "This installation has been suspended"),
      { retryable: false, mayHaveSent: false, tokenFailure: true, operation: "create comment" },
    ],
    [
      "any other 403 is the call's",
      err(403, undefined, "Resource not accessible by integration"),
      { retryable: false, tokenFailure: false },
    ],
    [
      "token endpoint 502 is GitHub's trouble, not the installation's",
      err(502, "https://api.github.com/app/installations/9/access_tokens"),
      { retryable: true, tokenFailure: false },
    ],
  ])("%s", (_n, e, expected) => {
    expect(toGitHubError("create comment", e)).toMatchObject(expected);
  });
});

describe("a GraphQL answer with errors", () => {
  /** octokit's own error for HTTP 200 with `errors`, as @octokit/graphql throws it. */
  const answered = (errors: Array<Record<string, unknown>>, headers: Record<string, string> = {}) =>
    new GraphqlResponseError({ method: "POST", url: "https://api.github.com/graphql" } as never, headers, {
      data: null,
      errors,
    } as never);
  const undefinedField = {
    message: "Field 'subIssues' doesn't exist on type 'Issue'",
    path: ["query IssuesLabelled", "repository", "issues", "nodes", "subIssues"],
    extensions: { code: "undefinedField", typeName: "Issue", fieldName: "subIssues" },
  };

  test.each<[string, GraphqlResponseError<unknown>, Partial<GitHubError>, FailureClass, string]>([
    [
      "a field the host lacks: a version gap, with GitHub's message, not retried as an outage",
      answered([undefinedField]),
      {
        status: undefined,
        retryable: false,
        mayHaveSent: false,
        graphqlErrors: ["Field 'subIssues' doesn't exist on type 'Issue'"],
        message: "issues by label: GitHub rejected the GraphQL query: Field 'subIssues' doesn't exist on type 'Issue'",
      },
      "graphql",
      "github-graphql",
    ],
    [
      "several errors: every message is kept",
      answered([undefinedField, { type: "NOT_FOUND", message: "Could not resolve to a Repository" }]),
      {
        graphqlErrors: ["Field 'subIssues' doesn't exist on type 'Issue'", "Could not resolve to a Repository"],
        message: expect.stringContaining("on type 'Issue'; Could not resolve to a Repository"),
      },
      "graphql",
      "github-graphql",
    ],
    [
      "GraphQL's rate limit is a rate limit, until its reset",
      answered([{ type: "RATE_LIMITED", message: "API rate limit exceeded for installation ID 1." }], {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(NOW / 1000 + 600),
        date: new Date(NOW).toUTCString(),
      }),
      { retryable: true, retryAfterMs: 600_000, graphqlErrors: undefined },
      "rate-limit",
      "github-network",
    ],
    [
      "a query GitHub failed to run in time is asked again",
      answered([{ message: "Something went wrong while executing your query. This may be the result of a timeout." }]),
      { retryable: true, graphqlErrors: undefined },
      "network",
      "github-network",
    ],
  ])("%s", (_n, e, fields, failure, ring) => {
    const mapped = toGitHubError("issues by label", e);
    expect(mapped).toMatchObject(fields);
    expect(failureOf(mapped).class).toBe(failure);
    expect(errorClass(mapped, "other")).toBe(ring);
  });

  test("an answer Orchestra cannot use (no status, not retryable) is a defect, not an outage", () => {
    const e = new GitHubError("branches", undefined, "a next page without a new cursor", false);
    expect(failureOf(e)).toEqual({ class: "deterministic" });
    expect(errorClass(e, "other")).toBe("github-answer");
    expect(failureOf(toGitHubError("branches", { message: "socket hang up" }))).toEqual({ class: "network" });
  });
});
