/**
 * Idempotency-Key for the API's mutations: a request carrying a key runs at
 * most once per key (scoped to the caller and the route), and a retry gets
 * the first answer again, with `Idempotent-Replay: true`.
 *
 * The key's row is inserted (state `running`) before the work runs, so of two
 * concurrent requests with one key only the one whose insert won acts; the
 * other is answered at once with 409 `{reason: "in-progress", retryable:
 * true}` and `Retry-After: 1` (it does not wait: the first may take long, and
 * a retry then replays its answer). A key sent again with a different body is
 * refused with 422 (`reason: "key-reused"`): the answer stored under it is
 * for another request. Transient answers (5xx, a retryable 409) and
 * unexpected errors delete the row, so a retry runs again for real.
 *
 * A key lives `ttlMs` (ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS, default 24 h);
 * after that it is treated as new even before retention prunes its row. A
 * row still `running` after `takeoverMs` (60 s) belongs to a process that
 * died mid-request (or to a request far slower than any worker waits for):
 * the next request with that key takes it over and runs.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isUniqueViolation } from "../store/sql.js";
import { HttpError, REFUSAL_STATUS } from "../http/router.js";
import { Refusal } from "../refusal.js";
import { Busy } from "../apply/tasks.js";
import type { ApiQueries } from "./queries.js";

export interface Answer {
  status: number;
  body?: unknown;
  /** What a replay gets instead of `body` (a secret in the first answer is never stored). */
  replayBody?: unknown;
}

export interface IdempotencyOptions {
  /** How long a key is remembered (ms). */
  ttlMs: number;
  /** How long a `running` row is left to its request before another may take it over (ms). */
  takeoverMs?: number;
}

const TAKEOVER_MS = 60_000;
/** Keys longer than this are refused: a key names a request, it does not carry one. */
const MAX_KEY_LENGTH = 200;

const sha256 = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");

type Owned = { kind: "owned"; createdAt: Date } | { kind: "answer"; answer: Answer; replay: boolean };

export class Idempotency {
  readonly #takeoverMs: number;

  constructor(
    readonly queries: Pick<ApiQueries, "createKey" | "keyRow" | "finishKey" | "dropKey" | "takeOverKey" | "releaseKey">,
    readonly clock: { now(): Date },
    readonly opts: IdempotencyOptions,
  ) {
    this.#takeoverMs = opts.takeoverMs ?? TAKEOVER_MS;
  }

  /** Runs `work` once per key and sends its answer (or the stored first answer) on `res`. */
  async run(
    req: IncomingMessage,
    res: ServerResponse,
    scope: string,
    rawBody: string,
    work: () => Promise<Answer>,
  ): Promise<void> {
    const header = req.headers["idempotency-key"];
    const key = Array.isArray(header) ? header[0] : header;
    if (key === undefined || key === "") {
      send(res, await answerOf(work), false);
      return;
    }
    if (key.length > MAX_KEY_LENGTH)
      throw new HttpError(
        400,
        `Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters; send a short unique id (e.g. a UUID)`,
      );
    const id = sha256(`${scope}\n${req.method} ${req.url}\n${key}`);
    const own = await this.#acquire(id, sha256(rawBody));
    if (own.kind === "answer") {
      send(res, own.answer, own.replay);
      return;
    }
    let answer: Answer;
    try {
      answer = await answerOf(work);
    } catch (err) {
      await this.#release(id, own.createdAt);
      throw err;
    }
    const transient = answer.status >= 500 || (answer.body as { retryable?: boolean } | undefined)?.retryable === true;
    if (transient) await this.#release(id, own.createdAt);
    else {
      const stored = answer.replayBody !== undefined ? answer.replayBody : answer.body;
      await this.queries.finishKey(
        id,
        own.createdAt,
        answer.status,
        stored === undefined ? "" : JSON.stringify(stored),
      );
    }
    send(res, answer, false);
  }

  /** Inserts the key's running row, or says what answers the request instead. */
  async #acquire(id: string, bodyHash: string): Promise<Owned> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      try {
        await this.queries.createKey(id, bodyHash, now);
        return { kind: "owned", createdAt: now };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const row = await this.queries.keyRow(id);
      if (!row) continue; // released meanwhile: try the insert again
      const age = now.getTime() - row.createdAt.getTime();
      if (age >= this.opts.ttlMs) {
        // Expired: a new request. Deleted only as it was read, so a fresh owner is never removed.
        await this.queries.dropKey(id, row.createdAt);
        continue;
      }
      if (row.bodyHash !== "" && row.bodyHash !== bodyHash) {
        return {
          kind: "answer",
          replay: false,
          answer: {
            status: 422,
            body: {
              error:
                "this Idempotency-Key was already used with a different request body; " +
                "a retry must send the same body, and a new request needs a new key",
              reason: "key-reused",
              retryable: false,
            },
          },
        };
      }
      if (row.state === "done") {
        return {
          kind: "answer",
          replay: true,
          answer: { status: row.status, ...(row.body === "" ? {} : { body: JSON.parse(row.body) as unknown }) },
        };
      }
      if (age < this.#takeoverMs) {
        return {
          kind: "answer",
          replay: false,
          answer: {
            status: 409,
            body: {
              error:
                `a request with this Idempotency-Key is still running (started ${row.createdAt.toISOString()}); ` +
                `retry shortly with the same key to get its answer`,
              reason: "in-progress",
              retryable: true,
            },
          },
        };
      }
      // Running for longer than any request should: its process died. Take it over.
      if (await this.queries.takeOverKey(id, row.createdAt, now, bodyHash)) return { kind: "owned", createdAt: now };
    }
    throw new HttpError(409, "Idempotency-Key: the key kept changing under this request; send it again", {
      reason: "busy",
      retryable: true,
    });
  }

  async #release(id: string, createdAt: Date): Promise<void> {
    await this.queries.releaseKey(id, createdAt);
  }
}

/** The work's answer; an HttpError or a busy task is an answer too (Busy is transient). */
async function answerOf(work: () => Promise<Answer>): Promise<Answer> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, body: { error: err.message, ...err.extra } };
    if (err instanceof Refusal) return { status: REFUSAL_STATUS[err.kind], body: { error: err.message, ...err.extra } };
    if (err instanceof Busy) return { status: 409, body: { error: err.message, reason: "busy", retryable: true } };
    throw err;
  }
}

function send(res: ServerResponse, answer: Answer, replay: boolean): void {
  const text = answer.body === undefined ? "" : JSON.stringify(answer.body);
  const headers: Record<string, string | number> = replay ? { "idempotent-replay": "true" } : {};
  if ((answer.body as { reason?: string } | undefined)?.reason === "in-progress") headers["retry-after"] = 1;
  if (text === "") {
    res.writeHead(answer.status, headers).end();
    return;
  }
  res
    .writeHead(answer.status, {
      ...headers,
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
    })
    .end(text);
}
