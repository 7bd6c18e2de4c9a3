/** What ingest reads from a delivery's payload for its inbox row, and the summary kept of an ignored one. */
import { installationIdOf, taskKeyOf } from "../inbox/task-key.js";
import { collapseOf } from "../inbox/collapse.js";

export interface Facts {
  action: string | null;
  installationId: string | null;
  taskKey: string;
  /** What the delivery says, when a run of them on its key is processed once (src/inbox/collapse.ts). */
  collapse: string | null;
  /** What is kept of a delivery stored as ignored: who, where and what, never its body. */
  summary: string;
}

/** A stored summary of an ignored delivery stays under this many bytes. */
export const SUMMARY_MAX_BYTES = 1024;

const field = (o: unknown, key: string): unknown =>
  o !== null && typeof o === "object" ? (o as Record<string, unknown>)[key] : undefined;
const short = (v: unknown, max = 200): string | number | undefined =>
  typeof v === "number" ? v : typeof v === "string" ? v.slice(0, max) : undefined;

/**
 * The record kept of a delivery stored as ignored: the event's where and who,
 * and the body's size. The body itself (tens of kilobytes for a push or a
 * workflow run) is not stored: nothing will ever read it.
 */
export function summaryOf(payload: Record<string, unknown>, bytes: number): string {
  const summary = {
    summary: "ignored delivery: the body is not kept",
    bytes,
    action: short(payload["action"]),
    installation: short(field(payload["installation"], "id")),
    repository: short(field(payload["repository"], "full_name")),
    sender: short(field(payload["sender"], "login")),
    number: short(field(payload["issue"] ?? payload["pull_request"], "number")),
  };
  const text = JSON.stringify(summary);
  return Buffer.byteLength(text) <= SUMMARY_MAX_BYTES ? text : JSON.stringify({ summary: summary.summary, bytes });
}

/**
 * What the inbox row needs from the payload. Synchronous on purpose: the
 * parsed object (many times the size of the text) is garbage as soon as this
 * returns, instead of living on across the await for the insert.
 */
export function factsOf(text: string, event: string, self: string | null): Facts | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return { error: "payload is not a JSON object" };
  const payload = parsed as Record<string, unknown>;
  const action = typeof payload["action"] === "string" ? payload["action"] : null;
  return {
    action,
    collapse: collapseOf(event, action, payload, self),
    installationId: installationIdOf(payload) ?? null,
    taskKey: taskKeyOf(payload),
    summary: summaryOf(payload, Buffer.byteLength(text)),
  };
}
