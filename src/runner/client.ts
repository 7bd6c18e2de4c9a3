/**
 * The worker API client: bearer token, JSON, an Idempotency-Key per logical
 * call (the same key on every retry of it, so a call whose answer was lost
 * has one effect), and retries with backoff on network failures, 5xx, 429
 * and a 409 the service marks retryable (a busy task), waiting at least what
 * a 503's or 429's Retry-After asks. Every other answer is the caller's to read.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

export interface Answer<T = unknown> {
  status: number;
  body: T;
}

/** The service cannot be reached or keeps failing: said in the operator's terms. */
export class ServiceUnavailable extends Error {}

/** The service refuses the worker's token: nothing will work until the operator fixes it. */
export class TokenRefused extends Error {}

export interface ClientOptions {
  url: string;
  token: string;
  /** Attempts per call, and the first pause between them (doubling). */
  attempts?: number;
  backoffMs?: number;
  fetch?: typeof fetch;
  onRetry?: (what: string, attempt: number, why: string) => void;
}

/** What a run needs of the service: the worker API client, or a dispatched run's local stand-in (dispatched.ts). */
export type ServiceClient = Pick<WorkerClient, "get" | "post">;

export class WorkerClient {
  readonly #o: Required<Omit<ClientOptions, "onRetry">> & Pick<ClientOptions, "onRetry">;

  constructor(options: ClientOptions) {
    this.#o = { attempts: 5, backoffMs: 500, fetch: globalThis.fetch, ...options };
  }

  get url(): string {
    return this.#o.url;
  }

  async get<T>(path: string): Promise<Answer<T>> {
    return this.#call<T>("GET", path, undefined);
  }

  async post<T>(path: string, body: unknown): Promise<Answer<T>> {
    return this.#call<T>("POST", path, body);
  }

  async #call<T>(method: string, path: string, body: unknown): Promise<Answer<T>> {
    const key = randomUUID();
    const what = `${method} ${path}`;
    let why = "";
    // The wait the service asked for (Retry-After of a 503 or 429), in ms; 0: none.
    let asked = 0;
    for (let attempt = 1; attempt <= this.#o.attempts; attempt++) {
      if (attempt > 1) {
        this.#o.onRetry?.(what, attempt, why);
        await sleep(Math.max(this.#o.backoffMs * 2 ** (attempt - 2), asked));
      }
      let res: Response;
      try {
        res = await this.#o.fetch(this.#o.url + path, {
          method,
          headers: {
            authorization: `Bearer ${this.#o.token}`,
            accept: "application/json",
            ...(method === "GET" ? {} : { "content-type": "application/json", "idempotency-key": key }),
          },
          ...(method === "GET" ? {} : { body: JSON.stringify(body ?? {}) }),
          signal: AbortSignal.timeout(60_000),
        });
      } catch (err) {
        why = String((err as Error).cause ?? err);
        asked = 0;
        continue;
      }
      const text = await res.text().catch(() => "");
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = { error: text.slice(0, 500) };
      }
      const retryable =
        res.status >= 500 ||
        res.status === 429 ||
        (res.status === 409 && (parsed as { retryable?: boolean } | null)?.retryable === true);
      if (retryable) {
        why = `${res.status} ${errorOf(parsed) ?? res.statusText}`;
        asked = res.status === 503 || res.status === 429 ? retryAfterMs(res.headers.get("retry-after")) : 0;
        continue;
      }
      if (res.status === 401)
        throw new TokenRefused(
          `the service refused the worker token (${what}: ${errorOf(parsed) ?? "401"}); ` +
            "check ORCHESTRA_WORKER_TOKEN or the token file against `orchestra workers`, or register the worker again",
        );
      return { status: res.status, body: parsed as T };
    }
    throw new ServiceUnavailable(
      `${what} failed ${this.#o.attempts} times (last: ${why}); is the service at ${this.#o.url} up? ` +
        "the worker tries again on its next poll",
    );
  }
}

/** The longest a Retry-After is waited (a longer one is the service's mistake, or a clock's). */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * A Retry-After in seconds as the wait before the next try, spread over up to
 * half as long again so that callers refused together do not come back
 * together; 0 when absent or not a number of seconds.
 */
export function retryAfterMs(header: string | null, random: () => number = Math.random): number {
  const seconds = header === null || !/^\d+$/.test(header.trim()) ? 0 : Number(header.trim());
  return Math.min(MAX_RETRY_AFTER_MS, seconds * 1000 * (1 + random() / 2));
}

/** The `error` text of an API answer. */
export function errorOf(body: unknown): string | undefined {
  const e = (body as { error?: unknown } | null)?.error;
  return typeof e === "string" ? e : undefined;
}

/** The `reason` of a 409 (superseded, stalled, revoked, …). */
export function reasonOf(body: unknown): string | undefined {
  const r = (body as { reason?: unknown } | null)?.reason;
  return typeof r === "string" ? r : undefined;
}
