/**
 * Reading a webhook body within two limits: GitHub's 25 MB cap per payload,
 * and the shared budget for bytes of bodies whose signature is not checked
 * yet. A body that cannot fit is refused before it is read (when its length is
 * declared) or as soon as it stops fitting (chunked), never buffered whole.
 */
import type { IncomingMessage } from "node:http";
import type { ByteBudget } from "./budget.js";

/** Bodies up to this size are kept as delivered rather than copied into a buffer of their own. */
const SMALL_BODY = 256 * 1024;

export type BodyRead =
  | {
      ok: true;
      body: Buffer;
      /** Gives the body's bytes back to the budget; call once it is verified or refused. */ release(): void;
    }
  | { ok: false; status: 413 | 503 | 400; reason: string };

function declaredLength(req: IncomingMessage): number | null | "bad" {
  const raw = req.headers["content-length"];
  if (raw === undefined) return null;
  return /^[0-9]+$/.test(raw) ? Number(raw) : "bad";
}

/** Decides, from the headers alone, whether a body may be read at all. */
export function admit(
  req: IncomingMessage,
  budget: ByteBudget,
  max: number,
): BodyRead | { ok: true; declared: number | null } {
  const declared = declaredLength(req);
  if (declared === "bad") return { ok: false, status: 400, reason: "content-length is not a number" };
  if (declared !== null && declared > max) {
    return {
      ok: false,
      status: 413,
      reason: `payload of ${declared} bytes is larger than GitHub's ${max}-byte webhook cap`,
    };
  }
  if (declared !== null && !budget.take(declared)) {
    return { ok: false, status: 503, reason: "too many large deliveries are being received at once; retry shortly" };
  }
  return { ok: true, declared };
}

/**
 * Reads the body whose length `admit` already took from the budget (or, for a
 * chunked body, takes it chunk by chunk). A declared length is read into one
 * buffer of that size: no list of chunks, no concatenation.
 */
export function readAdmitted(
  req: IncomingMessage,
  declared: number | null,
  budget: ByteBudget,
  max: number,
): Promise<BodyRead> {
  return new Promise((resolve) => {
    let taken = declared ?? 0;
    let done = false;
    const release = (): void => {
      budget.give(taken);
      taken = 0;
    };
    const finish = (r: BodyRead): void => {
      if (done) return;
      done = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      if (!r.ok) release();
      resolve(r);
    };
    // A large declared body is copied into one buffer of its size as it
    // arrives (never a list of chunks plus their concatenation); a small one,
    // usually a single chunk, is kept as the chunks the parser delivered.
    let fixed: Buffer | null = declared !== null && declared > SMALL_BODY ? Buffer.allocUnsafe(declared) : null;
    let filled = 0;
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer): void => {
      if (fixed) {
        // The HTTP parser never delivers more than the declared length.
        filled += chunk.copy(fixed, filled);
        return;
      }
      if (declared !== null) {
        filled += chunk.length;
        chunks.push(chunk);
        return;
      }
      if (filled + chunk.length > max) {
        finish({ ok: false, status: 413, reason: `payload larger than GitHub's ${max}-byte webhook cap` });
        return;
      }
      if (!budget.take(chunk.length)) {
        finish({
          ok: false,
          status: 503,
          reason: "too many large deliveries are being received at once; retry shortly",
        });
        return;
      }
      taken += chunk.length;
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
      finish({ ok: true, body, release });
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
