import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { BodyTooLarge, readBody } from "./respond.js";
import { HttpError } from "./router.js";

/** Reads a JSON body and validates it; 400 with the zod issue list when it does not fit. */
export async function jsonBody<S extends z.ZodType>(
  req: IncomingMessage,
  schema: S,
  limit = 256 * 1024,
): Promise<z.output<S>> {
  return (await jsonRequest(req, schema, limit)).data;
}

/** A validated JSON body and the text it came as (an Idempotency-Key is bound to the exact body). */
export async function jsonRequest<S extends z.ZodType>(
  req: IncomingMessage,
  schema: S,
  limit = 256 * 1024,
): Promise<{ data: z.output<S>; raw: string }> {
  let text: string;
  try {
    text = (await readBody(req, limit)).toString("utf8");
  } catch (err) {
    throw new HttpError(
      err instanceof BodyTooLarge ? 413 : 400,
      err instanceof Error ? err.message : "unreadable body",
    );
  }
  let data: unknown;
  try {
    data = text.trim() === "" ? {} : JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const r = schema.safeParse(data);
  if (!r.success) {
    const issues = r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message, code: i.code }));
    // The first issues in the message too: a client that logs only `error` still learns what to fix.
    const named = issues.slice(0, 3).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
    throw new HttpError(
      400,
      `body does not match the expected shape: ${named.join("; ")}` +
        `${issues.length > 3 ? ` (and ${issues.length - 3} more)` : ""}`,
      { issues },
    );
  }
  return { data: r.data, raw: text };
}
