/**
 * The worker API client's retries: the same Idempotency-Key on every try, and
 * a 503's or 429's Retry-After waited (spread over up to half as long again),
 * never less than the client's own backoff.
 */
import { retryAfterMs, WorkerClient } from "../../src/runner/client.js";

test.each([
  ["1", 0, 1000],
  ["1", 1, 1500],
  ["2", 0.5, 2500],
  [" 3 ", 0, 3000],
  ["0", 0.9, 0],
  ["600", 0, 60_000],
  [null, 0.5, 0],
  ["soon", 0.5, 0],
  ["-1", 0.5, 0],
  ["1.5", 0.5, 0],
  ["Wed, 21 Oct 2015 07:28:00 GMT", 0.5, 0],
])("Retry-After %j with jitter %d waits %d ms", (header, random, ms) => {
  expect(retryAfterMs(header, () => random)).toBe(ms);
});

/** A fetch that answers from a list and records each request's key and time. */
function scripted(answers: Array<{ status: number; headers?: Record<string, string>; body?: unknown }>) {
  const calls: Array<{ key: string | null; at: number }> = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    calls.push({ key: new Headers(init.headers).get("idempotency-key"), at: performance.now() });
    const a = answers.shift()!;
    return new Response(a.body === undefined ? null : JSON.stringify(a.body), {
      status: a.status,
      ...(a.headers ? { headers: a.headers } : {}),
    });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

test("a claim refused as busy is tried again with the same key after at least the Retry-After", async () => {
  const { fetch, calls } = scripted([
    { status: 503, headers: { "retry-after": "1" }, body: { error: "at its limit", reason: "busy", retryable: true } },
    { status: 204 },
  ]);
  const retries: string[] = [];
  const client = new WorkerClient({
    url: "http://127.0.0.1:1",
    token: "t",
    backoffMs: 1,
    fetch,
    onRetry: (what, attempt, why) => retries.push(`${what} #${attempt}: ${why}`),
  });
  expect(await client.post("/api/v1/claims", {})).toEqual({ status: 204, body: null });
  expect(calls).toHaveLength(2);
  expect(calls[1]!.key).toBe(calls[0]!.key);
  // A lower bound only: a timer never fires early.
  expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(990);
  expect(retries).toEqual(["POST /api/v1/claims #2: 503 at its limit"]);
});

test("a 409 the service marks retryable keeps the client's own short backoff even with a Retry-After", async () => {
  const { fetch, calls } = scripted([
    {
      status: 409,
      headers: { "retry-after": "30" },
      body: { error: "still running", reason: "in-progress", retryable: true },
    },
    { status: 200, body: { ok: true } },
  ]);
  const client = new WorkerClient({ url: "http://127.0.0.1:1", token: "t", backoffMs: 1, fetch });
  expect(await client.post("/api/v1/runs/r/exit", {})).toEqual({ status: 200, body: { ok: true } });
  expect(calls[1]!.at - calls[0]!.at).toBeLessThan(30_000);
});
