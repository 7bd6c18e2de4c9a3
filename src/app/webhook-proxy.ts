/**
 * Webhooks on a laptop: GitHub cannot reach localhost, so a webhook proxy channel (smee.io, or a server of
 * the same protocol) receives the deliveries and this client forwards each one, with GitHub's headers and
 * signature, to the service's own webhook path. The deliveries then go through ingest exactly as if GitHub
 * had posted them: signature verified, stored before the answer.
 */
import type { Logger } from "pino";
import { SmeeClient } from "smee-client";
import { WEBHOOK_PATH } from "../ingest/webhook.js";

export interface WebhookProxy {
  /** Where deliveries are forwarded to. */
  readonly target: string;
  stop(): Promise<void>;
}

/** The address this process can reach its own listener at. */
export function forwardTarget(host: string, port: number): string {
  const loopback = host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
  const h = loopback.includes(":") && !loopback.startsWith("[") ? `[${loopback}]` : loopback;
  return `http://${h}:${port}${WEBHOOK_PATH}`;
}

/**
 * Connects to `source` and forwards what arrives. It does not wait for the connection: a proxy that is
 * down must not keep the service from serving; the event stream reconnects by itself, and the first
 * failure is logged once with what to do.
 */
export function startWebhookProxy(o: { source: string; host: string; port: number; log: Logger }): WebhookProxy {
  const target = forwardTarget(o.host, o.port);
  const log = o.log.child({ webhookProxy: o.source });
  let warned = false;
  const client = new SmeeClient({
    source: o.source,
    target,
    logger: {
      info: (msg: unknown) => {
        if (typeof msg === "string" && msg.startsWith("Connected")) {
          warned = false;
          log.info({ target }, "webhook proxy connected: forwarding its deliveries");
        } else log.debug(String(msg));
      },
      error: (err: unknown) => {
        if (warned) return log.debug({ err }, "webhook proxy: connection error");
        warned = true;
        log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          "webhook proxy: cannot connect to WEBHOOK_PROXY_URL; retrying. Check the channel's address, " +
            "or unset WEBHOOK_PROXY_URL when GitHub can reach this service directly",
        );
      },
    },
  });
  // A failed first connection was reported through the logger above; the stream keeps reconnecting.
  client.start().catch(() => undefined);
  return { target, stop: () => client.stop() };
}
