/**
 * Reading a webhook body within GitHub's 25 MB cap per payload, the budget for
 * bytes of bodies whose signature is not checked yet (budget.ts), and time.
 *
 * Bytes are taken from the budget as they arrive. A large body (a declared
 * length over SMALL_BODY) is promised its whole length when its first byte
 * arrives, so that concurrent large bodies are read whole or refused, never
 * all stuck halfway; a sender that declares a length and sends nothing holds
 * nothing. A body must arrive within the deadline (GitHub itself gives up on
 * a delivery after 10 s) and may not pause longer than the idle limit: a slow
 * or stalled sender is answered 408 and its bytes go back.
 */
import type { IncomingMessage } from "node:http";
import { SMALL_BODY, type Allowance, type Refusal, type UnverifiedBudget } from "./budget.js";

export interface BodyTiming {
  /** The whole body must have arrived this long after its headers. */
  deadlineMs: number;
  /** No more than this long without a byte. */
  idleMs: number;
}

export const DEFAULT_BODY_TIMING: BodyTiming = { deadlineMs: 10_000, idleMs: 5_000 };

export type BodyRead =
  | {
      ok: true;
      body: Buffer;
      /** Gives the body's bytes back to the budget; call once it is verified or refused. */
      release(): void;
    }
  | { ok: false; status: 413 | 503 | 400 | 408; reason: string };

function declaredLength(req: IncomingMessage): number | null | "bad" {
  const raw = req.headers["content-length"];
  if (raw === undefined) return null;
  return /^[0-9]+$/.test(raw) ? Number(raw) : "bad";
}

const REFUSED: Record<Refusal, string> = {
  budget: "too many large deliveries are being received at once; retry shortly",
  "address-bytes": "this address is sending too many large bodies at once; retry shortly",
  "address-bodies": "this address is sending too many bodies at once; retry shortly",
};

/** Decides, from the headers alone, whether a body may be read at all. Takes nothing from the budget. */
export function admit(req: IncomingMessage, max: number): BodyRead | { ok: true; declared: number | null } {
  const declared = declaredLength(req);
  if (declared === "bad") return { ok: false, status: 400, reason: "content-length is not a number" };
  if (declared !== null && declared > max) {
    return {
      ok: false,
      status: 413,
      reason: `payload of ${declared} bytes is larger than GitHub's ${max}-byte webhook cap`,
    };
  }
  return { ok: true, declared };
}

/** The client address a body's bytes are counted against. */
export function addressOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? "unknown";
}

/**
 * Reads an admitted body, taking its bytes from the budget as they arrive. A
 * large declared body is read into one buffer of its size (no list of chunks,
 * no concatenation), allocated once its first byte has arrived and its length
 * is promised.
 */
export function readAdmitted(
  req: IncomingMessage,
  declared: number | null,
  budget: UnverifiedBudget,
  max: number,
  timing: BodyTiming = DEFAULT_BODY_TIMING,
): Promise<BodyRead> {
  return new Promise((resolve) => {
    const opened = budget.open(addressOf(req));
    if (typeof opened === "string") {
      resolve({ ok: false, status: 503, reason: REFUSED[opened] });
      return;
    }
    const allowance: Allowance = opened;
    let done = false;
    const large = declared !== null && declared > SMALL_BODY;
    let fixed: Buffer | null = null;
    let filled = 0;
    const chunks: Buffer[] = [];
    const finish = (r: BodyRead): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(idle);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      if (!r.ok) allowance.release();
      resolve(r);
    };
    const slow = (what: string) => (): void =>
      finish({ ok: false, status: 408, reason: `${what}; send the whole body without pausing` });
    const deadline = setTimeout(
      slow(`the body did not arrive within ${timing.deadlineMs / 1000} s`),
      timing.deadlineMs,
    ).unref();
    let idle = setTimeout(slow(`no byte of the body for ${timing.idleMs / 1000} s`), timing.idleMs).unref();
    const onData = (chunk: Buffer): void => {
      clearTimeout(idle);
      idle = setTimeout(slow(`no byte of the body for ${timing.idleMs / 1000} s`), timing.idleMs).unref();
      if (large) {
        if (!fixed) {
          const refused = allowance.promise(declared);
          if (refused) return finish({ ok: false, status: 503, reason: REFUSED[refused] });
          fixed = Buffer.allocUnsafe(declared);
        }
        // The HTTP parser never delivers more than the declared length.
        filled += chunk.copy(fixed, filled);
        return;
      }
      if (filled + chunk.length > max) {
        return finish({ ok: false, status: 413, reason: `payload larger than GitHub's ${max}-byte webhook cap` });
      }
      const refused = allowance.take(chunk.length);
      if (refused) return finish({ ok: false, status: 503, reason: REFUSED[refused] });
      filled += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      if (declared !== null && filled !== declared) {
        finish({ ok: false, status: 400, reason: `body ended after ${filled} of ${declared} declared bytes` });
        return;
      }
      const body = fixed ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, filled));
      fixed = null;
      finish({ ok: true, body, release: () => allowance.release() });
    };
    const onError = (): void =>
      finish({ ok: false, status: 400, reason: "the request was aborted while its body was being read" });
    // A connection closed before the end of the body: nothing to answer, but the bytes go back.
    const onClose = (): void => onError();
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}
