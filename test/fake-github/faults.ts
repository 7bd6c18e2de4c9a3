/**
 * Fault injection for the fake: explicit `inject` rules and seeded random
 * chaos for REST writes. The server asks for a fault just before it would
 * handle a request (`take`, then `takeChaos` for described operations), and
 * hands the real handling to `run`, which answers with the fault instead —
 * after performing the real handling first when the fault says so.
 */
import { STATUS_CODES } from "node:http";
import { mulberry32 } from "../support/random.js";
import { docsFor, errorBody, HttpError, type RecordedRequest, type Reply } from "./http.js";
import type { OperationSpec } from "./openapi.js";

export interface InjectRule {
  method?: string;
  /**
   * A string matches the REST path (`/repos/o/r/pulls`), the template
   * (`/repos/{owner}/{repo}/pulls`), the operationId (`pulls/create`), or
   * `graphql` / `graphql:<OperationName>`. A RegExp is tested on the path.
   */
  path: string | RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** how many matching requests to answer (default 1; Infinity for all) */
  times?: number;
  /**
   * Handle the request for real first (state changes exactly as without the
   * rule), then replace the answer with this one: "the write took effect on
   * GitHub but the answer was lost". Default false: the handler is not run.
   */
  perform?: boolean;
}

/** Every request failing alike, as when GitHub is down (see Faults.outage). */
export interface OutageOptions {
  status: number;
  headers?: Record<string, string>;
}

/**
 * Random faults for writes: REST (POST, PATCH, PUT, DELETE) and GraphQL
 * mutations. Never for GET, GraphQL queries, or minting installation tokens;
 * explicit `inject` rules come first.
 */
export interface ChaosOptions {
  /** seed of the deterministic PRNG (mulberry32): the same seed gives the same faults */
  seed: number;
  /** share of writes answering 502 */
  failRate: number;
  /** of those 502s, the share performed before answering (default 0.5) */
  performedShare?: number;
  /** share of writes answering GitHub's secondary rate limit (403 + retry-after; never performed) */
  secondaryRateLimitRate: number;
  /** the retry-after header of a secondary rate limit answer (default 1) */
  retryAfterSeconds?: number;
}

export interface ChaosStats {
  /** writes eligible for chaos while it was on */
  writes: number;
  /** writes answered 502, performed or not */
  failed502: number;
  /** of `failed502`, those handled for real before answering */
  performed502: number;
  /** writes answered with a secondary rate limit */
  rateLimited: number;
}

/** An answer that replaces the handler's; `perform` runs the handler first. */
export interface Injection {
  perform: boolean;
  answer(rec: RecordedRequest): Reply;
}

const WRITE_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const TOKEN_MINTING = "POST /app/installations/{installation_id}/access_tokens";
const SECONDARY_RATE_LIMIT_DOCS =
  "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits";

export class Faults {
  private readonly rules: (InjectRule & { remaining: number })[] = [];
  private chaosConfig: (Required<ChaosOptions> & { random: () => number }) | null = null;
  private chaosCounters: ChaosStats = { writes: 0, failed502: 0, performed502: 0, rateLimited: 0 };
  private down: OutageOptions | null = null;

  inject(rule: InjectRule): void {
    this.rules.push({ ...rule, remaining: rule.times ?? 1 });
  }

  /**
   * GitHub is down: every request (REST, GraphQL, token minting) answers
   * `status` without being handled, until `outage(null)`. `inject` rules wait
   * until it is over.
   */
  outage(opts: OutageOptions | null): void {
    if (opts && !(Number.isInteger(opts.status) && opts.status >= 400 && opts.status <= 599))
      throw new Error(`fake GitHub outage: status must be an HTTP error status (400-599), got ${opts.status}`);
    this.down = opts;
  }

  /**
   * Random faults for REST writes (see ChaosOptions); null switches them off.
   * Each call with options restarts the PRNG from its seed and resets the
   * counters; switching off keeps the counters for reading.
   */
  chaos(opts: ChaosOptions | null): void {
    if (!opts) {
      this.chaosConfig = null;
      return;
    }
    const performedShare = opts.performedShare ?? 0.5;
    const retryAfterSeconds = opts.retryAfterSeconds ?? 1;
    const share = (name: string, v: number): void => {
      if (!(v >= 0 && v <= 1)) throw new Error(`fake GitHub chaos: ${name} must be between 0 and 1, got ${v}`);
    };
    share("failRate", opts.failRate);
    share("secondaryRateLimitRate", opts.secondaryRateLimitRate);
    share("performedShare", performedShare);
    share("failRate + secondaryRateLimitRate", opts.failRate + opts.secondaryRateLimitRate);
    if (!Number.isInteger(opts.seed)) throw new Error(`fake GitHub chaos: seed must be an integer, got ${opts.seed}`);
    if (!(retryAfterSeconds >= 0))
      throw new Error(`fake GitHub chaos: retryAfterSeconds must be >= 0, got ${retryAfterSeconds}`);
    this.chaosConfig = { ...opts, performedShare, retryAfterSeconds, random: mulberry32(opts.seed) };
    this.chaosCounters = { writes: 0, failed502: 0, performed502: 0, rateLimited: 0 };
  }

  /** counters of the latest chaos run (a copy) */
  chaosStats(): ChaosStats {
    return { ...this.chaosCounters };
  }

  /**
   * Without an injection, runs the real handling. With one, answers with it
   * instead — after running the real handling first when it is `perform`
   * (an HttpError from the real handling is its answer, then replaced).
   */
  async run(injection: Injection | null, rec: RecordedRequest, handle: () => Reply | Promise<Reply>): Promise<Reply> {
    if (!injection) return handle();
    if (injection.perform) {
      let real: Reply;
      try {
        real = await handle();
      } catch (e) {
        if (!(e instanceof HttpError)) throw e;
        real = { status: e.status, body: e.body, headers: e.headers };
      }
      rec.performedStatus = real.status;
    }
    return injection.answer(rec);
  }

  /**
   * The first `inject` rule matching this request, used up by one; null if
   * none. `graphqlName` is given (possibly null) for GraphQL requests only.
   */
  take(method: string, path: string, op: OperationSpec | null, graphqlName?: string | null): Injection | null {
    const down = this.down;
    if (down) {
      return {
        perform: false,
        answer: (rec) => {
          rec.injected = true;
          return {
            status: down.status,
            body: errorBody(down.status, STATUS_CODES[down.status] ?? "Error", docsFor({ op })),
            headers: down.headers,
          };
        },
      };
    }
    const idx = this.rules.findIndex((r) => {
      if (r.remaining <= 0) return false;
      if (r.method && r.method.toUpperCase() !== method) return false;
      if (r.path instanceof RegExp) return r.path.test(path);
      if (r.path === path) return true;
      if (op && (r.path === op.path || r.path === op.operationId || r.path === `${method} ${op.path}`)) return true;
      if (graphqlName !== undefined && (r.path === "graphql" || r.path === `graphql:${graphqlName}`)) return true;
      return false;
    });
    if (idx < 0) return null;
    const rule = this.rules[idx]!;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.rules.splice(idx, 1);
    return {
      perform: rule.perform === true,
      answer: (rec) => {
        rec.injected = true;
        const body =
          rule.status === 204 || rule.status === 304
            ? undefined
            : (rule.body ?? errorBody(rule.status, STATUS_CODES[rule.status] ?? "Error", docsFor({ op })));
        return { status: rule.status, body, headers: rule.headers };
      },
    };
  }

  /**
   * A chaos fault for this request, if chaos is on and the dice say so.
   * `implemented`: whether the fake has a handler for the operation —
   * unimplemented operations stay loud violations rather than random 502s.
   */
  takeChaos(method: string, op: OperationSpec, implemented: boolean): Injection | null {
    const chaos = this.chaosConfig;
    const route = `${method} ${op.path}`;
    if (!chaos || !WRITE_METHODS.has(method) || route === TOKEN_MINTING || !implemented) return null;
    const stats = this.chaosCounters;
    stats.writes += 1;
    const roll = chaos.random();
    if (roll < chaos.failRate) {
      const perform = chaos.random() < chaos.performedShare;
      stats.failed502 += 1;
      if (perform) stats.performed502 += 1;
      return {
        perform,
        answer: (r) => {
          r.injected = true;
          return { status: 502, body: errorBody(502, STATUS_CODES[502] ?? "Bad Gateway", docsFor({ op })) };
        },
      };
    }
    if (roll < chaos.failRate + chaos.secondaryRateLimitRate) {
      stats.rateLimited += 1;
      return {
        perform: false,
        answer: (r) => {
          r.injected = true;
          return {
            status: 403,
            body: errorBody(
              403,
              "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. " +
                `If you reach out to GitHub Support for help, please include the request ID ${r.requestId ?? "FAKE:0"}.`,
              SECONDARY_RATE_LIMIT_DOCS,
            ),
            headers: { "retry-after": String(chaos.retryAfterSeconds) },
          };
        },
      };
    }
    return null;
  }
}
