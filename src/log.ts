import { pino, type Logger } from "pino";
import type { ClaimedDelivery } from "./inbox/store.js";

/**
 * The service logger. Request logging includes headers; the ones carrying
 * credentials or signatures are redacted, because logs travel further than
 * secrets should.
 *
 * Levels: each processed webhook delivery gets one `info` line; each HTTP
 * request (webhook posts, worker and admin API calls) one `debug` line.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    name: "orchestra",
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        'req.headers["x-hub-signature-256"]',
        'req.headers["x-hub-signature"]',
        "req.headers.cookie",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}

/** Wraps the inbox's dispatch so that every delivery it finishes gets its one `info` line. */
export function logEachDelivery<R>(
  dispatch: (d: ClaimedDelivery) => Promise<R>,
  log: Pick<Logger, "info">,
): (d: ClaimedDelivery) => Promise<R> {
  return async (d) => {
    const started = Date.now();
    const result = await dispatch(d);
    log.info(
      {
        delivery: d.deliveryId,
        event: d.action ? `${d.event}.${d.action}` : d.event,
        taskKey: d.taskKey,
        attempt: d.attempts,
        result,
        ms: Date.now() - started,
      },
      "delivery processed",
    );
    return result;
  };
}
