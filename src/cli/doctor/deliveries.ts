/**
 * The pure part of `orchestra doctor`'s webhook check: GitHub's delivery log
 * of the App (one item per attempt) over a recent window, the failed attempts
 * counted, the deliveries no later attempt recovered named, and what the
 * status codes say to do.
 */
import type { HookDelivery } from "../../github/app-hooks.js";
import type { Check } from "./check.js";

/** GitHub lists an attempt as "OK" when the App answered 2xx. */
const delivered = (d: Pick<HookDelivery, "statusCode">) => d.statusCode >= 200 && d.statusCode < 300;

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

const answer = (code: number) => (code === 0 ? "no connection" : `answered ${code}`);

/** What a failing status code says to do; one line per kind of failure seen. */
export function deliveryFixes(codes: Iterable<number>): string[] {
  const fixes = new Set<string>();
  for (const code of codes) {
    if (code === 0)
      fixes.add(
        "GitHub could not connect to the webhook URL: set the App's Webhook URL to https://<public " +
          "host>/api/github/webhooks and make sure GitHub can reach that host",
      );
    else if (code === 401)
      fixes.add("the signature did not match: WEBHOOK_SECRET must equal the webhook secret in the App's settings");
    else if (code === 404 || code === 405)
      fixes.add("the webhook URL does not reach Orchestra's webhook path: it must end in /api/github/webhooks");
    else if (code >= 500)
      fixes.add(
        "the service could not take them (stopped, or its database unavailable): see its log and orchestra status; " +
          "once it is healthy its sweep asks GitHub to redeliver what it missed (for 3 days)",
      );
    else fixes.add(`the service refused them (${code}): see its log and orchestra deliveries`);
  }
  return [...fixes];
}

export interface DeliveryLog {
  /** Attempts read, any order. */
  items: HookDelivery[];
  /** False when the reading stopped (page cap) before the window's start: counts are "at least". */
  complete: boolean;
}

/**
 * ok: no failed attempt in the window. warn: attempts failed, but each of
 * those deliveries arrived on a later attempt. fail: some delivery's latest
 * attempt failed, so Orchestra has not seen that event.
 */
export function deliveriesCheck(log: DeliveryLog, now: Date, windowMs: number, shown = 5): Check {
  const name = "webhook deliveries";
  const hours = Math.round(windowMs / 3_600_000);
  const since = now.getTime() - windowMs;
  const recent = log.items.filter((d) => d.deliveredAt.getTime() >= since).sort((a, b) => b.id - a.id);
  const atLeast = log.complete ? "" : "at least ";
  if (recent.length === 0) return { name, status: "ok", detail: `no deliveries in the last ${hours} h` };
  const failed = recent.filter((d) => !delivered(d));
  if (failed.length === 0)
    return {
      name,
      status: "ok",
      detail: `${atLeast}${recent.length} delivery attempt(s) in the last ${hours} h, none failed`,
    };
  const latest = new Map<string, HookDelivery>();
  for (const d of recent) if (!latest.has(d.guid)) latest.set(d.guid, d);
  const lost = [...latest.values()].filter((d) => !delivered(d));
  const lines = [
    `${atLeast}${failed.length} of ${recent.length} delivery attempt(s) in the last ${hours} h failed; ` +
      `${lost.length} ${lost.length === 1 ? "delivery has" : "deliveries have"} not arrived since`,
    ...failed
      .slice(0, shown)
      .map(
        (d) =>
          `${iso(d.deliveredAt)}  ${d.event}${d.action ? `.${d.action}` : ""}  ${answer(d.statusCode)}` +
          `  ${d.guid}${delivered(latest.get(d.guid)!) ? "  (arrived later)" : ""}`,
      ),
    ...(failed.length > shown ? [`… ${failed.length - shown} more failed attempt(s)`] : []),
  ];
  const fix = deliveryFixes(new Set(failed.map((d) => d.statusCode))).join("; ");
  if (lost.length === 0) return { name, status: "warn", detail: lines.join("\n"), fix };
  return { name, status: "fail", detail: lines.join("\n"), fix };
}
