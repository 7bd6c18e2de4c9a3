/**
 * Durable webhook ingest: `POST /api/github/webhooks`. The signature is checked
 * on the raw bytes, the delivery is stored in the inbox, and only then is
 * GitHub answered 2xx. A delivery that could not be stored gets a 5xx, so
 * GitHub shows it as failed and it can be redelivered; it is never
 * acknowledged and lost. Bodies are read within GitHub's 25 MB cap and a
 * shared budget for unverified bytes (see body.ts); what does not fit is
 * refused before it is read.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { IncomingDelivery, Recorded } from "../inbox/store.js";
import { pathOf, sendError, sendJson } from "../http/respond.js";
import { budgetLimits, UnverifiedBudget } from "./budget.js";
import { admit, DEFAULT_BODY_TIMING, readAdmitted, type BodyTiming } from "./body.js";
import { asksStanding, verdictOf } from "./verdict.js";
import { factsOf } from "./facts.js";

export const WEBHOOK_PATH = "/api/github/webhooks";

/** GitHub caps webhook payloads at 25 MB. */
export const MAX_PAYLOAD = 25 * 1024 * 1024;

/** Default cap on bytes held at once for bodies whose signature is not checked yet. */
export const DEFAULT_UNVERIFIED_BYTES = 64 * 1024 * 1024;

/** Seconds a refused sender is asked to wait before it tries again. */
const RETRY_AFTER_S = 1;

export function sign(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

const HEX_SHA256 = /^sha256=[0-9a-fA-F]{64}$/;

export function verifySignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header || !HEX_SHA256.test(header)) return false;
  const expected = createHmac("sha256", secret).update(body).digest();
  return timingSafeEqual(Buffer.from(header.slice(7), "hex"), expected);
}

export interface IngestDeps {
  secret: string;
  record(d: IncomingDelivery): Promise<Recorded>;
  /** Whether any capability handles this event/action; others are stored as ignored. */
  handles(event: string, action: string | null): boolean;
  /**
   * Why Orchestra does not manage this installation, when that is known without asking GitHub
   * (standing.ts); null when it is managed or not known. Its deliveries are stored as ignored.
   */
  unmanaged?(installationId: string): Promise<string | null>;
  /** Orchestra's own login, once known: its label changes echoed back collapse (src/inbox/collapse.ts). */
  selfLogin?(): string | null;
  /** Called after a new delivery that needs processing is stored. */
  onStored(): void;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Cap on bytes of unverified bodies held at once (default 64 MB). */
  maxUnverifiedBytes?: number;
  /** How long a body may take to arrive, and pause (default 10 s and 5 s). */
  bodyTiming?: BodyTiming;
  /** The service is stopping: deliveries are refused with 503, for GitHub to redeliver elsewhere or later. */
  stopping?: () => boolean;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** How long the rest of a refused body is read and dropped before the connection is cut. */
const LINGER_MS = 5_000;

/**
 * Answers at once without keeping the rest of the body: the unread bytes are
 * never buffered, and the sender gets its answer (413, 503 with Retry-After)
 * instead of a stalled upload.
 *
 * The connection is not closed while the sender is still sending: TCP answers
 * bytes that reach a closed socket with a reset, and the reset can wipe out
 * the answer before the sender has read it (RFC 9112, section 9.6). On a
 * loaded machine senders saw ECONNRESET or EPIPE instead of their 413 or 503.
 * So the answer is written whole, the rest of the body is read into nothing,
 * and the response ends (letting Node close the connection) once the body has
 * ended, or after LINGER_MS for a sender that is still sending.
 */
function refuseUnread(req: IncomingMessage, res: ServerResponse, status: number, reason: string): void {
  const text = JSON.stringify({ error: reason });
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...(status === 503 ? { "retry-after": String(RETRY_AFTER_S) } : {}),
  });
  if (req.complete) {
    res.end(text);
    return;
  }
  res.write(text);
  req.resume();
  const end = (): void => {
    clearTimeout(cut);
    if (!res.writableEnded) res.end();
  };
  const cut = setTimeout(end, LINGER_MS).unref();
  req.once("end", end);
  req.once("close", end);
}

export function webhookHandler(deps: IngestDeps) {
  const budget = new UnverifiedBudget(budgetLimits(deps.maxUnverifiedBytes ?? DEFAULT_UNVERIFIED_BYTES));
  const timing = deps.bodyTiming ?? DEFAULT_BODY_TIMING;
  const refused = { busy: 0 };
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (pathOf(req) !== WEBHOOK_PATH) return false;
    if (req.method !== "POST") {
      req.resume();
      sendError(res, 405, "webhooks are delivered with POST", {});
      return true;
    }
    if (deps.stopping?.()) {
      refuseUnread(req, res, 503, "the service is stopping; the delivery is not taken (redeliver it)");
      return true;
    }
    const event = header(req, "x-github-event");
    const deliveryId = header(req, "x-github-delivery");
    const signature = header(req, "x-hub-signature-256");
    const missing = [
      !event && "x-github-event",
      !deliveryId && "x-github-delivery",
      !signature && "x-hub-signature-256",
    ].filter(Boolean);
    if (missing.length > 0) {
      refuseUnread(req, res, 400, `missing required header(s): ${missing.join(", ")}`);
      return true;
    }
    const admitted = admit(req, MAX_PAYLOAD);
    if (!admitted.ok) {
      refuseUnread(req, res, admitted.status, admitted.reason);
      return true;
    }
    const text =
      "declared" in admitted
        ? await readVerified({ ...deps, budget, timing, refused }, req, res, admitted.declared, {
            signature: signature!,
            deliveryId: deliveryId!,
            event: event!,
          })
        : null;
    if (text === null) return true;
    await store(deps, res, event!, deliveryId!, text.body, text.digest);
    return true;
  };
}

/**
 * Reads the admitted body and checks its signature on the raw bytes; the
 * text when it is signed, null when an answer was already sent. The bytes are
 * not referenced once this returns: while the delivery waits for its batched
 * insert only the text is held.
 */
async function readVerified(
  deps: IngestDeps & { budget: UnverifiedBudget; timing: BodyTiming; refused: { busy: number } },
  req: IncomingMessage,
  res: ServerResponse,
  declared: number | null,
  { signature, deliveryId, event }: { signature: string; deliveryId: string; event: string },
): Promise<{ body: string; digest: string } | null> {
  const { budget } = deps;
  const read = await readAdmitted(req, declared, budget, MAX_PAYLOAD, deps.timing);
  if (!read.ok) {
    if ((read.status === 503 || read.status === 408) && deps.refused.busy++ % 100 === 0) {
      deps.log.warn(
        {
          delivery: deliveryId,
          event,
          status: read.status,
          reason: read.reason,
          heldBytes: budget.held,
          limitBytes: budget.limits.totalBytes,
          refusedSoFar: deps.refused.busy,
        },
        "webhook refused before its signature was checked; the sender is asked to retry",
      );
    }
    if (!res.destroyed) refuseUnread(req, res, read.status, read.reason);
    return null;
  }
  const verified = verifySignature(deps.secret, read.body, signature);
  // Verified or not, the body no longer counts against the unverified budget.
  read.release();
  if (!verified) {
    deps.log.warn({ delivery: deliveryId, event }, "webhook rejected: signature does not match WEBHOOK_SECRET");
    sendError(res, 401, "signature does not match; check that the App's webhook secret equals WEBHOOK_SECRET");
    return null;
  }
  return { body: read.body.toString("utf8"), digest: createHash("sha256").update(read.body).digest("hex") };
}

/** The answer to each outcome of the store: 202 for new work, 200 for what was stored before. */
const ANSWERS: Record<Recorded, { status: number; stored: boolean; duplicate: boolean; replay: boolean }> = {
  new: { status: 202, stored: true, duplicate: false, replay: false },
  duplicate: { status: 200, stored: false, duplicate: true, replay: false },
  replay: { status: 200, stored: false, duplicate: true, replay: true },
};

async function store(
  deps: IngestDeps,
  res: ServerResponse,
  event: string,
  deliveryId: string,
  text: string,
  bodyDigest: string,
): Promise<void> {
  const facts = factsOf(text, event, deps.selfLogin?.() ?? null);
  if ("error" in facts) {
    sendError(res, 400, `payload is not valid JSON: ${facts.error}`);
    return;
  }
  const { summary, ...row } = facts;
  const asked = {
    event,
    action: facts.action,
    installationId: facts.installationId,
    handled: deps.handles(event, facts.action),
  };
  const verdict = verdictOf({
    ...asked,
    unmanaged: asksStanding(asked) && deps.unmanaged ? await deps.unmanaged(facts.installationId!) : null,
  });
  const handled = verdict.state === "pending";
  let recorded: Recorded;
  try {
    recorded = await deps.record({
      deliveryId,
      event,
      ...row,
      ...(verdict.state === "ignored"
        ? { state: "ignored", why: verdict.why, note: verdict.note, collapse: null }
        : {}),
      payload: handled ? text : summary,
      bodyDigest,
    });
  } catch (err) {
    deps.log.error(
      { delivery: deliveryId, event, err: String(err) },
      "webhook NOT stored: database unavailable; answered 503 so " +
        "GitHub marks it failed — redeliver it once the database is back",
    );
    sendError(res, 503, "delivery not stored: database unavailable; redeliver it later");
    return;
  }
  if (recorded === "new" && handled) deps.onStored();
  const { status, ...answer } = ANSWERS[recorded];
  sendJson(res, status, { delivery: deliveryId, ...answer });
}
