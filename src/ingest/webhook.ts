/**
 * Durable webhook ingest: `POST /api/github/webhooks`. The signature is checked,
 * the delivery is stored in the inbox, and only then is GitHub answered 2xx.
 * A delivery that could not be stored gets a 5xx, so GitHub shows it as failed
 * and it can be redelivered; it is never acknowledged and lost.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { installationIdOf, taskKeyOf } from "../inbox/task-key.js";
import type { IncomingDelivery } from "../inbox/store.js";
import { BodyTooLarge, pathOf, readBody, sendError, sendJson } from "../http/respond.js";

export const WEBHOOK_PATH = "/api/github/webhooks";

/** GitHub caps webhook payloads at 25 MB. */
const MAX_PAYLOAD = 25 * 1024 * 1024;

export function sign(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export function verifySignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header || !header.startsWith("sha256=")) return false;
  const expected = Buffer.from(sign(secret, body));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface IngestDeps {
  secret: string;
  record(d: IncomingDelivery): Promise<boolean>;
  /** Whether any capability handles this event/action; others are stored as ignored. */
  handles(event: string, action: string | null): boolean;
  /** Called after a new delivery that needs processing is stored. */
  onStored(): void;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function webhookHandler(deps: IngestDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (pathOf(req) !== WEBHOOK_PATH) return false;
    if (req.method !== "POST") {
      sendError(res, 405, "webhooks are delivered with POST", {}); 
      return true;
    }
    const event = header(req, "x-github-event");
    const deliveryId = header(req, "x-github-delivery");
    const signature = header(req, "x-hub-signature-256");
    const missing = [!event && "x-github-event", !deliveryId && "x-github-delivery", !signature && "x-hub-signature-256"].filter(Boolean);
    if (missing.length > 0) {
      req.resume();
      sendError(res, 400, `missing required header(s): ${missing.join(", ")}`);
      return true;
    }
    let body: Buffer;
    try {
      body = await readBody(req, MAX_PAYLOAD);
    } catch (err) {
      sendError(res, err instanceof BodyTooLarge ? 413 : 400, err instanceof Error ? err.message : "unreadable body");
      return true;
    }
    if (!verifySignature(deps.secret, body, signature)) {
      deps.log.warn({ delivery: deliveryId, event }, "webhook rejected: signature does not match WEBHOOK_SECRET");
      sendError(res, 401, "signature does not match; check that the App's webhook secret equals WEBHOOK_SECRET");
      return true;
    }
    let payload: Record<string, unknown>;
    const text = body.toString("utf8");
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("payload is not a JSON object");
      payload = parsed as Record<string, unknown>;
    } catch (err) {
      sendError(res, 400, `payload is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
      return true;
    }
    const action = typeof payload["action"] === "string" ? payload["action"] : null;
    let isNew: boolean;
    const handled = deps.handles(event!, action);
    try {
      isNew = await deps.record({
        deliveryId: deliveryId!,
        state: handled ? "pending" : "ignored",
        event: event!,
        action,
        installationId: installationIdOf(payload) ?? null,
        taskKey: taskKeyOf(payload),
        payload: text,
      });
    } catch (err) {
      deps.log.error({ delivery: deliveryId, event, err: String(err) }, "webhook NOT stored: database unavailable; answered 503 so GitHub marks it failed — redeliver it once the database is back");
      sendError(res, 503, "delivery not stored: database unavailable; redeliver it later");
      return true;
    }
    if (isNew && handled) deps.onStored();
    sendJson(res, isNew ? 202 : 200, { delivery: deliveryId, stored: isNew, duplicate: !isNew });
    return true;
  };
}
